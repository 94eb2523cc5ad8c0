/// The speech arbiter's lanes: a higher one interrupts a lower one. A global mute silences
/// `summary` and `workout`, never `safety` or `sos`.
public enum CuePriority: Int, Sendable, Equatable, Hashable, Comparable, CaseIterable {
    case summary = 0
    case workout = 1
    case safety = 2
    case sos = 3

    public static func < (lhs: CuePriority, rhs: CuePriority) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Safety and SOS messages are spoken even when the runner muted the coach.
    public var isSparedByMute: Bool { self >= .safety }
}
