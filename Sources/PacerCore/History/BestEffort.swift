/// The fastest stretch of exactly `distance.meters` inside one run.
///
/// `duration` is elapsed (wall-clock) time from `start` to `end`, pauses included: a record is what a
/// stopwatch started and stopped at those two points would show. Excluding paused time would let a
/// runner "set" a 10 km record by resting at every crossing, and would make records depend on the
/// auto-pause thresholds of whichever version recorded the run. Moving time over the same stretch is
/// kept in `movingTime` for display only; it never decides which effort is best.
public struct BestEffort: Sendable, Equatable {
    public var distance: RecordDistance
    /// Elapsed seconds from `start` to `end` (not rounded to the millisecond like the timestamps).
    public var duration: Double
    /// Interpolated instant the stretch began (rounded to the millisecond).
    public var start: Timestamp
    /// Interpolated instant the stretch ended (rounded to the millisecond).
    public var end: Timestamp
    /// Moving seconds within the stretch, interpolated the same way; never more than `duration`
    /// for consistent input.
    public var movingTime: Double

    public init(distance: RecordDistance, duration: Double, start: Timestamp, end: Timestamp, movingTime: Double) {
        self.distance = distance
        self.duration = duration
        self.start = start
        self.end = end
        self.movingTime = movingTime
    }

    /// Seconds per kilometre over elapsed time.
    public var pacePerKm: Double { duration / distance.meters * 1000 }
}
