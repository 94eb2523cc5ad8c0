/// Tunables of race progress. Defaults are physical (a runner's speed, a consumer receiver's
/// error), not fitted to any one course.
public struct RaceConfiguration: Sendable, Equatable {
    /// The official start (the gun): gun time, the official result, counts from it. nil when
    /// the race has none; then the moment the runner starts race mode by hand stands in for it.
    public var gunTime: Timestamp?
    /// Speaks the distance-to-go cue points in kilometres or miles (see `RaceCuePoints`).
    public var units: CoachConfiguration.Units = .metric

    /// More than this far from the course (metres)...
    public var offCourseMeters = 50.0
    /// ...for this long (seconds) is off course (R-RACE: 50 m for 15 s).
    public var offCourseSeconds = 15.0
    /// Back on course once within this (metres): 10 m of hysteresis, so a runner along the 50 m
    /// line is not told "off" and "back" every 15 s.
    public var backOnCourseMeters = 40.0

    /// No runner goes faster (m/s): how far ahead a position may be placed after `dt` seconds.
    /// The world's fastest marathons are run at 5.8 m/s; 10 leaves room for a sprint finish
    /// and a bad timestamp without letting a fix reach the next lap.
    public var maxSpeed = 10.0
    /// Added to `maxSpeed × dt` ahead of the previous progress (metres): one fix's error.
    public var aheadMarginMeters = 50.0
    /// Progress never goes back further than this behind the previous one (metres): a runner
    /// does not run the course backwards, GPS noise does it by a few metres.
    public var backMarginMeters = 50.0
    /// Before the start line is crossed a runner is within this of it (metres, either side):
    /// a runner warming up elsewhere is never placed somewhere along the course.
    public var startZoneMeters = 200.0
    /// The start counts once the runner is this far along (metres): the crossing that counts is
    /// the last one before it, so milling about the line before the gun does no harm.
    public var awayFromStartMeters = 50.0
    /// A consumer receiver's position is a few metres off (2-5 m of slowly wandering bias), so
    /// a runner standing at a line is seen within this of it (metres, either side): standing
    /// there and setting off is crossing the start, stopping there is the finish (see
    /// RaceProgressTracker's "Crossings").
    public var lineToleranceMeters = 15.0
    /// Fixes whose horizontal error estimate is worse than this (metres) are not placed.
    public var maxAccuracyMeters = 100.0
    /// Moving means at least this speed (m/s); RunTracker's own threshold for stopping.
    public var movingSpeed = 0.5

    public init(gunTime: Timestamp? = nil, units: CoachConfiguration.Units = .metric) {
        self.gunTime = gunTime
        self.units = units
    }
}
