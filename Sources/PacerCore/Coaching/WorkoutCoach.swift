/// Runs a workout against the pipeline's samples: announces each step, and tells the runner to
/// speed up or slow down while outside the step's target, then "on target" once back.
///
/// Pure: samples (with their GPS time) in, cues out. Steps end by distance run, by elapsed sample
/// time (a rest while standing still must end too), or by the lap button.
///
/// Why corrections do not chatter:
/// - the value judged is the median over `correctionWindowSeconds`, so one bad fix cannot move it;
/// - hysteresis: off target means beyond the range by a tolerance, back on target means inside it;
/// - a grace period at the start of every step, while the runner changes pace;
/// - off target for `offTargetSeconds` before the first word;
/// - at least `correctionGapSeconds` between any two corrective cues, and twice that before the
///   same correction is repeated.
public struct WorkoutCoach: Sendable {
    public let workout: Workout
    public let configuration: CoachConfiguration
    private let plan: [PlannedStep]
    private let phrases: SpokenPhrases
    private let zones: HeartRateZones

    /// Index into `plan` of the step being run; `plan.count` once the workout is complete.
    public private(set) var stepIndex = 0
    private var started = false
    private var stepStart: (distance: Double, time: Timestamp) = (0, Timestamp(milliseconds: 0))
    /// Corrections wait `stepGraceSeconds` from here: the step's start, or the moment the runner
    /// moved off again after standing still (a stop at a crossing, the start line).
    private var graceFrom = Timestamp(milliseconds: 0)
    private var standing = true

    private struct Timed: Sendable {
        var time: Timestamp
        var value: Double
    }

    private var speeds: [Timed] = []
    private var heartRates: [Timed] = []

    private enum Direction: Equatable { case tooSlow, tooFast }
    /// Judged off target in this direction since this time (hysteresis state).
    private var off: (direction: Direction, since: Timestamp)?
    /// The correction told in the current off-target episode, and when.
    private var told: (direction: Direction, time: Timestamp)?
    private var lastCorrectiveCue: Timestamp?

    public init(workout: Workout, configuration: CoachConfiguration) {
        self.workout = workout
        self.configuration = configuration
        plan = workout.plan
        phrases = SpokenPhrases(units: configuration.units)
        zones = HeartRateZones(maxHeartRate: configuration.maxHeartRate)
    }

    public var currentStep: PlannedStep? { stepIndex < plan.count ? plan[stepIndex] : nil }
    public var isComplete: Bool { started && stepIndex >= plan.count }

    /// The run started: the first step is announced.
    public mutating func start(at time: Timestamp, distance: Double) -> [Cue] {
        guard !started else { return [] }
        started = true
        return beginStep(0, at: time, distance: distance)
    }

    public mutating func ingest(_ sample: TrackSample) -> [Cue] {
        if !started { return start(at: sample.time, distance: sample.distance) }
        var cues: [Cue] = []
        // A loop: one sample may end several short steps (after a GPS outage).
        while let step = currentStep?.step {
            // The next step starts at this one's boundary, not at the sample that crossed it: the
            // overshoot of each boundary (up to a fix period) must not add up over many steps.
            switch step.end {
            case .distance(let meters) where sample.distance - stepStart.distance >= meters:
                cues += beginStep(stepIndex + 1, at: sample.time, distance: stepStart.distance + meters)
                continue
            case .time(let seconds) where sample.time.seconds(since: stepStart.time) >= seconds:
                let boundary = stepStart.time.adding(seconds: seconds)
                cues += beginStep(stepIndex + 1, at: sample.time, distance: sample.distance)
                stepStart.time = boundary
                continue
            default:
                break
            }
            break
        }
        speeds.append(Timed(time: sample.time, value: sample.moving ? sample.speed : 0))
        trim(&speeds, before: sample.time)
        if !sample.moving {
            // Standing still (a stop, a pause): nothing to correct; start afresh when moving again.
            off = nil
            told = nil
            standing = true
            return cues
        }
        if standing {
            standing = false
            graceFrom = max(graceFrom, sample.time)
        }
        if case .pace(let fastest, let slowest)? = currentStep?.step.target {
            cues += judge(sample.time, value: median(speeds.map(\.value)),
                          low: 1000 / slowest, high: 1000 / fastest,
                          tolerance: configuration.paceTolerance * (1000 / slowest + 1000 / fastest) / 2)
        }
        return cues
    }

