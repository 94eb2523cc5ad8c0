/// When sustained movement starts a run by itself. Defaults match config/pacer.toml's `[run]`
/// section (where auto-start is off by default; the daemon decides whether to use the detector).
public struct AutoStartConfiguration: Sendable, Equatable {
    /// Moving means at least this speed over ground, m/s. 1.5 is above an ordinary walk (~1.3).
    public var minimumSpeed: Double
    /// For at least this long (seconds of GPS time).
    public var sustainedSeconds: Double
    /// Faster than this (m/s) is not on foot (a car, a train) or a receiver glitch: not moving.
    public var maximumSpeed: Double
    /// A gap between usable fixes longer than this (seconds) starts the count again: nothing is
    /// known about the time in between.
    public var maximumGapSeconds: Double

    public init(minimumSpeed: Double = 1.5, sustainedSeconds: Double = 15, maximumSpeed: Double = 12, maximumGapSeconds: Double = 5) {
        self.minimumSpeed = minimumSpeed
        self.sustainedSeconds = sustainedSeconds
        self.maximumSpeed = maximumSpeed
        self.maximumGapSeconds = maximumGapSeconds
    }
}
