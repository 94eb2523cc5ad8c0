import PacerCore

extension ReplayReport {
    /// The `pacerctl replay --json` document. Field names and formats are a public interface
    /// (README "Replay output"): change them only on purpose.
    public func json() -> String {
        var w = JSONWriter(capacity: 128 * (samples.count + 16))
        w.beginObject()

        w.beginObject("summary")
        w.number("distance_m", summary.distance, digits: 2)
        w.number("moving_time_s", summary.movingTime, digits: 3)
        w.number("elapsed_time_s", summary.elapsedTime, digits: 3)
        w.number("avg_pace_s_per_km", summary.averagePacePerKm, digits: 1)
        w.number("max_speed_mps", summary.maxSpeed, digits: 3)
        w.number("hr_avg", summary.heartRateAverage, digits: 1)
        w.integer("hr_max", summary.heartRateMax)
        w.time("start_time", summary.startTime)
        w.time("end_time", summary.endTime)
        w.endObject()

        w.beginArray("samples")
        for s in samples {
            w.beginObject()
            w.time("time", s.time)
            w.number("lat", s.coordinate.latitude, digits: 7)
            w.number("lon", s.coordinate.longitude, digits: 7)
            w.number("speed_mps", s.speed, digits: 3)
            w.number("distance_m", s.distance, digits: 2)
            w.bool("moving", s.moving)
            w.endObject()
        }
        w.endArray()

        w.beginArray("splits")
        for split in splits {
            w.beginObject()
            w.integer("index", split.index)
            w.number("distance_m", split.distance, digits: 2)
            w.number("time_s", split.time, digits: 3)
            w.number("pace_s_per_km", split.pacePerKm, digits: 1)
            w.time("end_time", split.endTime)
            w.endObject()
        }
        w.endArray()

        w.beginArray("laps")
        for lap in laps {
            w.beginObject()
            w.integer("index", lap.index)
            w.number("distance_m", lap.distance, digits: 2)
            w.number("time_s", lap.time, digits: 3)
            w.number("pace_s_per_km", lap.pacePerKm, digits: 1)
            w.endObject()
        }
        w.endArray()

        w.beginArray("cues")
        for cue in cues {
            w.beginObject()
            w.time("time", cue.time)
            w.string("kind", cue.kind.rawValue)
            w.string("priority", "\(cue.priority)")
            w.string("text", cue.text)
            w.endObject()
        }
        w.endArray()
        w.beginArray("alerts")
        for alert in alerts {
            w.beginObject()
            w.time("time", alert.raisedAt)
            w.string("kind", alert.kind.rawValue)
            w.time("first_out_of_range", alert.firstOutOfRange)
            w.number("confirmation_s", alert.confirmationSeconds, digits: 3)
            w.integer("heart_rate", alert.heartRate)
            w.string("trend", alert.trend?.direction.rawValue)
            w.number("lat", alert.position?.latitude, digits: 7)
            w.number("lon", alert.position?.longitude, digits: 7)
            w.endObject()
        }
        w.endArray()

        w.beginArray("warnings")
        for warning in warnings {
            w.beginObject()
            w.time("time", warning.time)
            w.string("kind", warning.kind)
            w.string("text", warning.text)
            w.endObject()
        }
        w.endArray()

        if let race { race.write(into: &w) }

        w.beginObject("input")
        w.integer("gps_lines", stats.gpsLines)
        w.integer("non_json_lines", stats.nonJSONLines)
        w.integer("malformed_lines", stats.malformedLines)
        w.integer("tpv", stats.tpvReports)
        w.integer("accepted_epochs", counts.accepted)
        w.beginObject("skipped")
        for reason in FixSkipReason.allCases {
            w.integer(reason.rawValue, counts.count(reason))
        }
        w.endObject()
        w.integer("gated_positions", counts.gatedPositions)
        w.integer("time_jumps", counts.timeJumps)
        w.integer("bridged_gaps", counts.bridgedGaps)
        w.integer("hr_samples", stats.heartRateSamples)
        w.integer("hrm_lines", stats.hrmLines)
        w.integer("hrm_malformed", stats.hrmMalformed)
        w.endObject()

        w.endObject()
        return w.output + "\n"
    }
}

extension RaceReport {
    /// `"race"` in `pacerctl replay --course --json` (README "Races"): present only with a course.
    func write(into w: inout JSONWriter) {
        w.beginObject("race")
        w.number("course_m", courseLength, digits: 2)
        w.integer("stages", stageCount)
        w.time("gun_time", gunTime)
        w.time("start_time", startTime)
        w.time("finish_time", result?.finishTime)
        w.number("gun_s", result?.gunSeconds, digits: 3)
        w.number("net_s", result?.netSeconds, digits: 3)
        w.integer("off_course", offCourseCount)
        w.beginArray("events")
        for event in events {
            w.beginObject()
            switch event {
            case .started(let time):
                w.time("time", time)
                w.string("kind", "started")
            case .stage(let index, let time):
                w.time("time", time)
                w.string("kind", "stage")
                w.integer("stage", index)
            case .toGo(let meters, let time):
                w.time("time", time)
                w.string("kind", "to_go")
                w.number("to_go_m", meters, digits: 1)
            case .offCourse(let time, let meters):
                w.time("time", time)
                w.string("kind", "off_course")
                w.number("from_course_m", meters, digits: 1)
            case .backOnCourse(let time):
                w.time("time", time)
                w.string("kind", "back_on_course")
            case .finished(let result):
                w.time("time", result.finishTime)
                w.string("kind", "finished")
                w.number("gun_s", result.gunSeconds, digits: 3)
                w.number("net_s", result.netSeconds, digits: 3)
            case .progress(let p):
                w.time("time", p.time)
                w.string("kind", "progress")
            }
            w.endObject()
        }
        w.endArray()
        w.beginArray("progress")
        for p in progress {
            w.beginObject()
            w.time("time", p.time)
            w.number("m", p.meters, digits: 2)
            w.number("to_go_m", p.toGo, digits: 2)
            w.number("from_course_m", p.fromCourse, digits: 2)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }
}
