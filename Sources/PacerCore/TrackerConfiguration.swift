/// Tunables of the tracking pipeline. Defaults are physical, not fitted to any one route.
public struct TrackerConfiguration: Sendable, Equatable {
    /// Split length (1000 m for per-km splits, 1609.344 m for miles).
    public var splitDistanceMeters = 1000.0
    /// Moving starts once the measured speed exceeds this (m/s)...
    public var resumeAboveSpeed = 0.8
    /// ...and stops once it falls below this. The gap is hysteresis against noise.
    public var pauseBelowSpeed = 0.5
    /// No usable fix for this long (sample time) counts as GPS lost.
    public var gpsLostAfterSeconds = 5.0
    /// A fix more than this far from the previous one in time is a time jump (receiver week
    /// rollover, gpsd's date guessing), not a gap: the run's timeline continues and the jump is logged.
    public var timeJumpSeconds = 3600.0
    /// Gaps up to this long are bridged (distance estimated across them); longer ones add only the
    /// straight line between the fixes on either side.
    public var maxBridgeSeconds = 300.0
    /// Doppler speeds above this (m/s) are receiver glitches for a runner (the world record pace
    /// is ~6.3 m/s; 12 leaves room for downhill sprints) and are replaced by the smoothed speed.
    public var maxPlausibleSpeed = 12.0

    public init() {}
}
