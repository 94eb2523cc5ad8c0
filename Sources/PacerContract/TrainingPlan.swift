import PacerCore

/// `plan` (a section of `GET /v1/device/sync`): the account's planned sessions for the next
/// `PlanSection.days` days, dated in the account's timezone, oldest first. The device keeps the
/// last one it fetched, so a plan works offline.
public struct PlanSection: Codable, Equatable, Sendable {
    public static let name = "plan"
    /// Today and the six days after it, in `timezone`.
    public static let days = 7
    /// At most this many sessions are sent (the earliest).
    public static let maxSessions = 50

    public var version: String
    /// The IANA zone the dates are in (the account's).
    public var timezone: String
    public var sessions: [PlannedSession]

    public init(version: String, timezone: String, sessions: [PlannedSession]) {
        self.version = version
        self.timezone = timezone
        self.sessions = sessions
    }
}

/// One planned session: a workout on a date.
public struct PlannedSession: Codable, Equatable, Sendable {
    /// A lowercase UUID; a repeated session's occurrences each have their own.
    public var id: String
    /// The local date, `YYYY-MM-DD`, in the section's timezone.
    public var date: String
    /// Cleaned for speech (`NoticeText.clean`), 1 to `PlanSteps.maxNameLength` characters.
    public var name: String
    public var steps: [PlanStep]

    public init(id: String, date: String, name: String, steps: [PlanStep]) {
        self.id = id
        self.date = date
        self.name = name
        self.steps = steps
    }
}

/// A workout step as JSON: the keys of a workout file's `[[step]]` (config/workouts/README.md)
/// in their base units, except that a repeat holds its block in `steps` instead of counting the
/// steps after it. `PlanSteps` turns these into the core's `Workout` and back.
public struct PlanStep: Codable, Equatable, Sendable {
    /// warmup, run, recover, rest, cooldown or repeat.
    public var type: String
    public var distance_m: Double?
    public var time_s: Double?
    /// true: the step ends when the lap button is pressed.
    public var lap: Bool?
    /// [fastest, slowest], seconds per kilometre.
    public var pace_s_per_km: [Double]?
    public var hr_zone: Int?
    /// [low, high], inclusive.
    public var hr_bpm: [Int]?
    /// A repeat's rounds.
    public var times: Int?
    /// A repeat's block: steps that are not repeats.
    public var steps: [PlanStep]?

    public init(type: String, distance_m: Double? = nil, time_s: Double? = nil, lap: Bool? = nil, pace_s_per_km: [Double]? = nil,
                hr_zone: Int? = nil, hr_bpm: [Int]? = nil, times: Int? = nil, steps: [PlanStep]? = nil) {
        self.type = type
        self.distance_m = distance_m
        self.time_s = time_s
        self.lap = lap
        self.pace_s_per_km = pace_s_per_km
        self.hr_zone = hr_zone
        self.hr_bpm = hr_bpm
        self.times = times
        self.steps = steps
    }
}

/// A plan step that cannot become a workout step: the field's path ("steps[2].steps[0].hr_zone")
/// and what is wrong with it, as a 400 names it.
public typealias PlanStepError = FieldProblem

/// Plan steps ⇄ the core's `Workout`, with the same ranges and rules as a workout file, so a
/// session planned on the web is exactly what a file on the device could say.
public enum PlanSteps {
    public static let maxNameLength = 80
    /// Top-level steps (a repeat counts as one).
    public static let maxSteps = 50
    public static let distanceRange = 10.0...100_000.0
    public static let timeRange = 5.0...86_400.0
    public static let paceRange = 60.0...1_800.0
    public static let zoneRange = 1...5
    public static let heartRateRange = 30...240
    public static let timesRange = 1...100
    public static let blockRange = 1...50

    public static func workout(name: String, steps: [PlanStep], field: String = "steps") throws(PlanStepError) -> Workout {
        guard !steps.isEmpty else { throw PlanStepError(field: field, problem: "a session needs at least one step") }
        guard steps.count <= maxSteps else { throw PlanStepError(field: field, problem: "at most \(maxSteps) steps") }
        var items: [WorkoutItem] = []
        for (index, step) in steps.enumerated() {
            let path = "\(field)[\(index)]"
            if step.type == "repeat" {
                if step.distance_m != nil || step.time_s != nil || step.lap != nil {
                    throw PlanStepError(field: path, problem: "a repeat has no end condition of its own; put it on the steps it repeats")
                }
                if step.pace_s_per_km != nil || step.hr_zone != nil || step.hr_bpm != nil {
                    throw PlanStepError(field: path, problem: "a repeat has no target of its own; put it on the steps it repeats")
                }
                guard let times = step.times else { throw PlanStepError(field: "\(path).times", problem: "missing: a repeat needs its rounds") }
                guard timesRange.contains(times) else {
                    throw PlanStepError(field: "\(path).times", problem: "rounds from \(timesRange.lowerBound) to \(timesRange.upperBound), got \(times)")
                }
                guard let block = step.steps, blockRange.contains(block.count) else {
                    throw PlanStepError(field: "\(path).steps", problem: "a repeat holds \(blockRange.lowerBound) to \(blockRange.upperBound) steps")
                }
                var inner: [WorkoutStep] = []
                for (blockIndex, blockStep) in block.enumerated() {
                    inner.append(try workoutStep(blockStep, path: "\(path).steps[\(blockIndex)]"))
                }
                items.append(.repeated(times: times, steps: inner))
            } else {
                items.append(.step(try workoutStep(step, path: path)))
            }
        }
        return Workout(name: name, items: items)
    }

