import PacerCore

extension ReplayReport {
    /// The human-readable summary and splits table `pacerctl replay` prints without `--json`.
    public func text() -> String {
        var out = ""
        out += "Distance      \(JSONWriter.fixed(summary.distance / 1000, digits: 2)) km\n"
        out += "Moving time   \(Self.clock(summary.movingTime))\n"
        out += "Elapsed time  \(Self.clock(summary.elapsedTime))\n"
        out += "Average pace  \(summary.averagePacePerKm.map { Self.clock($0) + " /km" } ?? "-")\n"
        out += "Max speed     \(JSONWriter.fixed(summary.maxSpeed, digits: 2)) m/s\n"
        if let avg = summary.heartRateAverage, let max = summary.heartRateMax {
            out += "Heart rate    avg \(Int(avg.rounded())), max \(max) bpm\n"
        }
        out += "GPS epochs    \(counts.accepted) accepted"
        let skipped = FixSkipReason.allCases.compactMap { r in counts.count(r) > 0 ? "\(counts.count(r)) \(r.rawValue)" : nil }
        if !skipped.isEmpty { out += ", skipped: " + skipped.joined(separator: ", ") }
        out += "\n"
        if !splits.isEmpty {
            out += "\n  #   distance      time      pace\n"
            for split in splits {
                let index = Self.padLeft(String(split.index), 3)
                let distance = Self.padLeft(JSONWriter.fixed(split.distance / 1000, digits: 2) + " km", 10)
                let time = Self.padLeft(Self.clock(split.time), 9)
                let pace = Self.padLeft(split.pacePerKm.map { Self.clock($0) + " /km" } ?? "-", 12)
                out += "\(index)  \(distance) \(time) \(pace)\n"
            }
        }
        if let race { out += race.text() }
        if !cues.isEmpty {
            out += "\n  cues (\(cues.count))\n"
            let start = cues[0].time
            for cue in cues {
                out += "  \(Self.padLeft(Self.clock(cue.time.seconds(since: start)), 8))  \(cue.kind.rawValue): \(cue.text)\n"
            }
        }
        for warning in warnings {
            out += "\nwarning: \(warning.text)"
        }
        if !warnings.isEmpty { out += "\n" }
        return out
    }

    /// A race time to the tenth: "3:44:08.3", "41:58.0".
    public static func raceClock(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        return clock(Double(tenths / 10)) + "." + String(tenths % 10)
    }

    public static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let h = total / 3600, m = total / 60 % 60, s = total % 60
        let mm = m < 10 ? "0\(m)" : "\(m)", ss = s < 10 ? "0\(s)" : "\(s)"
        return h > 0 ? "\(h):\(mm):\(ss)" : "\(m):\(ss)"
    }

    public static func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}

extension RaceReport {
    /// The race part of `pacerctl replay --course` without `--json`.
    func text() -> String {
        var out = "\nRace course   \(JSONWriter.fixed(courseLength / 1000, digits: 3)) km"
        if stageCount > 0 { out += ", \(stageCount) stage\(stageCount == 1 ? "" : "s")" }
        out += "\nGun           \(gunTime?.iso8601 ?? "- (none given)")\n"
        out += "Started       \(startTime?.iso8601 ?? "- (start line not crossed)")\n"
        if let result {
            out += "Finished      \(result.finishTime.iso8601)\n"
            out += "Gun time      \(result.gunSeconds.map { ReplayReport.raceClock($0) } ?? "-")\n"
            out += "Net time      \(ReplayReport.raceClock(result.netSeconds))\n"
        } else {
            out += "Finished      - (arrival not reached)\n"
        }
        if let last = progress.last {
            out += "Progress      \(JSONWriter.fixed(last.meters, digits: 1)) m at \(last.time.iso8601), \(JSONWriter.fixed(last.toGo, digits: 1)) m to go\n"
        }
        out += "Off course    \(offCourseCount) time\(offCourseCount == 1 ? "" : "s")\n"
        return out
    }
}
