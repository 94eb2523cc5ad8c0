/// What the coach says and when; the `[voice]` and `[coach]` sections of pacer.toml.
public struct CoachConfiguration: Sendable, Equatable {
    public enum Units: String, Sendable, Equatable {
        case metric, imperial
    }

    /// What a periodic summary contains, in the order given.
    public enum SummaryItem: String, Sendable, Equatable, CaseIterable {
        case distance
        case elapsedTime = "elapsed_time"
        case averagePace = "average_pace"
        case currentPace = "current_pace"
        case splitPace = "split_pace"
        case heartRate = "heart_rate"
        case heartRateZone = "hr_zone"
    }

    public var units: Units = .metric
    /// A summary every this many metres of distance (nil: not by distance).
    public var summaryEveryMeters: Double? = 1000
    /// A summary every this many seconds of elapsed run time (nil: not by time).
    public var summaryEverySeconds: Double? = nil
    public var summaryItems: [SummaryItem] = [.distance, .elapsedTime, .averagePace, .heartRate]
    /// Speak each completed split (its time).
    public var splitCues = true
    /// For zones: the runner's maximum heart rate.
    public var maxHeartRate = 184
    /// A strap or device battery at or below this percentage is announced once.
    public var lowBatteryPercent = 15
    /// No valid heart rate for this long (seconds) while a strap was delivering is "lost".
    public var heartRateLostAfterSeconds = 5.0
    /// Once lost, valid heart rate must have come without a gap for this long (seconds) before
    /// "heart rate back" is said: a flickering contact is not a stream of alternating cues.
    public var heartRateBackAfterSeconds = 10.0

    /// Workout corrections: the speed or heart rate judged is the median over this window
    /// (seconds), so that one bad fix cannot trigger a cue.
    public var correctionWindowSeconds = 10.0
    /// No correction in the first seconds of a step: the runner needs time to change pace.
    public var stepGraceSeconds = 15.0
    /// At least this long (seconds) between two corrective cues (speed up, slow down, on target).
    public var correctionGapSeconds = 20.0
    /// Hysteresis: the median must leave the target range by this fraction of the range's
    /// middle (pace) or this many bpm to count as off target...
    public var paceTolerance = 0.03
    public var heartRateToleranceBpm = 3
    /// ...and be off target this long (seconds) before a correction is spoken.
    public var offTargetSeconds = 4.0

    public init() {}
}
