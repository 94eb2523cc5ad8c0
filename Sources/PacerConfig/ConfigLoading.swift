/// Why a config file could not be used.
public enum ConfigLoadError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(path: String)
    case unreadable(path: String, reason: String)
    case invalid(ConfigError)

    public var description: String {
        switch self {
        case .missing(let path): "\(path): no such config file"
        case .unreadable(let path, let reason): "\(path): cannot read config (\(reason))"
        case .invalid(let error): error.description
        }
    }
}

extension PacerConfiguration {
    /// Reads and checks a config file. An explicitly named file must exist; the default one may
    /// be absent (defaults then apply).
    public static func load(path explicitPath: String?) throws(ConfigLoadError) -> PacerConfiguration {
        let path = explicitPath ?? defaultPath
        let text: String
        do {
            text = try TextFile.contents(atPath: path)
        } catch {
            switch error {
            case .missing:
                if explicitPath == nil { return PacerConfiguration() }
                throw .missing(path: path)
            case .unreadable(let reason):
                throw .unreadable(path: path, reason: reason)
            }
        }
        do {
            return try parse(text, file: path)
        } catch {
            throw .invalid(error)
        }
    }
}
