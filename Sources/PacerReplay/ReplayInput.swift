import GPSD
import PacerCore

/// One input to the core, in the order the replay feeds them.
public enum ReplayInput: Sendable, Equatable {
    case fix(GPSFix)
    case heartRate(HeartRateSample)
    /// The runner's lap, pause or resume, recorded in the raw log as a `PACER` line (ControlLine).
    case control(RunControl)
    /// A gpsd JSON line as received, just before what was decoded from it; only when the loader
    /// was asked to keep them (recording).
    case rawLine(String)

    /// The input's time on the run's timeline, when it has one.
    public var time: Timestamp? {
        switch self {
        case .fix(let fix): fix.time
        case .heartRate(let sample): sample.time
        case .control, .rawLine: nil
        }
    }
}

/// What the replay made of its input files, reported beside the result.
public struct InputStats: Sendable, Equatable {
    public init() {}

    public var gpsLines = 0
    /// Lines that are not JSON objects (gpspipe can interleave NMEA); skipped by design.
    public var nonJSONLines = 0
    /// JSON lines libgps rejected (truncated, garbage); only ever non-zero with `skipMalformed`.
    public var malformedLines = 0
    public var tpvReports = 0
    public var gpsdErrors: [String] = []
    public var heartRateLines = 0
    /// Heart-rate samples from the HR log and from HRM lines together.
    public var heartRateSamples = 0
    /// `HRM` lines in the gpsd log: strap notifications the daemon recorded (HeartRateLine).
    public var hrmLines = 0
    /// HRM lines skipped because their time or hex is unreadable or their bytes are not a valid
    /// Heart Rate Measurement; a strap's bad packet is not a reason to refuse the run.
    public var hrmMalformed = 0
}

/// The decoded, time-merged inputs of a replay.
public struct ReplayInputs: Sendable {
    public var items: [ReplayInput]
    public var stats: InputStats
    public var gpsEpochLines: Int { stats.tpvReports }
}
