/// Why a Battery Level value was rejected; `description` is the human `reason`.
public enum BatteryLevelError: Error, Sendable, Equatable, CustomStringConvertible {
    case empty
    case wrongLength(Int)
    case reserved(UInt8)

    public var description: String {
        switch self {
        case .empty: "empty value: a battery level is exactly one byte"
        case .wrongLength(let count): "\(count) bytes: a battery level is exactly one byte"
        case .reserved(let value): "\(value) is not a percentage: 101-255 reserved for future use"
        }
    }
}
