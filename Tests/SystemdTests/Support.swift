import Foundation
import PacerTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Paths, temporary directories and child commands shared by the suites.
enum Support {
    /// `<repo>/Tests/SystemdTests/Support.swift` → `<repo>`.
    static let repositoryRoot: String = URL(filePath: #filePath)
        .deletingLastPathComponent()  // SystemdTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repo root
        .path

    static func repositoryFile(_ relative: String) -> String { repositoryRoot + "/" + relative }

    /// A fresh directory under /tmp, removed by the caller with `removeDirectory`.
    static func makeTemporaryDirectory() throws -> String {
        var template = Array("/tmp/pacer-systemd-tests-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        return String(cString: made)
    }

    static func removeDirectory(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    struct CommandResult {
        let status: Int32
        let standardOutput: String
        let standardError: String
    }

    /// Runs a program to completion with its output in files (no pipe can fill up and stall it),
    /// on a thread of its own: udevadm and systemd-analyze take seconds on a loaded machine, and
    /// waiting for them on one of the cooperative pool's threads stalls the other tests.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> CommandResult {
        try await offPool { try runBlocking(executable, arguments, environment: environment) }
    }

    static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> CommandResult {
        // A deadline: a wait without one cannot be ended by the test's time limit.
        let result = try BlockingCommand.run(executable, arguments, environment: environment, timeout: .seconds(300))
        let status: Int32 = switch result.status {
        case .exited(let code): code
        case .signalled(let signal): 128 + signal
        }
        return CommandResult(status: status, standardOutput: result.standardOutput, standardError: result.standardError)
    }

    static func isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

    /// The first executable of that name on the usual system paths.
    static func tool(_ name: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"].map { $0 + name }.first(where: isExecutable)
    }
}

/// What a child process (an exit test) wrote, as text.
extension ExitTest.Result {
    var standardOutputText: String { String(decoding: standardOutputContent, as: UTF8.self) }
    var standardErrorText: String { String(decoding: standardErrorContent, as: UTF8.self) }
}

/// For exit tests: a child reports what it saw on its stdout, which the parent observes.
enum ChildOutput {
    static func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
    }
}
