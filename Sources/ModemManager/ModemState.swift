/// MMModemState: where a modem is between unusable and connected. SMS needs `registered` or later.
public enum ModemState: Int32, Sendable, Equatable, Comparable, CustomStringConvertible {
    case failed = -1
    case unknown = 0
    case initializing = 1
    case locked = 2
    case disabled = 3
    case disabling = 4
    case enabling = 5
    case enabled = 6
    case searching = 7
    case registered = 8
    case disconnecting = 9
    case connecting = 10
    case connected = 11

    /// A value from ModemManager; one this enum does not know reads as `unknown`.
    public init(modemManagerValue value: Int32) {
        self = ModemState(rawValue: value) ?? .unknown
    }

    /// On a network: messages can go out.
    public var isRegistered: Bool { self >= .registered }

    public static func < (lhs: ModemState, rhs: ModemState) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .failed: "failed"
        case .unknown: "unknown"
        case .initializing: "initializing"
        case .locked: "locked"
        case .disabled: "disabled"
        case .disabling: "disabling"
        case .enabling: "enabling"
        case .enabled: "enabled"
        case .searching: "searching"
        case .registered: "registered"
        case .disconnecting: "disconnecting"
        case .connecting: "connecting"
        case .connected: "connected"
        }
    }
}
