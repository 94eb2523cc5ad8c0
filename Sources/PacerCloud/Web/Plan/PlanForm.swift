import CloudModel
import Foundation
import PacerContract
import PacerCore

/// The session form: a name, a date, weekdays to repeat on for some weeks, and step rows. A row
/// is a step (its kind, what ends it, a target) or a repeat (its rounds and how many of the rows
/// after it it holds, as a workout file's repeat counts the steps after it). The rows become the
/// contract's `[PlanStep]` and go through `PlanSteps.workout`, so the form can say exactly what
/// the device's workout can, and a refusal names the form field and the step's JSON path.
struct PlanForm {
    /// Rows a form may have (blank rows are skipped).
    static let maxRows = 100
    /// A form of `maxRows` full rows fits.
    static let maxBytes = 64 * 1024
    /// Blank rows shown under the session's own, for a browser without script.
    static let blankRows = 4
    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let kinds = [("", "—"), ("warmup", "Warm-up"), ("run", "Run"), ("recover", "Recover"), ("rest", "Rest"),
                        ("cooldown", "Cool-down"), ("repeat", "Repeat")]
    static let ends = [("distance", "Distance"), ("time", "Time"), ("lap", "Lap button")]
    /// Paces are typed and shown per the viewer's unit (`PageLayout.units`), stored per km.
    static var targets: [(String, String)] {
        [("none", "No target"), ("pace", "Pace " + PageLayout.units.paceSuffix), ("zone", "HR zone"), ("bpm", "HR bpm")]
    }

    /// One row as typed (kept as text, so a refused form is shown again as it was sent).
    struct Row: Equatable {
        var type = "", end = "distance", amount = "", target = "none", value = "", times = "", block = ""

        var isBlank: Bool { type.isEmpty }
    }

    var name = ""
    var date = ""
    /// Bit 0 Monday … bit 6 Sunday.
    var weekdays = 0
    var weeks = ""
    var rows: [Row] = []

    struct Refusal: Error {
        var message: String
    }

    // MARK: reading

    init() {}

    init(fields: WebForm) {
        name = fields["name"] ?? ""
        date = (fields["date"] ?? "").trimmingSpaces
        weeks = (fields["weeks"] ?? "").trimmingSpaces
        for (index, _) in Self.weekdayNames.enumerated() where !(fields["day\(index + 1)"] ?? "").isEmpty { weekdays |= 1 << index }
        for number in 1...Self.maxRows {
            let prefix = "step\(number)_"
            guard let type = fields[prefix + "type"] else { continue }
            rows.append(Row(type: type.trimmingSpaces, end: fields[prefix + "end"] ?? "distance", amount: fields[prefix + "amount"] ?? "",
                            target: fields[prefix + "target"] ?? "none", value: fields[prefix + "value"] ?? "",
                            times: fields[prefix + "times"] ?? "", block: fields[prefix + "block"] ?? ""))
        }
        // Rows are numbered again from 1 when shown; blank ones go.
        rows.removeAll(where: \.isBlank)
    }

    /// The session the form describes, for `accountID` with `id`; a refusal names the field.
    func session(id: String, accountID: String) throws(Refusal) -> PlanSession {
        let cleaned = NoticeText.clean(name)
        guard !cleaned.isEmpty else { throw Refusal(message: "name: give the session a name (it is said on the device)") }
        guard cleaned.count <= PlanSteps.maxNameLength else {
            throw Refusal(message: "name: at most \(PlanSteps.maxNameLength) characters, got \(cleaned.count)")
        }
        guard PlanDates.day(date) != nil else { throw Refusal(message: "date: '\(date.prefix(20))' is not a date like 2026-05-10") }
        var weekCount = 0
        if weekdays != 0 {
            guard let value = Int(weeks), PlanSession.weeksRange.contains(value) else {
                throw Refusal(message: "weeks: repeating needs the number of weeks, from 1 to \(PlanSession.weeksRange.upperBound)"
                                  + (weeks.isEmpty ? "" : "; got '\(weeks.prefix(10))'"))
            }
            weekCount = value
        }
        let steps = try planSteps()
        do {
            _ = try PlanSteps.workout(name: cleaned, steps: steps.steps)
        } catch {
            // The form's field, never the steps' internal path ("steps[0].distance_m"): the page words it as its label.
            throw Refusal(message: Self.formField(error.field, rows: steps.rows) + ": \(error.problem)")
        }
        let json = (try? JSONInput.canonical(steps.steps)) ?? "[]"
        return PlanSession(id: id, accountID: accountID, name: cleaned, stepsJSON: json, startDate: date, weekdays: weekdays, weeks: weekCount)
    }

