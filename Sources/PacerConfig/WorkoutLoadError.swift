/// Why a workout file could not be used.
public enum WorkoutLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(path: String)
    case unreadable(path: String, reason: String)
    case invalid(ConfigError)

    public var description: String {
        switch self {
        case .missing(let path): "\(path): no such workout file"
        case .unreadable(let path, let reason): "\(path): cannot read workout (\(reason))"
        case .invalid(let error): error.description
        }
    }
}
