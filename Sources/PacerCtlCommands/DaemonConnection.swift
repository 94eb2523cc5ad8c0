import Control
import PacerConfig

#if canImport(Glibc)
import Glibc
#endif

/// pacerctl's line to pacerd: the socket from `--socket`, `$PACER_SOCKET`, the config's
/// `[control] socket`, or /run/pacer/control.sock. Failures become a message and an exit status.
struct DaemonConnection {
    let client: ControlClient

    /// Connects, or returns nil when no daemon is there (callers that can read the store file
    /// instead do so); any other failure ends pacerctl with its message.
    static func connect(socket option: String?, configuration: PacerConfiguration, required: Bool) -> DaemonConnection? {
        let path = ControlSocketPath.resolve(option: option, configured: configuration.controlSocket)
        do {
            return DaemonConnection(client: try ControlClient(socketPath: path))
        } catch {
            switch error {
            case .noSocket, .connectionRefused:
                if !required { return nil }
            default:
                break
            }
            printError("pacerctl: \(error)")
            Glibc.exit(69)  // EX_UNAVAILABLE
        }
    }

    /// Sends a command; a refusal (no run to stop, no such run) or a broken reply ends pacerctl
    /// with the daemon's message.
    @discardableResult
    func call(_ command: String, _ arguments: [String: JSONValue] = [:], onChunk: ((String) throws -> Void)? = nil) -> JSONValue? {
        do {
            return try client.call(command, arguments, onChunk: onChunk)
        } catch let error as ControlError {
            printError("pacerctl: \(error.message)")
            Glibc.exit(error.code == .notFound ? 66 : error.code == .conflict ? 75 : error.code == .badRequest ? 64 : error.code == .unavailable ? 69 : 70)
        } catch {
            printError("pacerctl: \(error)")
            Glibc.exit(69)
        }
    }
}
