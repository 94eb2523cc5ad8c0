import PacerCore

/// A workout file (config/workouts/*.toml; the format is documented in config/workouts/README.md)
/// parsed into the core's `Workout`. The format is flat on purpose: a repeat is a `[[step]]` that
/// says how many of the `[[step]]`s after it it repeats, so the file reads top to bottom in the
/// order it is run, and every error points at one line.
public enum WorkoutFile {
    /// Parses a workout file's text. `file` is only used in error messages.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> Workout {
        let document = try TOMLSubset.parseDocument(text, file: file, tableArrays: ["step"])
        var name: String?
        // `tables` holds only [[step]] headers, numbered 1... in file order, so index - 1 is
        // the step's place here; keeping headers keeps a [[step]] with no keys visible.
        var drafts = document.tables.map { StepDraft(index: $0.index, line: $0.line) }
        for entry in document.entries {
            let reader = EntryReader(entry: entry, file: file)
            guard let index = entry.tableIndex else {
                guard entry.key == "name" else {
                    throw reader.fail("unknown key (a workout file has name at the top, then [[step]] tables)")
                }
                name = try reader.string("a name in quotes, e.g. \"6 x 400 m\"", allowEmpty: false)
                continue
            }
            try drafts[index - 1].read(entry, reader)
        }
        guard let name else {
            throw ConfigError(file: file, line: 1, key: "name", problem: "missing: a workout file starts with name = \"...\"")
        }
        guard !drafts.isEmpty else {
            throw ConfigError(file: file, line: 1, key: "step", problem: "no steps: a workout needs at least one [[step]] table")
        }
        let parsed = try drafts.map { draft throws(ConfigError) in try draft.finish(file: file) }
        return Workout(name: name, items: try items(parsed, file: file))
    }

    /// Reads and checks a workout file.
    public static func load(path: String) throws(WorkoutLoadError) -> Workout {
        let text: String
        do {
            text = try TextFile.contents(atPath: path)
        } catch {
            switch error {
            case .missing: throw .missing(path: path)
            case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
            }
        }
        do {
            return try parse(text, file: path)
        } catch {
            throw .invalid(error)
        }
    }

    /// Groups each repeat with the steps it covers.
    private static func items(_ parsed: [ParsedStep], file: String) throws(ConfigError) -> [WorkoutItem] {
        var items: [WorkoutItem] = []
        var i = 0
        while i < parsed.count {
            switch parsed[i] {
            case .step(let step):
                items.append(.step(step))
                i += 1
            case .repeated(let times, let count, let countLine, let index, let line):
                let following = parsed.count - i - 1
                guard count <= following else {
                    throw ConfigError(file: file, line: countLine, key: "step[\(index)].steps",
                                      problem: "the repeat covers the next \(count) [[step]] tables, but only \(following) follow it")
                }
                var block: [WorkoutStep] = []
                for inner in parsed[(i + 1)...(i + count)] {
                    switch inner {
                    case .step(let step):
                        block.append(step)
                    case .repeated(_, _, _, let innerIndex, let innerLine):
                        let covered = count == 1 ? "step[\(index + 1)]" : "step[\(index + 1)] to step[\(index + count)]"
                        throw ConfigError(file: file, line: innerLine, key: "step[\(innerIndex)].type",
                                          problem: "a repeat cannot contain another repeat: the repeat at line \(line) covers \(covered)")
                    }
                }
                items.append(.repeated(times: times, steps: block))
                i += count + 1
            }
        }
        return items
    }
}

/// One [[step]] table once its keys are checked together.
private enum ParsedStep {
    case step(WorkoutStep)
    /// `count` steps after this one, `times` times; lines for the errors only the whole file reveals.
    case repeated(times: Int, count: Int, countLine: Int, index: Int, typeLine: Int)
}

/// One [[step]] table while its keys are read, each remembered with its line so that a conflict
/// found later (two end conditions, a distance on a repeat) still points at the right line.
private struct StepDraft {
    struct Located<Value> {
        var value: Value
        var field: String
        var line: Int
    }

    let index: Int
    let line: Int
    var kind: Located<WorkoutStep.Kind?>?  // nil value: a repeat
    var end: Located<WorkoutStep.End>?
    var target: Located<WorkoutStep.Target>?
    var times: Located<Int>?
    var count: Located<Int>?

    init(index: Int, line: Int) {
        self.index = index
        self.line = line
    }

    static let endFields = "distance_m, distance_km, distance_mi, time_s, time_min or lap = true"
    static let types = "warmup, run, recover, rest, cooldown or repeat"