    /// The rows as plan steps, each repeat holding the rows it counts; with the row number of
    /// every step (top level, then its block's) to name a refused one.
    func planSteps() throws(Refusal) -> (steps: [PlanStep], rows: [[Int]]) {
        var steps: [PlanStep] = []
        var numbers: [[Int]] = []
        var index = 0
        while index < rows.count {
            let row = rows[index], number = index + 1
            index += 1
            guard row.type == "repeat" else {
                steps.append(try Self.step(row, number: number))
                numbers.append([number])
                continue
            }
            guard let times = Int(row.times.trimmingSpaces) else {
                throw Refusal(message: "step\(number)_times: '\(row.times.prefix(10))' is not a number of rounds like 6")
            }
            guard let count = Int(row.block.trimmingSpaces), PlanSteps.blockRange.contains(count) else {
                throw Refusal(message: "step\(number)_block: '\(row.block.prefix(10))' is not how many of the next steps it repeats (1 to "
                                  + "\(PlanSteps.blockRange.upperBound))")
            }
            guard index + count <= rows.count else {
                throw Refusal(message: "step\(number)_block: the repeat holds the next \(count) steps, but \(rows.count - index) follow it")
            }
            var block: [PlanStep] = []
            var blockNumbers = [number]
            for inner in index..<index + count {
                if rows[inner].type == "repeat" {
                    // Refused by PlanSteps, which names it.
                    block.append(PlanStep(type: "repeat"))
                } else {
                    block.append(try Self.step(rows[inner], number: inner + 1))
                }
                blockNumbers.append(inner + 1)
            }
            index += count
            steps.append(PlanStep(type: "repeat", times: times, steps: block))
            numbers.append(blockNumbers)
        }
        return (steps, numbers)
    }

    private static func step(_ row: Row, number: Int) throws(Refusal) -> PlanStep {
        let field = "step\(number)_"
        guard kinds.contains(where: { $0.0 == row.type }) else {
            throw Refusal(message: field + "type: choose warm-up, run, recover, rest, cool-down or repeat")
        }
        var step = PlanStep(type: row.type)
        let amount = row.amount.trimmingSpaces
        switch row.end {
        case "distance":
            guard let meters = distance(amount) else {
                throw Refusal(message: field + "amount: '\(amount.prefix(20))' is not a distance like 400 m, 2 km or 3 mi")
            }
            step.distance_m = meters
        case "time":
            guard let seconds = duration(amount) else {
                throw Refusal(message: field + "amount: '\(amount.prefix(20))' is not a time like 10 (minutes), 1:30 or 1:05:00")
            }
            step.time_s = seconds
        case "lap": step.lap = true
        default: throw Refusal(message: field + "end: choose distance, time or lap button")
        }
        let value = row.value.trimmingSpaces
        switch row.target {
        case "none": break
        case "pace":
            let unit = PageLayout.units
            guard let range = pair(value, paceSeconds), range.0 != range.1 else {
                throw Refusal(message: field + "value: '\(value.prefix(20))' is not a pace range like \(Self.paceExample) (per \(unit.symbol))")
            }
            // Per km as stored, to a tenth of a second: shown again per mile it reads as typed.
            let perKm = { (pace: Int) in (unit.secondsPerKm(pace: Double(pace)) * 10).rounded() / 10 }
            step.pace_s_per_km = [perKm(min(range.0, range.1)), perKm(max(range.0, range.1))]
        case "zone":
            guard let zone = Int(value.uppercased().hasPrefix("Z") ? String(value.dropFirst()) : value) else {
                throw Refusal(message: field + "value: '\(value.prefix(20))' is not a heart-rate zone 1 to 5")
            }
            step.hr_zone = zone
        case "bpm":
            guard let range = pair(value, { Int($0) }) else {
                throw Refusal(message: field + "value: '\(value.prefix(20))' is not a heart-rate range like 140-150")
            }
            step.hr_bpm = [min(range.0, range.1), max(range.0, range.1)]
        default: throw Refusal(message: field + "target: choose no target, pace, HR zone or HR bpm")
        }
        return step
    }

