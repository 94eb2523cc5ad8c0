import PacerCore

/// A step the workout file format cannot say exactly: its field ("step[3].pace") and why.
public typealias WorkoutWriteError = FieldProblem

extension WorkoutFile {
    /// The workout as a workout file (config/workouts/README.md) that `parse` reads back equal:
    /// base units (metres, seconds), a pace as "M:SS-M:SS" per kilometre, a repeat as a
    /// `[[step]]` counting the steps after it. `header` lines go first, as comments. A pace that
    /// is not a whole number of seconds cannot be written exactly ("M:SS"), so it is an error
    /// rather than a silently different workout.
    public static func text(of workout: Workout, header: [String] = []) throws(WorkoutWriteError) -> String {
        var lines = header.map { "# " + oneLine($0) }
        lines.append("name = " + quoted(workout.name))
        var index = 0
        for item in workout.items {
            switch item {
            case .step(let step):
                index += 1
                lines += try stepLines(step, index: index)
            case .repeated(let times, let steps):
                index += 1
                lines += ["", "[[step]]", "type = \"repeat\"", "times = \(times)", "steps = \(steps.count)"]
                for step in steps {
                    index += 1
                    lines += try stepLines(step, index: index)
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func stepLines(_ step: WorkoutStep, index: Int) throws(WorkoutWriteError) -> [String] {
        var lines = ["", "[[step]]", "type = \"\(step.kind.rawValue)\""]
        switch step.end {
        case .distance(let meters): lines.append("distance_m = \(number(meters))")
        case .time(let seconds): lines.append("time_s = \(number(seconds))")
        case .lapButton: lines.append("lap = true")
        }
        switch step.target {
        case .pace(let fastest, let slowest)?:
            for pace in [fastest, slowest] where pace != pace.rounded() {
                throw WorkoutWriteError(field: "step[\(index)].pace", problem: "\(number(pace)) s per km is not a whole number of seconds, which a workout file (M:SS) cannot hold")
            }
            lines.append("pace = \"\(PaceText.format(fastest))-\(PaceText.format(slowest))\"")
        case .heartRateZone(let zone)?: lines.append("hr_zone = \(zone)")
        case .heartRate(let low, let high)?: lines.append("hr_bpm = [\(low), \(high)]")
        case nil: break
        }
        return lines
    }

    /// Shortest text that reads back as the same Double ("400", "412.5").
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    /// A TOML basic string with the escapes the reader knows; other control characters become spaces.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.unicodeScalars.append(scalar.properties.generalCategory == .control ? " " : scalar)
            }
        }
        return out + "\""
    }

    private static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
    }
}
