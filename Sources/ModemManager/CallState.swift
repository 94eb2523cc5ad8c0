/// MMCallState: where a voice call is, as ModemManager's Call object reports it.
public enum CallState: Int32, Sendable, Equatable, CustomStringConvertible {
    case unknown = 0
    case dialing = 1
    case ringingOut = 2
    case ringingIn = 3
    case active = 4
    case held = 5
    case waiting = 6
    case terminated = 7

    /// A value from ModemManager; one this enum does not know reads as `unknown`.
    public init(modemManagerValue value: Int32) {
        self = CallState(rawValue: value) ?? .unknown
    }

    /// mmcli's names ("ringing-out"); with `_` for `-`, the journal's SOS_STAGE=call_… names.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .dialing: "dialing"
        case .ringingOut: "ringing-out"
        case .ringingIn: "ringing-in"
        case .active: "active"
        case .held: "held"
        case .waiting: "waiting"
        case .terminated: "terminated"
        }
    }
}
