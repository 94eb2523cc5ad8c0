/// An alert's state, from the type of its newest message (highest sequence).
public enum AlertState: String, Sendable, Codable, CaseIterable {
    case open
    case resolved
    case cancelled

    /// The state a message of `type` (`alert`, `follow_up`, `resolved`, `cancelled`) leaves.
    public init?(messageType: String) {
        switch messageType {
        case "alert", "follow_up": self = .open
        case "resolved": self = .resolved
        case "cancelled": self = .cancelled
        default: return nil
        }
    }
}
