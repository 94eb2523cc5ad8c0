import PacerCore
import PacerReplay
import Store

/// "My runs" as people and programs read them: the list and one run's detail, as JSON or as
/// text tables. pacerctl prints them from a store file; pacerd sends them over its socket.
public enum RunViews {
    public static func listJSON(_ runs: [StoredRun], total: Int) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.integer("total", total)
        w.beginArray("runs")
        for run in runs { w.run(nil, run) }
        w.endArray()
        w.endObject()
        return w.output
    }

    public static func listText(_ runs: [StoredRun], total: Int, page: Int, limit: Int) -> String {
        if runs.isEmpty {
            return total == 0 ? "No runs recorded yet." : "No runs on page \(page) (\(total) runs in all)."
        }
        var lines = ["  run  date                  distance    moving      pace  state"]
        for run in runs {
            let iso = run.startTime.iso8601
            let date = String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(5)) + "Z"
            lines.append(pad(String(run.id), 5) + "  " + date + "  " + pad(km(run.distance), 9) + "  "
                  + pad(clock(run.movingTime), 8) + "  " + pad(run.averagePacePerKm.map { clock($0) } ?? "-", 8)
                  + "  " + run.state.rawValue + (run.uploadState == .uploaded ? "" : ", not uploaded"))
        }
        let pages = (total + limit - 1) / limit
        if pages > 1 { lines.append("page \(page) of \(pages) (\(total) runs)") }
        return lines.joined(separator: "\n")
    }

    public static func detailJSON(_ detail: RunDetail) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.run("run", detail.run)
        w.beginArray("splits")
        for s in detail.splits {
            w.beginObject()
            w.integer("index", s.index)
            w.number("distance_m", s.distance, digits: 2)
            w.number("time_s", s.time, digits: 3)
            w.number("pace_s_per_km", s.pacePerKm, digits: 1)
            w.endObject()
        }
        w.endArray()
        w.beginArray("laps")
        for l in detail.laps {
            w.beginObject()
            w.integer("index", l.index)
            w.number("distance_m", l.distance, digits: 2)
            w.number("time_s", l.time, digits: 3)
            w.endObject()
        }
        w.endArray()
        w.beginObject("heart_rate")
        w.integer("readings", detail.heartRate?.readings ?? 0)
        w.number("avg", detail.heartRate?.average, digits: 1)
        w.integer("min", detail.heartRate?.minimum)
        w.integer("max", detail.heartRate?.maximum)
        w.endObject()
        w.integer("samples", detail.sampleCount)
        w.endObject()
        return w.output
    }

    public static func detailText(_ detail: RunDetail) -> String {
        let run = detail.run
        var lines = [
            "Run \(run.id)  \(run.startTime.iso8601)  (\(run.state.rawValue), upload \(run.uploadState.rawValue))",
            "Distance      \(km(run.distance))",
            "Moving time   \(clock(run.movingTime))",
            "Elapsed time  \(clock(run.elapsedTime))",
            "Average pace  \(run.averagePacePerKm.map { clock($0) + " /km" } ?? "-")",
        ]
        if let followed = run.followed {
            lines.append("Workout       \(followed.name)" + (followed.plannedSessionID.map { " (planned session \($0))" } ?? ""))
        }
        if let hr = detail.heartRate {
            lines.append("Heart rate    avg \(Int(hr.average.rounded())), min \(hr.minimum), max \(hr.maximum) bpm (\(hr.readings) readings)")
        }
        if !detail.splits.isEmpty {
            lines.append("")
            lines.append("  #   distance      time      pace")
            for s in detail.splits {
                lines.append(pad(String(s.index), 3) + "  " + pad(km(s.distance), 9) + "  " + pad(clock(s.time), 8) + "  "
                      + pad(s.pacePerKm.map { clock($0) + " /km" } ?? "-", 11))
            }
        }
        return lines.joined(separator: "\n")
    }

    public static func km(_ metres: Double) -> String { JSONWriter.fixed(metres / 1000, digits: 2) + " km" }
    public static func clock(_ seconds: Double) -> String { ReplayReport.clock(seconds) }
    public static func pad(_ text: String, _ width: Int) -> String { ReplayReport.padLeft(text, width) }
}

extension JSONWriter {
    mutating func run(_ key: String? = nil, _ run: StoredRun) {
        beginObject(key)
        integer("id", Int(run.id))
        string("uuid", run.uuid)
        string("state", run.state.rawValue)
        time("start_time", run.startTime)
        time("end_time", run.endTime)
        number("distance_m", run.distance, digits: 2)
        number("moving_time_s", run.movingTime, digits: 3)
        number("elapsed_time_s", run.elapsedTime, digits: 3)
        number("avg_pace_s_per_km", run.averagePacePerKm, digits: 1)
        number("max_speed_mps", run.maxSpeed, digits: 3)
        number("hr_avg", run.heartRateAverage, digits: 1)
        integer("hr_max", run.heartRateMax)
        string("upload_state", run.uploadState.rawValue)
        bool("raw_pruned", run.rawPruned)
        string("workout_name", run.followed?.name)
        string("planned_session_id", run.followed?.plannedSessionID)
        endObject()
    }
}

private func km(_ metres: Double) -> String { RunViews.km(metres) }
private func clock(_ seconds: Double) -> String { RunViews.clock(seconds) }
private func pad(_ text: String, _ width: Int) -> String { RunViews.pad(text, width) }
