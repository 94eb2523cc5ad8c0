/// The auto-start detector's decision: start a run now.
public struct AutoStart: Sendable, Equatable {
    /// The fix that completed the sustained movement (GPS time).
    public var time: Timestamp
    /// The first moving fix of that movement, so the daemon can say "moving since" or keep the
    /// fixes since then in the run.
    public var movingSince: Timestamp

    public init(time: Timestamp, movingSince: Timestamp) {
        self.time = time
        self.movingSince = movingSince
    }
}
