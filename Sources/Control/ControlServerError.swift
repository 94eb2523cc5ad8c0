#if canImport(Glibc)
import Glibc
#endif

/// Why the control socket could not be set up.
public enum ControlServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A Unix socket path holds at most 107 bytes.
    case socketPathTooLong(path: String)
    /// Something other than a socket is at the path; it is left alone.
    case notASocket(path: String)
    /// Another process is accepting connections on the socket (a second pacerd?).
    case alreadyListening(path: String)
    case systemCall(String, path: String?, errno: Int32)

    public var description: String {
        switch self {
        case .socketPathTooLong(let path):
            "control socket path is too long (at most \(Syscalls.maximumSocketPathBytes) bytes) or empty: \(path)"
        case .notASocket(let path):
            "\(path) exists and is not a socket; refusing to replace it"
        case .alreadyListening(let path):
            "another process is already listening on \(path) (is pacerd running twice?)"
        case .systemCall(let call, let path, let code):
            "\(call)\(path.map { " \($0)" } ?? ""): \(Syscalls.errorText(code))"
        }
    }
}
