#if canImport(Glibc)
import Glibc
#endif

/// Where pacerctl looks for the daemon's socket.
public enum ControlSocketPath {
    public static let defaultPath = "/run/pacer/control.sock"
    public static let environmentVariable = "PACER_SOCKET"

    /// `--socket PATH` first, then `$PACER_SOCKET`, then `configured` (a config file's
    /// `[control] socket`, when the caller read one), then the default. Empty values count as unset.
    /// `environment` nil reads the process environment.
    public static func resolve(
        option: String?, environment: [String: String]? = nil, configured: String? = nil
    ) -> String {
        let fromEnvironment: String? =
            if let environment { environment[environmentVariable] } else { getenv(environmentVariable).map { String(cString: $0) } }
        return [option, fromEnvironment, configured].lazy.compactMap { $0 }.first { !$0.isEmpty } ?? defaultPath
    }
}
