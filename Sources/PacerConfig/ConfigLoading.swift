#if canImport(Glibc)
import Glibc
#endif

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
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT {
                if explicitPath == nil { return PacerConfiguration() }
                throw .missing(path: path)
            }
            throw .unreadable(path: path, reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            bytes += chunk[0..<n]
            guard bytes.count <= 1 << 20 else { throw .unreadable(path: path, reason: "larger than 1 MiB") }
        }
        do {
            return try parse(String(decoding: bytes, as: UTF8.self), file: path)
        } catch {
            throw .invalid(error)
        }
    }
}
