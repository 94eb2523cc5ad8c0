/// A structured workout (config/workouts/*.toml): steps by distance, time or lap button, with
/// repeats and a pace or heart-rate target. Parsing lives in PacerConfig; this is the model.
public struct Workout: Sendable, Equatable {
    public var name: String
    public var items: [WorkoutItem]

    public init(name: String, items: [WorkoutItem]) {
        self.name = name
        self.items = items
    }

    /// The steps in the order they are run, repeats unrolled, each with its place in its repeat.
    public var plan: [PlannedStep] {
        var result: [PlannedStep] = []
        for item in items {
            switch item {
            case .step(let step):
                result.append(PlannedStep(step: step, repetition: nil))
            case .repeated(let times, let steps):
                for round in 1...max(1, times) {
                    for step in steps {
                        result.append(PlannedStep(step: step, repetition: (round, times)))
                    }
                }
            }
        }
        return result
    }
}

public enum WorkoutItem: Sendable, Equatable {
    case step(WorkoutStep)
    /// The steps run `times` times in order (e.g. 400 m fast, 200 m jog; 6 times).
    case repeated(times: Int, steps: [WorkoutStep])
}

public struct WorkoutStep: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        case warmup, run, recover, rest, cooldown
    }

    /// What ends the step.
    public enum End: Sendable, Equatable {
        case distance(meters: Double)
        case time(seconds: Double)
        /// The runner presses the lap button (or `pacerctl run lap`).
        case lapButton
    }

    public enum Target: Sendable, Equatable {
        /// Seconds per kilometre: `fastest` < `slowest`.
        case pace(fastest: Double, slowest: Double)
        /// Zone 1–5 of the runner's maximum heart rate (HeartRateZones).
        case heartRateZone(Int)
        /// Beats per minute, inclusive.
        case heartRate(low: Int, high: Int)
    }

    public var kind: Kind
    public var end: End
    public var target: Target?

    public init(kind: Kind, end: End, target: Target? = nil) {
        self.kind = kind
        self.end = end
        self.target = target
    }
}

/// A step as it is run: which round of its repeat it is (round, of), if it repeats.
public struct PlannedStep: Sendable, Equatable {
    public var step: WorkoutStep
    public var repetition: (round: Int, of: Int)?

    public init(step: WorkoutStep, repetition: (round: Int, of: Int)?) {
        self.step = step
        self.repetition = repetition
    }

    public static func == (lhs: PlannedStep, rhs: PlannedStep) -> Bool {
        lhs.step == rhs.step && lhs.repetition?.round == rhs.repetition?.round && lhs.repetition?.of == rhs.repetition?.of
    }
}

/// The workout a run followed, as its stored row and uploaded summary remember it: its name and,
/// when it was a session of the cloud's training plan, that session's id (the cloud marks it done).
public struct FollowedWorkout: Sendable, Equatable {
    public var name: String
    public var plannedSessionID: String?

    public init(name: String, plannedSessionID: String? = nil) {
        self.name = name
        self.plannedSessionID = plannedSessionID
    }
}