    /// "400", "400 m", "2 km", "1,5 km", "3 mi", "1 mile" → metres.
    static func distance(_ text: String) -> Double? {
        var number = text.lowercased().replacingOccurrences(of: ",", with: ".").replacingOccurrences(of: " ", with: "")
        var scale = 1.0
        if let suffix = ["miles", "mile", "mi"].first(where: { number.hasSuffix($0) }) {
            number.removeLast(suffix.count)
            scale = DistanceUnit.metresPerMile
        } else if number.hasSuffix("km") {
            number.removeLast(2)
            scale = 1_000
        } else if number.hasSuffix("m") {
            number.removeLast()
        }
        guard let value = Double(number), value.isFinite else { return nil }
        return value * scale
    }

    /// "10" (minutes), "90 s", "1:30", "1:05:00" → seconds.
    static func duration(_ text: String) -> Double? {
        // "1e308" minutes is a finite number of minutes but not of seconds.
        parsedDuration(text).flatMap { $0.isFinite ? $0 : nil }
    }

    private static func parsedDuration(_ text: String) -> Double? {
        let compact = text.lowercased().replacingOccurrences(of: " ", with: "")
        if compact.hasSuffix("s"), let seconds = Double(compact.dropLast()), seconds.isFinite { return seconds }
        if compact.hasSuffix("min"), let minutes = Double(compact.dropLast(3)), minutes.isFinite { return minutes * 60 }
        if !compact.contains(":") { return Double(compact).flatMap { $0.isFinite ? $0 * 60 : nil } }
        let parts = compact.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil && $0! >= 0 }), parts.dropFirst().allSatisfy({ $0! < 60 }) else { return nil }
        // In Double: "9223372036854775807:00" would overflow Int (a trap); the step's limits
        // refuse it afterwards with the field's name.
        return parts.reduce(0.0) { $0 * 60 + Double($1!) }
    }

    /// "3:10" → 190.
    static func paceSeconds(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        // Minutes are capped before the arithmetic: no pace is slower than 999 min/km, and a larger
        // number would overflow Int (a trap).
        guard parts.count == 2, let minutes = Int(parts[0]), let seconds = Int(parts[1]), (0...999).contains(minutes), (0..<60).contains(seconds),
              parts[1].count == 2 else { return nil }
        return minutes * 60 + seconds
    }

    /// "a-b" (or an en dash) with both read by `read`.
    static func pair<T>(_ text: String, _ read: (String) -> T?) -> (T, T)? {
        let parts = text.replacingOccurrences(of: "–", with: "-").split(separator: "-").map { String($0).trimmingSpaces }
        guard parts.count == 2, let low = read(parts[0]), let high = read(parts[1]) else { return nil }
        return (low, high)
    }

    /// The form field a `PlanStepError` path ("steps[1].steps[0].distance_m") is about.
    static func formField(_ path: String, rows: [[Int]]) -> String {
        let pattern = /^steps\[(\d+)\](?:\.steps\[(\d+)\])?(?:\.(\w+))?$/
        guard let match = path.wholeMatch(of: pattern), let top = Int(match.1), top < rows.count else { return "steps" }
        var number = rows[top][0]
        if let inner = match.2.flatMap({ Int($0) }), inner + 1 < rows[top].count { number = rows[top][inner + 1] }
        let suffix: String
        switch match.3.map(String.init) {
        case "distance_m"?, "time_s"?: suffix = "amount"
        case "lap"?: suffix = "end"
        case "pace_s_per_km"?, "hr_zone"?, "hr_bpm"?: suffix = "value"
        case "times"?: suffix = "times"
        case "steps"?: suffix = "block"
        case "type"?: suffix = "type"
        default: return "step\(number)"
        }
        return "step\(number)_\(suffix)"
    }

    // MARK: showing

    /// The form of a stored session.
    init(session: PlanSession) {
        name = session.name
        date = session.startDate
        weekdays = session.weekdays
        weeks = session.repeats ? String(session.weeks) : ""
        for step in session.steps {
            if step.type == "repeat" {
                rows.append(Row(type: "repeat", times: step.times.map(String.init) ?? "", block: String(step.steps?.count ?? 0)))
                rows += (step.steps ?? []).map(Self.row)
            } else {
                rows.append(Self.row(step))
            }
        }
    }

    private static func row(_ step: PlanStep) -> Row {
        var row = Row(type: step.type)
        if let meters = step.distance_m {
            row.end = "distance"
            row.amount = distanceText(meters)
        } else if let seconds = step.time_s {
            row.end = "time"
            row.amount = RunnerFormat.duration(seconds)
        } else {
            row.end = "lap"
        }
        if let pace = step.pace_s_per_km, pace.count == 2 {
            row.target = "pace"
            let unit = PageLayout.units
            row.value = minutes(unit.pace(secondsPerKm: pace[0])) + "-" + minutes(unit.pace(secondsPerKm: pace[1]))
        } else if let zone = step.hr_zone {
            row.target = "zone"
            row.value = String(zone)
        } else if let bpm = step.hr_bpm, bpm.count == 2 {
            row.target = "bpm"
            row.value = "\(bpm[0])-\(bpm[1])"
        }
        return row
    }

    /// A step's distance as typed back: in miles for a viewer who reads them when it is a whole
    /// hundredth of a mile (what was typed as "3.1 mi"), else in km or m, so saving the form
    /// again never changes it.
    static func distanceText(_ meters: Double) -> String {
        let miles = meters / DistanceUnit.metresPerMile
        if PageLayout.units == .mi, miles >= 0.25, abs((miles * 100).rounded() * DistanceUnit.metresPerMile / 100 - meters) < 0.01 {
            return RunnerFormat.number(miles) + " mi"
        }
        return meters >= 1_000 && meters.truncatingRemainder(dividingBy: 100) == 0 ? RunnerFormat.number(meters / 1_000) + " km"
            : RunnerFormat.number(meters) + " m"
    }

    /// A pace range in the viewer's unit, for the form's hints: 3:10-3:30 per km is 5:06-5:38 per mile.
    static var paceExample: String { PageLayout.units == .km ? "3:10-3:30" : "5:06-5:38" }

    static func minutes(_ seconds: Double) -> String {
        // Stored paces are 60...1800 s; anything else (NaN, 1e300) would trap in Int().
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "–" }
        let whole = Int(seconds.rounded())
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }

    /// The template's values: the fields, the weekdays, and the rows with blank ones after them.
    var values: [String: Any] {
        func options(_ list: [(String, String)], _ chosen: String) -> [[String: Any]] {
            list.map { ["value": $0.0, "label": $0.1, "selected": $0.0 == chosen] }
        }
        let shown = rows + Array(repeating: Row(), count: Self.blankRows)
        // The rows a repeat holds are shown indented under it.
        var held = 0
        let inner = shown.map { row -> Bool in
            if row.type == "repeat" {
                // The block as typed, from a refused form too: clamped, since counting down from
                // Int.min ("-9223372036854775808") would overflow (a trap).
                held = min(max(Int(row.block.trimmingSpaces) ?? 0, 0), shown.count)
                return false
            }
            guard held > 0 else { return false }
            held -= 1
            return true
        }
        return [
            "name": name, "date": date, "weeks": weeks, "pace_unit": PageLayout.units.symbol,
            "pace_example": Self.paceExample,
            "weekdays": Self.weekdayNames.enumerated().map { offset, label -> [String: Any] in
                ["field": "day\(offset + 1)", "label": label, "on": weekdays & (1 << offset) != 0]
            },
            "rows": shown.enumerated().map { index, row -> [String: Any] in
                ["n": String(index + 1), "inner": inner[index], "types": options(Self.kinds, row.type), "ends": options(Self.ends, row.end), "amount": row.amount,
                 "targets": options(Self.targets, row.target), "value": row.value, "times": row.times, "block": row.block]
            },
        ]
    }

    /// "6 × (Run 400 m at 3:10–3:30 /km, Recover 200 m)", for lists.
    static func describe(_ steps: [PlanStep]) -> String {
        func one(_ step: PlanStep) -> String {
            var text = kinds.first { $0.0 == step.type }?.1 ?? step.type
            if let meters = step.distance_m {
                let unit = PageLayout.units
                text += " " + (meters >= 1_000 ? RunnerFormat.number(unit.amount(metres: meters)) + " " + unit.symbol : RunnerFormat.number(meters) + " m")
            } else if let seconds = step.time_s {
                text += " " + RunnerFormat.duration(seconds)
            } else {
                text += " to the lap button"
            }
            if let pace = step.pace_s_per_km, pace.count == 2 {
                let unit = PageLayout.units
                text += " at \(minutes(unit.pace(secondsPerKm: pace[0])))–\(minutes(unit.pace(secondsPerKm: pace[1]))) \(unit.paceSuffix)"
            }
            if let zone = step.hr_zone { text += " in zone \(zone)" }
            if let bpm = step.hr_bpm, bpm.count == 2 { text += " at \(bpm[0])–\(bpm[1]) bpm" }
            return text
        }
        return steps.map { step in
            step.type == "repeat" ? "\(step.times ?? 1) × (" + (step.steps ?? []).map(one).joined(separator: ", ") + ")" : one(step)
        }.joined(separator: " · ")
    }
}
