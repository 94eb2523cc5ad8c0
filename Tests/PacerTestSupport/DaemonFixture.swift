import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One pacerd as systemd would run it (Type=notify: NOTIFY_SOCKET to a listener here), with its
/// own config, store and control socket in a temporary directory, and pacerctl to talk to it.
public final class DaemonFixture: @unchecked Sendable {
    public static let repositoryRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()
    /// ../shared/data beside the repository, or PACER_SHARED_DATA (a path that does not exist
    /// shows what a clone without the data does: the tests that need it skip, saying so).
    public static let sharedData = ProcessInfo.processInfo.environment["PACER_SHARED_DATA"] ?? repositoryRoot + "/../shared/data"
    public static let hasSharedData = FileManager.default.fileExists(atPath: sharedData + "/sim")

    /// The built executables, next to the test bundle.
    public static func binary(_ name: String) -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return repositoryRoot + "/.build/debug/" + name
    }

    public let directory: TemporaryDirectory
    public let gpsPort: UInt16
    public var configPath: String { directory.file("pacer.toml") }
    public var databasePath: String { directory.file("pacer.db") }
    public var socketPath: String { directory.file("control.sock") }
    public private(set) var notify: NotifyListener
    public private(set) var process: ChildProcess?
    public private(set) var starts = 0
    public var stderrPath: String { directory.file("pacerd-\(starts).err") }

    public init(gpsPort: UInt16, extraConfig: String = "") throws {
        directory = try TemporaryDirectory(prefix: "pacer-daemon")
        self.gpsPort = gpsPort
        notify = try NotifyListener(directory: directory.path)
        try writeConfig(extraConfig)
    }

    public func writeConfig(_ extra: String = "") throws {
        // The control group is root's: the tests run as root and no "pacer" group exists here.
        try """
            [gps]
            host = "127.0.0.1"
            port = \(gpsPort)
            [storage]
            path = "\(databasePath)"
            [control]
            socket = "\(socketPath)"
            group = "root"
            \(extra)
            """.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Starts pacerd; returns when it said READY=1 (and when it did).
    @discardableResult
    public func start(environment extra: [String: String] = [:]) async throws -> ContinuousClock.Instant {
        try await offPool { try self.startBlocking(environment: extra) }
    }

    private func startBlocking(environment extra: [String: String]) throws -> ContinuousClock.Instant {
        starts += 1
        let readyBefore = notify.assignments.filter { $0.line == "READY=1" }.count
        let launched = ContinuousClock.now
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        environment.removeValue(forKey: "JOURNAL_STREAM")
        environment.merge(extra) { $1 }
        process = try ChildProcess(DaemonFixture.binary("pacerd"), ["--config", configPath], environment: environment,
                                   stderr: .file(stderrPath))
        let deadline = ContinuousClock.now + .seconds(20)
        while notify.assignments.filter({ $0.line == "READY=1" }).count == readyBefore {
            if let status = process?.status { throw FixtureError("pacerd exited (\(status)) before READY=1: \(stderr)") }
            if ContinuousClock.now > deadline { throw FixtureError("no READY=1 within 20 s: \(stderr)") }
            usleep(2000)
        }
        readyLatency = notify.assignments.filter { $0.line == "READY=1" }.last!.at - launched
        return launched
    }

    public private(set) var readyLatency: Duration = .zero

    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// SIGTERM and wait; the exit status.
    public func stop() async -> ChildProcess.Status? {
        guard let process else { return nil }
        process.send(SIGTERM)
        let status = await process.waitForExit(timeout: .seconds(20))
        if status == nil { _ = process.killAndReap() }
        return status
    }

    public func kill() -> ChildProcess.Status? {
        process?.killAndReap()
    }

    public struct CtlResult: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs pacerctl against this daemon's socket.
    public func ctl(_ arguments: String...) async throws -> CtlResult {
        try await Self.run(Self.binary("pacerctl"), ["--socket", socketPath] + arguments)
    }

    public static func run(_ executable: String, _ arguments: [String]) async throws -> CtlResult {
        try await offPool { try runBlocking(executable, arguments) }
    }

    /// Runs a command to completion. Through `BlockingCommand` (posix_spawn with every other
    /// descriptor closed, output in files, a deadline) rather than Foundation's Process with
    /// pipes: a pipe's write end inherited by a long-lived child started at the same moment by
    /// another test keeps `readDataToEndOfFile` waiting for ever, and a wait without a deadline
    /// cannot be ended by a test's time limit.
    public static func runBlocking(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(180)) throws -> CtlResult {
        let result = try BlockingCommand.run(executable, arguments, timeout: timeout)
        let status: Int32 = switch result.status {
        case .exited(let code): code
        case .signalled(let signal): 128 + signal
        }
        return CtlResult(status: status, stdout: result.standardOutput, stderr: result.standardError)
    }

    /// `pacerctl status --json`, parsed.
    public func status() async throws -> [String: any Sendable] {
        try await offPool { try self.statusBlocking() }
    }

    private func statusBlocking() throws -> [String: any Sendable] {
        let result = try Self.runBlocking(Self.binary("pacerctl"), ["--socket", socketPath, "status", "--json"])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: any Sendable] else {
            throw FixtureError("pacerctl status failed (\(result.status)): \(result.stderr)")
        }
        return object
    }

    /// Polls `status` until `predicate` holds.
    @discardableResult
    public func waitForStatus(timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(20),
                              _ predicate: @escaping @Sendable ([String: any Sendable]) -> Bool) async throws -> [String: any Sendable] {
        try await offPool { try self.waitForStatusBlocking(timeout: timeout, interval: interval, predicate) }
    }

    private func waitForStatusBlocking(timeout: Duration, interval: Duration, _ predicate: ([String: any Sendable]) -> Bool) throws -> [String: any Sendable] {
        let deadline = ContinuousClock.now + timeout
        var last: [String: any Sendable] = [:]
        while ContinuousClock.now < deadline {
            last = try statusBlocking()
            if predicate(last) { return last }
            let (seconds, attoseconds) = interval.components
            usleep(useconds_t(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        }
        throw FixtureError("status never matched; last: \(last)\nstderr: \(stderr)")
    }

    /// gpsfake playing `sim/ROUTE.nmea` (held until released) and a pacerd connected to it.
    public static func onGPSFake(route: String, cycle: Double) async throws -> (GPSFake, DaemonFixture) {
        let fake = try GPSFake(log: sharedData + "/sim/\(route).nmea", options: .init(cycle: cycle, holdUntilReleased: true))
        try await fake.start()
        let daemon = try DaemonFixture(gpsPort: fake.port)
        try await daemon.start()
        try await daemon.waitForStatus { $0["gps"] as? String == "no_fix" }
        return (fake, daemon)
    }

    /// `run start`, then lets gpsfake play: the run gets every epoch of the log.
    public func startRun(releasing fake: GPSFake) async throws -> CtlResult {
        let start = try await ctl("run", "start")
        fake.release()
        return start
    }

    public func cleanUp() {
        if let process, process.isRunning { _ = process.killAndReap() }
        notify.stop()
        directory.remove()
    }
}

public struct FixtureError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