    private static func workoutStep(_ step: PlanStep, path: String) throws(PlanStepError) -> WorkoutStep {
        if step.type == "repeat" {
            throw PlanStepError(field: "\(path).type", problem: "a repeat cannot contain another repeat")
        }
        guard let kind = WorkoutStep.Kind(rawValue: step.type) else {
            throw PlanStepError(field: "\(path).type", problem: "one of warmup, run, recover, rest, cooldown or repeat")
        }
        if step.times != nil || step.steps != nil {
            throw PlanStepError(field: "\(path).\(step.times != nil ? "times" : "steps")", problem: "only a repeat has times and steps")
        }
        var ends: [(String, WorkoutStep.End)] = []
        if let meters = step.distance_m {
            guard distanceRange.contains(meters) else {
                throw PlanStepError(field: "\(path).distance_m", problem: "metres from 10 to 100000")
            }
            ends.append(("distance_m", .distance(meters: meters)))
        }
        if let seconds = step.time_s {
            guard timeRange.contains(seconds) else { throw PlanStepError(field: "\(path).time_s", problem: "seconds from 5 to 86400") }
            ends.append(("time_s", .time(seconds: seconds)))
        }
        if let lap = step.lap {
            guard lap else { throw PlanStepError(field: "\(path).lap", problem: "only true (or leave it out)") }
            ends.append(("lap", .lapButton))
        }
        guard ends.count == 1 else {
            throw PlanStepError(field: ends.count == 0 ? path : "\(path).\(ends[1].0)",
                                problem: "a step has exactly one end condition: distance_m, time_s or lap")
        }
        var targets: [(String, WorkoutStep.Target)] = []
        if let pace = step.pace_s_per_km {
            guard pace.count == 2, paceRange.contains(pace[0]), paceRange.contains(pace[1]) else {
                throw PlanStepError(field: "\(path).pace_s_per_km", problem: "[fastest, slowest] in seconds per km, each from 60 to 1800")
            }
            guard pace[0] < pace[1] else {
                throw PlanStepError(field: "\(path).pace_s_per_km", problem: "the faster (smaller) pace comes first, and the two differ")
            }
            targets.append(("pace_s_per_km", .pace(fastest: pace[0], slowest: pace[1])))
        }
        if let zone = step.hr_zone {
            guard zoneRange.contains(zone) else { throw PlanStepError(field: "\(path).hr_zone", problem: "a zone from 1 to 5") }
            targets.append(("hr_zone", .heartRateZone(zone)))
        }
        if let bpm = step.hr_bpm {
            guard bpm.count == 2, heartRateRange.contains(bpm[0]), heartRateRange.contains(bpm[1]), bpm[0] < bpm[1] else {
                throw PlanStepError(field: "\(path).hr_bpm", problem: "[low, high], low first, each from 30 to 240")
            }
            targets.append(("hr_bpm", .heartRate(low: bpm[0], high: bpm[1])))
        }
        guard targets.count <= 1 else {
            throw PlanStepError(field: "\(path).\(targets[1].0)", problem: "a step has at most one target: pace_s_per_km, hr_zone or hr_bpm")
        }
        return WorkoutStep(kind: kind, end: ends[0].1, target: targets.first?.1)
    }

    /// A workout as plan steps (the inverse of `workout(name:steps:)`).
    public static func steps(of workout: Workout) -> [PlanStep] {
        workout.items.map { item in
            switch item {
            case .step(let step): return planStep(step)
            case .repeated(let times, let block): return PlanStep(type: "repeat", times: times, steps: block.map(planStep))
            }
        }
    }

    private static func planStep(_ step: WorkoutStep) -> PlanStep {
        var out = PlanStep(type: step.kind.rawValue)
        switch step.end {
        case .distance(let meters): out.distance_m = meters
        case .time(let seconds): out.time_s = seconds
        case .lapButton: out.lap = true
        }
        switch step.target {
        case .pace(let fastest, let slowest)?: out.pace_s_per_km = [fastest, slowest]
        case .heartRateZone(let zone)?: out.hr_zone = zone
        case .heartRate(let low, let high)?: out.hr_bpm = [low, high]
        case nil: break
        }
        return out
    }
}
