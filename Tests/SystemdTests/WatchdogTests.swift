import Foundation
import Testing

@testable import Systemd

#if canImport(Glibc)
import Glibc
#endif

/// sd_watchdog_enabled through the real libsystemd, in child processes whose WATCHDOG_USEC and
/// WATCHDOG_PID are set as systemd would (or would not) set them.
@Suite(.timeLimit(.minutes(10)))
struct WatchdogTests {
    /// `pid`: "unset", "self" (this child), "other" (its parent, the test runner).
    /// `expected`: "interval ping" in nanoseconds, "none", or "error <errno>".
    @Test(
        arguments: [
            ("10000000", "unset", "10000000000 5000000000"),
            ("10000000", "self", "10000000000 5000000000"),
            ("3000001", "self", "3000001000 1500000500"),
            ("10000000", "other", "none"),
            (nil, "unset", "none"),
            ("ten seconds", "unset", "error \(EINVAL)"),
            ("0", "unset", "error \(EINVAL)"),
            ("10000000", "not-a-pid", "error \(EINVAL)"),
        ] as [(String?, String, String)])
    func interval(usec: String?, pid: String, expected: String) async throws {
        let result = try await #require(
            processExitsWith: .success, observing: [\.standardOutputContent]
        ) { [usec = usec as String?, pid = pid as String] in
            if let usec { setenv("WATCHDOG_USEC", usec, 1) } else { unsetenv("WATCHDOG_USEC") }
            switch pid {
            case "unset": unsetenv("WATCHDOG_PID")
            case "self": setenv("WATCHDOG_PID", String(getpid()), 1)
            case "other": setenv("WATCHDOG_PID", String(getppid()), 1)
            default: setenv("WATCHDOG_PID", pid, 1)
            }
            do {
                guard let interval = try Watchdog.interval(),
                    let ping = try Watchdog.pingInterval()
                else { return ChildOutput.write("none") }
                ChildOutput.write("\(Nanoseconds.text(interval)) \(Nanoseconds.text(ping))")
            } catch {
                ChildOutput.write("error \((error as? SystemdError)?.code ?? -1)")
            }
        }
        #expect(result.standardOutputText == expected)
    }
}

enum Nanoseconds {
    static func text(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
