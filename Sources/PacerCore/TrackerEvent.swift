/// What the tracker decided in response to one input. The shell carries these out (records,
/// speaks, logs); the core never does I/O itself.
public enum TrackerEvent: Sendable, Equatable {
    case sample(TrackSample)
    case split(Split)
    case lap(Lap)
    /// The runner started or stopped moving (auto-pause/resume).
    case motion(moving: Bool, time: Timestamp)
    case gpsLost(time: Timestamp)
    case gpsRegained(time: Timestamp, outageSeconds: Double)
    case fixSkipped(FixSkipReason, time: Timestamp?)
    case warning(TrackerWarning)
}

public enum FixSkipReason: String, Sendable, Equatable, CaseIterable {
    /// Same time as the last accepted fix: gpsd sends one TPV per sentence of an epoch.
    case duplicate
    /// Older than the last accepted fix.
    case outOfOrder = "out_of_order"
    /// mode 0/1: the receiver has no fix.
    case noFix = "no_fix"
    /// A fix without a time (GGA-only receivers): it cannot be placed on the timeline.
    case noTime = "no_time"
    /// Missing, NaN or impossible latitude/longitude.
    case invalidPosition = "invalid_position"
    /// The receiver is in demo/simulation mode: such fixes must never be recorded.
    case simulated
}

/// Something an operator should know about the input; logged once per kind where it repeats.
public struct TrackerWarning: Sendable, Equatable {
    public var time: Timestamp?
    /// Stable identifier, e.g. `gps_no_time`, `gps_time_jump`, `gps_simulated`.
    public var kind: String
    public var text: String

    public init(time: Timestamp?, kind: String, text: String) {
        self.time = time
        self.kind = kind
        self.text = text
    }
}