    mutating func read(_ entry: TOMLEntry, _ reader: EntryReader) throws(ConfigError) {
        let field = String(entry.key.dropFirst("step.".count))
        func located<Value>(_ value: Value) -> Located<Value> { Located(value: value, field: field, line: entry.line) }
        switch field {
        case "type":
            let text = try reader.string("one of \(Self.types) in quotes", allowEmpty: false)
            if text == "repeat" {
                kind = located(nil)
            } else if let k = WorkoutStep.Kind(rawValue: text) {
                kind = located(k)
            } else {
                throw reader.fail("expected one of \(Self.types), got \"\(text)\"")
            }
        case "distance_m":
            try setEnd(located(.distance(meters: try reader.number(in: 10...100_000, "a distance in metres from 10 to 100000"))), reader)
        case "distance_km":
            try setEnd(located(.distance(meters: 1000 * (try reader.number(in: 0.01...100, "a distance in kilometres from 0.01 to 100")))), reader)
        case "distance_mi":
            try setEnd(located(.distance(meters: 1609.344 * (try reader.number(in: 0.01...60, "a distance in miles from 0.01 to 60")))), reader)
        case "time_s":
            try setEnd(located(.time(seconds: try reader.number(in: 5...86_400, "seconds from 5 to 86400"))), reader)
        case "time_min":
            try setEnd(located(.time(seconds: 60 * (try reader.number(in: 0.1...1440, "minutes from 0.1 to 1440")))), reader)
        case "lap":
            guard try reader.bool() else {
                throw reader.fail("expected true (the step ends when the lap button is pressed); for another end, remove lap")
            }
            try setEnd(located(.lapButton), reader)
        case "pace", "pace_per_mi":
            let text = try reader.string("a pace range in quotes, e.g. \"3:10-3:30\"", allowEmpty: false)
            let range: (fastest: Double, slowest: Double)
            do {
                range = try PaceText.range(text, unit: field == "pace" ? .kilometre : .mile)
            } catch {
                throw reader.fail(error.message)
            }
            try setTarget(located(.pace(fastest: range.fastest, slowest: range.slowest)), reader)
        case "hr_zone":
            try setTarget(located(.heartRateZone(try reader.integer(in: 1...5, "a heart-rate zone from 1 to 5"))), reader)
        case "hr_bpm":
            let what = "a range of beats per minute like [150, 165], each from 30 to 240"
            let bpm = try reader.integers(in: 30...240, what)
            guard bpm.count == 2 else { throw reader.fail("expected two numbers, [low, high], got \(bpm.count)") }
            guard bpm[0] != bpm[1] else { throw reader.fail("expected two different heart rates, got [\(bpm[0]), \(bpm[1])]") }
            guard bpm[0] < bpm[1] else { throw reader.fail("expected the lower heart rate first: [\(bpm[1]), \(bpm[0])], got [\(bpm[0]), \(bpm[1])]") }
            try setTarget(located(.heartRate(low: bpm[0], high: bpm[1])), reader)
        case "times":
            times = located(try reader.integer(in: 1...100, "a whole number of rounds from 1 to 100"))
        case "steps":
            count = located(try reader.integer(in: 1...50, "how many of the following [[step]] tables are repeated, from 1 to 50"))
        case "name":
            throw reader.fail("unknown key (name belongs at the top of the file, before the first [[step]])")
        default:
            throw reader.fail("unknown key (check its spelling; config/workouts/README.md lists every key)")
        }
    }

    private mutating func setEnd(_ new: Located<WorkoutStep.End>, _ reader: EntryReader) throws(ConfigError) {
        if let end { throw reader.fail("a step has one end condition, and \(end.field) is already set at line \(end.line)") }
        end = new
    }

    private mutating func setTarget(_ new: Located<WorkoutStep.Target>, _ reader: EntryReader) throws(ConfigError) {
        if let target { throw reader.fail("a step has at most one target, and \(target.field) is already set at line \(target.line)") }
        target = new
    }

    func finish(file: String) throws(ConfigError) -> ParsedStep {
        func fail(_ line: Int, _ field: String?, _ problem: String) -> ConfigError {
            ConfigError(file: file, line: line, key: field.map { "step[\(index)].\($0)" } ?? "step[\(index)]", problem: problem)
        }
        guard let kind else { throw fail(line, "type", "missing: every step needs a type (\(Self.types))") }
        guard let stepKind = kind.value else {
            if let end {
                throw fail(end.line, end.field, "a repeat has no end condition of its own (it ends after its last round); put it on the steps it repeats")
            }
            if let target {
                throw fail(target.line, target.field, "a repeat has no target of its own; put it on the steps it repeats")
            }
            guard let times else { throw fail(line, "times", "missing: a repeat needs times = N, how many rounds") }
            guard let count else { throw fail(line, "steps", "missing: a repeat needs steps = N, how many of the following [[step]] tables it repeats") }
            return .repeated(times: times.value, count: count.value, countLine: count.line, index: index, typeLine: kind.line)
        }
        if let times { throw fail(times.line, "times", "only a step with type = \"repeat\" has times and steps") }
        if let count { throw fail(count.line, "steps", "only a step with type = \"repeat\" has times and steps") }
        guard let end else { throw fail(line, nil, "no end condition: set one of \(Self.endFields)") }
        return .step(WorkoutStep(kind: stepKind, end: end.value, target: target?.value))
    }
}
