#if canImport(Glibc)
import Glibc
#endif

/// Why pacerctl could not talk to pacerd. The descriptions are meant to be printed as they are.
/// (An error the daemon replied with is a `ControlError` instead.)
public enum ControlClientError: Error, Sendable, Equatable, CustomStringConvertible {
    case noSocket(path: String)
    /// `group` names the socket's group (or its directory's) when it could be read.
    case permissionDenied(path: String, group: String?)
    case connectionRefused(path: String)
    case invalidPath(path: String)
    case timedOut(path: String, after: Duration)
    case disconnected(path: String)
    case malformedReply(String)
    case systemCall(String, path: String, errno: Int32)

    public var description: String {
        switch self {
        case .noSocket(let path):
            "pacerd is not running? no socket at \(path)"
        case .permissionDenied(let path, let group?):
            "permission denied on \(path): the control socket is for group '\(group)'; "
                + "add your user to it (sudo usermod -aG \(group) $USER, then log in again) or use sudo"
        case .permissionDenied(let path, nil):
            "permission denied on \(path); use sudo, or ask whoever runs pacerd for access"
        case .connectionRefused(let path):
            "connection refused at \(path): nothing is listening (pacerd stopped without removing its socket?)"
        case .invalidPath(let path):
            "not a usable socket path (empty, or longer than \(Syscalls.maximumSocketPathBytes) bytes): \(path)"
        case .timedOut(let path, let after):
            "pacerd did not reply within \(after) on \(path)"
        case .disconnected(let path):
            "pacerd closed the connection on \(path) before replying"
        case .malformedReply(let detail):
            "malformed reply from pacerd: \(detail)"
        case .systemCall(let call, let path, let code):
            "\(call) \(path): \(Syscalls.errorText(code))"
        }
    }

    /// The error for a failed connect(), with the group to join when access was denied.
    static func connectFailed(path: String, errno code: Int32) -> ControlClientError {
        switch code {
        case ENOENT, ENOTDIR: .noSocket(path: path)
        case EACCES, EPERM: .permissionDenied(path: path, group: owningGroupName(of: path))
        case ECONNREFUSED: .connectionRefused(path: path)
        default: .systemCall("connect", path: path, errno: code)
        }
    }

    /// The socket's group; when the socket cannot even be looked at, its directory's.
    static func owningGroupName(of path: String) -> String? {
        var info = stat()
        if stat(path, &info) != 0 {
            let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
            guard stat(directory, &info) == 0 else { return nil }
        }
        return SystemGroup.name(ofID: info.st_gid)
    }
}
