import Foundation
import Glibc
import Synchronization

/// The built `pacer-cloud` serving a SQLite database on a free port of 127.0.0.1, with one device
/// registered (`pacer-cloud device add`). It can be stopped and started again on the same port
/// and database, as a server going away and coming back. Stopped by PID; every method blocks
/// (async tests call them through `offPool`).
public final class CloudServer: Sendable {
    public let directory: TemporaryDirectory
    public let port: UInt16
    /// The device's bearer token, printed once by `device add`.
    public let token: String
    public let databaseURL: String
    /// "http://127.0.0.1:PORT"
    public var url: String { "http://127.0.0.1:\(port)" }

    private let state = Mutex<(process: ChildProcess?, starts: Int)>((nil, 0))
    /// More `serve` options (`--smtp HOST:PORT`, `--public-url URL`).
    private let serveArguments: [String]

    /// Registers `device` in a new database and starts serving it, with `serveArguments` added.
    public init(device: String = "pacer-test", serveArguments: [String] = []) throws(ChildProcessError) {
        self.serveArguments = serveArguments
        directory = try TemporaryDirectory(prefix: "pacer-cloud")
        databaseURL = "sqlite:" + directory.file("cloud.db")
        let added: DaemonFixture.CtlResult
        do {
            added = try DaemonFixture.runBlocking(DaemonFixture.binary("pacer-cloud"), ["device", "add", device, "--database", databaseURL])
        } catch {
            throw ChildProcessError(message: "cannot run pacer-cloud device add: \(error)")
        }
        guard added.status == 0, let token = added.stdout.split(separator: "\n").first.map(String.init) else {
            throw ChildProcessError(message: "pacer-cloud device add failed: \(added.stderr)")
        }
        self.token = token
        port = try FreePort.tcp()
        try start()
    }

    deinit {
        state.withLock { $0.process }?.killAndReap()
    }

    public var isRunning: Bool { state.withLock { $0.process }?.isRunning ?? false }

    /// The running server's PID (nil when stopped): what a test reads /proc/PID/status of.
    public var processID: pid_t? { state.withLock { $0.process }.flatMap { $0.isRunning ? $0.pid : nil } }

    /// Starts serving (when stopped) and returns once /health answers.
    public func start(timeout: Duration = .seconds(20)) throws(ChildProcessError) {
        let run = try state.withLock { state throws(ChildProcessError) -> Int in
            if state.process?.isRunning == true { throw ChildProcessError(message: "pacer-cloud is running already") }
            state.starts += 1
            return state.starts
        }
        let process = try ChildProcess(
            DaemonFixture.binary("pacer-cloud"), ["serve", "--port", String(port), "--database", databaseURL] + serveArguments,
            stderr: .file(directory.file("cloud-\(run).err")))
        state.withLock { $0.process = process }
        let deadline = ContinuousClock.now + timeout
        while (try? Self.get(url + "/health", token: nil).status) != 200 {
            if let status = process.status {
                throw ChildProcessError(message: "pacer-cloud exited (\(status)) before answering /health: \(standardError())")
            }
            if ContinuousClock.now > deadline {
                process.blockingTerminate()
                throw ChildProcessError(message: "pacer-cloud did not answer /health within \(timeout): \(standardError())")
            }
            usleep(50_000)
        }
    }

    /// SIGTERM by PID (SIGKILL after `grace`); returns once it is gone. The database stays.
    @discardableResult
    public func stop(grace: Duration = .seconds(5)) -> ChildProcess.Status? {
        state.withLock { $0.process }?.blockingTerminate(grace: grace)
    }

    /// What the current (or last) server wrote to stderr.
    public func standardError() -> String {
        let run = state.withLock { $0.starts }
        return (try? String(contentsOfFile: directory.file("cloud-\(run).err"), encoding: .utf8)) ?? ""
    }

    /// GET through curl: the status (0 when nothing answered) and the body.
    public static func get(_ url: String, token: String?) throws -> (status: Int, body: Data) {
        let arguments = ["-s", "-o", "-", "-w", "\n%{http_code}"] + (token.map { ["-H", "Authorization: Bearer \($0)"] } ?? []) + [url]
        let result = try DaemonFixture.runBlocking("/usr/bin/curl", arguments)
        var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.popLast() ?? "") ?? 0
        return (status, Data(lines.joined(separator: "\n").utf8))
    }

    /// GET `path` as the device; the JSON object, or an error unless it answered 200.
    public func json(_ path: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: try body(path)) as? [String: Any] ?? [:]
    }

    /// GET `path` as the device, parsed by JSONDecoder: numbers exactly as sent (Linux's
    /// JSONSerialization may be one unit in the last place off).
    public func document(_ path: String) throws -> JSON {
        try JSON(parsing: String(decoding: try body(path), as: UTF8.self))
    }

    private func body(_ path: String) throws -> Data {
        let (status, body) = try Self.get(url + path, token: token)
        guard status == 200 else { throw FixtureError("GET \(path): \(status) \(String(decoding: body, as: UTF8.self))") }
        return body
    }
}