    public mutating func ingest(heartRate bpm: Int, at time: Timestamp) -> [Cue] {
        guard started else { return [] }
        heartRates.append(Timed(time: time, value: Double(bpm)))
        trim(&heartRates, before: time)
        let range: ClosedRange<Int>
        switch currentStep?.step.target {
        case .heartRateZone(let zone)?: range = zones.range(ofZone: zone)
        case .heartRate(let low, let high)?: range = low...high
        default: return []
        }
        // Heart rate rises as the runner speeds up: too low means speed up.
        return judge(time, value: median(heartRates.map(\.value)),
                     low: Double(range.lowerBound), high: Double(range.upperBound),
                     tolerance: Double(configuration.heartRateToleranceBpm))
    }

    /// The lap button ends a step that waits for it (and only such a step).
    public mutating func lap(at time: Timestamp, distance: Double) -> [Cue] {
        guard started, case .lapButton? = currentStep?.step.end else { return [] }
        return beginStep(stepIndex + 1, at: time, distance: distance)
    }

    // MARK: Steps

    private mutating func beginStep(_ index: Int, at time: Timestamp, distance: Double) -> [Cue] {
        stepIndex = index
        stepStart = (distance, time)
        graceFrom = time
        off = nil
        told = nil
        guard index < plan.count else {
            return [Cue(time: time, kind: .step, text: "Workout complete.")]
        }
        return [Cue(time: time, kind: .step, text: announcement(plan[index]))]
    }

    /// "Interval 2 of 6: 400 metres at 3 minutes 20 per kilometre."
    func announcement(_ planned: PlannedStep) -> String {
        let step = planned.step
        var name: String
        switch step.kind {
        case .warmup: name = "Warm-up"
        case .run: name = planned.repetition.map { "Interval \($0.round) of \($0.of)" } ?? "Run"
        case .recover: name = "Recovery"
        case .rest: name = "Rest"
        case .cooldown: name = "Cool-down"
        }
        if step.kind != .run, let repetition = planned.repetition, step.kind == .recover || step.kind == .rest {
            name += " \(repetition.round) of \(repetition.of)"
        }
        let length: String = switch step.end {
        case .distance(let meters): phrases.stepDistance(meters)
        case .time(let seconds): phrases.duration(seconds)
        case .lapButton: "until you press lap"
        }
        let target: String = switch step.target {
        case .pace(let fastest, let slowest)?: " at \(phrases.targetPace(secondsPerKm: (fastest + slowest) / 2))"
        case .heartRateZone(let zone)?: " in heart rate zone \(zone)"
        case .heartRate(let low, let high)?: " at heart rate \(low) to \(high)"
        case nil: ""
        }
        return "\(name): \(length)\(target)."
    }

    // MARK: Corrections

    private mutating func judge(_ time: Timestamp, value: Double?, low: Double, high: Double, tolerance: Double) -> [Cue] {
        guard let value, time.seconds(since: graceFrom) >= configuration.stepGraceSeconds else { return [] }
        if value < low - tolerance {
            if off?.direction != .tooSlow { off = (.tooSlow, time) }
        } else if value > high + tolerance {
            if off?.direction != .tooFast { off = (.tooFast, time) }
        } else if value >= low && value <= high {
            off = nil
        }
        // Between the range and the tolerance: the state stays as it was (hysteresis).

        let gapPassed = lastCorrectiveCue.map { time.seconds(since: $0) >= configuration.correctionGapSeconds } ?? true
        if let off {
            guard time.seconds(since: off.since) >= configuration.offTargetSeconds, gapPassed else { return [] }
            if let told, told.direction == off.direction,
                time.seconds(since: told.time) < 2 * configuration.correctionGapSeconds { return [] }
            told = (off.direction, time)
            lastCorrectiveCue = time
            return [off.direction == .tooSlow
                ? Cue(time: time, kind: .speedUp, text: "Speed up.")
                : Cue(time: time, kind: .slowDown, text: "Slow down.")]
        }
        if told != nil && value >= low && value <= high && gapPassed {
            told = nil
            lastCorrectiveCue = time
            return [Cue(time: time, kind: .onTarget, text: "On target.")]
        }
        return []
    }

    private func trim(_ window: inout [Timed], before now: Timestamp) {
        let cutoff = now.adding(seconds: -configuration.correctionWindowSeconds)
        if let keep = window.firstIndex(where: { $0.time >= cutoff }), keep > 0 { window.removeFirst(keep) }
    }

    private func median(_ values: [Double]) -> Double? {
        guard values.count >= 3 else { return nil }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}
