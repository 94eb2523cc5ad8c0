import Foundation
import Glibc
import Synchronization

/// A python-dbusmock template (tools/bluez-sim, tools/modemmanager-sim) run by Debian's
/// /usr/bin/python3 as a child process that owns a well-known name on a `PrivateBus`: started and
/// restarted until it owns the name, stopped by PID, its test controls called with busctl.
/// `BluetoothSimulator` and `ModemManagerSimulator` are one of these and their controls.
///
/// Every method blocks. The process is stopped by PID (`stop()`, or when the last reference
/// goes); a bus it made itself goes with it.
public final class DBusMockProcess: Sendable {
    /// What a simulator is, for the messages ("the Bluetooth simulator"), the name it owns, its
    /// template and where its controls are.
    public struct Kind: Sendable {
        public var description: String
        public var service: String
        public var templatePath: String
        public var controlPath: String
        public var controlInterface: String

        public init(description: String, service: String, templatePath: String, controlPath: String, controlInterface: String) {
            self.description = description
            self.service = service
            self.templatePath = templatePath
            self.controlPath = controlPath
            self.controlInterface = controlInterface
        }
    }

    public let kind: Kind
    public let bus: PrivateBus
    public let directory: TemporaryDirectory
    private let python: String
    private let ownsBus: Bool
    private let state = Mutex(State())

    private struct State {
        var process: ChildProcess?
        var runs = 0
        var owner: String?
    }

    /// On `bus`, or on a private bus of its own; not started yet.
    public init(_ kind: Kind, bus: PrivateBus?, python: String, directoryPrefix: String) throws(ChildProcessError) {
        self.kind = kind
        if let bus {
            self.bus = bus
            ownsBus = false
        } else {
            self.bus = try PrivateBus()
            ownsBus = true
        }
        self.python = python
        directory = try TemporaryDirectory(prefix: directoryPrefix)
    }

    deinit {
        state.withLock { $0.process }?.killAndReap()
        if ownsBus { bus.stop() }
    }

    public var pid: pid_t? { state.withLock { $0.process?.pid } }

    public var isRunning: Bool { state.withLock { $0.process }?.isRunning ?? false }

    /// The unique name the process got when it last started.
    public var uniqueName: String? { state.withLock { $0.owner } }

    /// Starts the template with `scenario` (as its `-p` JSON) when stopped, and waits until it
    /// owns the name.
    public func start(_ scenario: some Encodable, timeout: Duration) throws(ChildProcessError) {
        let parameters = try Self.parametersJSON(scenario)
        let (run, previousOwner) = try state.withLock { state throws(ChildProcessError) in
            if state.process?.isRunning == true {
                throw ChildProcessError(message: "\(kind.description) is running already")
            }
            state.runs += 1
            return (state.runs, state.owner)
        }
        guard FileManager.default.isReadableFile(atPath: kind.templatePath) else {
            throw ChildProcessError(message: "no simulator template at \(kind.templatePath)")
        }
        var environment = ProcessInfo.processInfo.environment
        // Debian's Python with Debian's dbusmock: nothing from a pyenv or virtualenv may leak in.
        for name in ["PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"] { environment[name] = nil }
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  // no __pycache__ in tools/
        environment["PYTHONUNBUFFERED"] = "1"
        let process = try ChildProcess(
            python,
            ["-m", "dbusmock", "--system", "--template", kind.templatePath, "-p", parameters],
            environment: environment,
            stdout: .file(directory.file("simulator-\(run).log")),
            stderr: .file(directory.file("simulator-\(run).err")))
        state.withLock { $0.process = process }

        let deadline = ContinuousClock.now + timeout
        while true {
            // A previous instance's name lingers until the daemon has seen its socket close.
            if let owner = busOwner(), owner != previousOwner {
                state.withLock { $0.owner = owner }
                return
            }
            if let status = process.status {
                throw ChildProcessError(
                    message: "\(kind.description) exited (\(status)) before owning \(kind.service): \(standardError())")
            }
            if ContinuousClock.now >= deadline {
                process.blockingTerminate()
                throw ChildProcessError(
                    message: "\(kind.description) did not own \(kind.service) within \(timeout): \(standardError())")
            }
            usleep(20_000)
        }
    }

    /// The `-p` argument: the scenario as JSON, keys sorted.
    static func parametersJSON(_ scenario: some Encodable) throws(ChildProcessError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return String(decoding: try encoder.encode(scenario), as: UTF8.self)
        } catch {
            throw ChildProcessError(message: "cannot encode the scenario: \(error)")
        }
    }

    /// Stops the process by PID (SIGTERM, then SIGKILL after `grace`); the name loses its owner.
    /// A bus it made itself is stopped by `close()` or deinit, not here.
    public func stop(grace: Duration = .seconds(3)) {
        guard let process = state.withLock({ $0.process }) else { return }
        process.blockingTerminate(grace: grace)
    }

    /// Stops the process and, when it made it, the bus.
    public func close() {
        stop()
        if ownsBus { bus.stop() }
    }

    /// The unique name owning the service now, nil when nobody does.
    public func busOwner() -> String? {
        guard
            let result = try? BlockingCommand.run(
                "busctl",
                ["--address=" + bus.address, "--json=short", "--", "call", "org.freedesktop.DBus",
                 "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", "s", kind.service],
                timeout: .seconds(10)),
            result.succeeded,
            let reply = try? JSON(parsing: result.standardOutput)
        else { return nil }
        return reply["data"]?[0]?.string
    }

    /// Calls the control interface's `method` with busctl's signature and arguments; busctl's
    /// JSON reply ({"type", "data"}), or an error with busctl's message.
    @discardableResult
    public func control(_ method: String, _ signature: String, _ arguments: [String]) throws(ChildProcessError) -> JSON {
        var command = ["--address=" + bus.address, "--json=short", "--timeout=15", "--", "call",
                       kind.service, kind.controlPath, kind.controlInterface, method]
        if !signature.isEmpty { command += [signature] + arguments }
        let result = try BlockingCommand.run("busctl", command, timeout: .seconds(20))
        guard result.succeeded else {
            throw ChildProcessError(
                message: "\(kind.controlInterface).\(method) \(arguments) failed: \(result.standardError.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let output = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        return output.isEmpty ? .null : try JSON(parsing: output)
    }

    /// What the current (or last) process wrote to stderr.
    public func standardError() -> String { lastRunFile("err") }

    /// The current (or last) process's log: one line per event.
    public func log() -> String { lastRunFile("log") }

    private func lastRunFile(_ suffix: String) -> String {
        let run = state.withLock { $0.runs }
        return (try? String(contentsOfFile: directory.file("simulator-\(run).\(suffix)"), encoding: .utf8)) ?? ""
    }
}
