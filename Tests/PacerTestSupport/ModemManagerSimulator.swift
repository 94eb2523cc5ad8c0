import Foundation
import Glibc
import Synchronization

/// A simulated ModemManager (tools/modemmanager-sim/modemmanager.py, a python-dbusmock template
/// run by Debian's /usr/bin/python3) owning org.freedesktop.ModemManager1 on a `PrivateBus`,
/// with SMS-capable modems that tests steer through the simulator's org.pacer.ModemSim1
/// controls. See tools/modemmanager-sim/README.md for what the simulator does.
///
/// Every method blocks (async tests call them through `offPool`). Controls run
/// `busctl --address=… call org.freedesktop.ModemManager1 /org/freedesktop/ModemManager1
/// org.pacer.ModemSim1 …` as a child process. The simulator is stopped by PID (`stop()`, or when
/// the last reference goes); a bus the fixture made itself goes with it.
public final class ModemManagerSimulator: Sendable {
    /// A modem in the simulated world; nil fields keep the simulator's defaults (README.md).
    public struct Modem: Sendable, Equatable, Encodable {
        public var manufacturer: String?
        public var model: String?
        public var revision: String?
        public var imei: String?
        public var ownNumber: String?
        /// MMModemState: 8 registered, 6 enabled, 3 disabled.
        public var state: Int32?
        /// Percent.
        public var signal: Int?
        /// MMModemAccessTechnology bits.
        public var accessTechnologies: UInt32?
        /// false: the modem has no Messaging interface (it cannot do SMS).
        public var messaging: Bool?
        /// false: the modem has no Voice interface (it cannot place calls).
        public var voice: Bool?

        public init(
            manufacturer: String? = nil, model: String? = nil, revision: String? = nil, imei: String? = nil,
            ownNumber: String? = nil, state: Int32? = nil, signal: Int? = nil, accessTechnologies: UInt32? = nil,
            messaging: Bool? = nil, voice: Bool? = nil
        ) {
            self.manufacturer = manufacturer
            self.model = model
            self.revision = revision
            self.imei = imei
            self.ownNumber = ownNumber
            self.state = state
            self.signal = signal
            self.accessTechnologies = accessTechnologies
            self.messaging = messaging
            self.voice = voice
        }

        enum CodingKeys: String, CodingKey {
            case manufacturer, model, revision, imei, state, signal, messaging, voice
            case ownNumber = "own_number"
            case accessTechnologies = "access_technologies"
        }
    }

    /// What the simulator starts with (its `-p` parameters).
    public struct Scenario: Sendable, Encodable {
        /// Default: one modem with the simulator's defaults. Empty: ModemManager without modems.
        public var modems: [Modem]
        /// Seconds Sms.Send takes; nil: the simulator's 0.3.
        public var sendDelay: Double?
        /// true (default): State is SENDING while a Send is in flight. false: as ModemManager
        /// 1.20 does, it stays UNKNOWN until SENT.
        public var sendingState: Bool?
        public var ownNumber: String?
        /// Seconds from a call's dialing to ringing-out (nil: 0.2), and on to active (nil: 0.3).
        public var ringDelay: Double?
        public var answerDelay: Double?
        /// Seconds a call stays active before the other end hangs up; nil: never.
        public var remoteHangupAfter: Double?
        /// Seconds from SENT to the status report of a message that asked for one; nil: no report.
        public var reportDelay: Double?
        /// The report's MMSmsDeliveryState; nil: 0 (completed-received).
        public var reportState: UInt32?

        public init(modems: [Modem] = [Modem()], sendDelay: Double? = nil, sendingState: Bool? = nil, ownNumber: String? = nil,
                    ringDelay: Double? = nil, answerDelay: Double? = nil, remoteHangupAfter: Double? = nil,
                    reportDelay: Double? = nil, reportState: UInt32? = nil) {
            self.reportDelay = reportDelay
            self.reportState = reportState
            self.modems = modems
            self.sendDelay = sendDelay
            self.sendingState = sendingState
            self.ownNumber = ownNumber
            self.ringDelay = ringDelay
            self.answerDelay = answerDelay
            self.remoteHangupAfter = remoteHangupAfter
        }

        enum CodingKeys: String, CodingKey {
            case modems
            case sendDelay = "send_delay"
            case sendingState = "sending_state"
            case ownNumber = "own_number"
            case ringDelay = "ring_delay"
            case answerDelay = "answer_delay"
            case remoteHangupAfter = "remote_hangup_after"
            case reportDelay = "report_delay"
            case reportState = "report_state"
        }

        /// The `-p` argument.
        public func parametersJSON() throws(ChildProcessError) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            do {
                return String(decoding: try encoder.encode(self), as: UTF8.self)
            } catch {
                throw ChildProcessError(message: "cannot encode the scenario: \(error)")
            }
        }
    }

    /// A message that reached SENT (Sent()).
    public struct SentMessage: Sendable, Equatable {
        public var number: String
        public var text: String
        /// When it reached SENT, in seconds since the epoch.
        public var time: Double
        /// Its SMS object.
        public var path: String

        public init(number: String, text: String, time: Double, path: String) {
            self.number = number
            self.text = text
            self.time = time
            self.path = path
        }
    }

    /// A voice call a client created (Calls()).
    public struct PlacedCall: Sendable, Equatable {
        public var number: String
        /// Its Call object.
        public var path: String
        /// Every state it went through, by mmcli's names, from "unknown".
        public var states: [String]
        /// "client" (Hangup), "remote", "removed" (the modem went), "" while not ended.
        public var endedBy: String
        /// Seconds since the epoch.
        public var created: Double
        /// When it became active; 0: never.
        public var activeAt: Double
    }

    /// GetStats, typed.
    public struct Stats: Sendable, Equatable {
        /// Messaging.Create calls that made a message.
        public var created: UInt32
        /// Sms.Send calls, refused ones included.
        public var sendCalls: UInt32
        public var sent: UInt32
        public var failed: UInt32
        /// Sends that will never be answered (hang mode).
        public var hung: UInt32
        public var deleted: UInt32
        /// Status reports the modem received.
        public var reports: UInt32
        /// Sends in flight (waiting for the send delay).
        public var pending: UInt32
        public var failRemaining: UInt32
        public var modems: UInt32
        /// SMS objects that exist now.
        public var messages: UInt32
        public var sendDelay: Double
        public var hang: Bool
    }

    public static let service = "org.freedesktop.ModemManager1"
    public static let managerPath = "/org/freedesktop/ModemManager1"

    /// /org/freedesktop/ModemManager1/Modem/N
    public static func modemPath(_ index: Int) -> String { managerPath + "/Modem/\(index)" }

    /// The repository's root, from this file's place in it (Tests/PacerTestSupport/).
    public static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    public static var templatePath: String { repositoryRoot + "/tools/modemmanager-sim/modemmanager.py" }

    public let bus: PrivateBus
    /// The bus's address (DBUS_SYSTEM_BUS_ADDRESS for a client under test).
    public var address: String { bus.address }
    public let directory: TemporaryDirectory
    private let python: String
    private let ownsBus: Bool
    private let state: Mutex<State>

    private struct State {
        var scenario: Scenario
        var process: ChildProcess?
        var runs = 0
        var owner: String?
    }

    /// Starts the simulator on `bus`, or on a private bus of its own, and returns once it owns
    /// org.freedesktop.ModemManager1.
    public init(
        _ scenario: Scenario = Scenario(),
        bus: PrivateBus? = nil,
        python: String = "/usr/bin/python3",
        timeout: Duration = .seconds(20)
    ) throws(ChildProcessError) {
        if let bus {
            self.bus = bus
            ownsBus = false
        } else {
            self.bus = try PrivateBus()
            ownsBus = true
        }
        self.python = python
        directory = try TemporaryDirectory(prefix: "pacer-mm-sim")
        state = Mutex(State(scenario: scenario))
        try start(timeout: timeout)
    }

    deinit {
        state.withLock { $0.process }?.killAndReap()
        if ownsBus { bus.stop() }
    }

    public var scenario: Scenario { state.withLock { $0.scenario } }

    public var pid: pid_t? { state.withLock { $0.process?.pid } }

    public var isRunning: Bool { state.withLock { $0.process }?.isRunning ?? false }

    /// Starts the simulator (when stopped) and waits until it owns the name. The scenario's
    /// modems start over at Modem/0, as they do when ModemManager restarts.
    public func start(timeout: Duration = .seconds(20)) throws(ChildProcessError) {
        let (scenario, run, previousOwner) = try state.withLock { state throws(ChildProcessError) in
            if state.process?.isRunning == true {
                throw ChildProcessError(message: "the ModemManager simulator is running already")
            }
            state.runs += 1
            return (state.scenario, state.runs, state.owner)
        }
        guard FileManager.default.isReadableFile(atPath: Self.templatePath) else {
            throw ChildProcessError(message: "no simulator template at \(Self.templatePath)")
        }
        var environment = ProcessInfo.processInfo.environment
        // Debian's Python with Debian's dbusmock: nothing from a pyenv or virtualenv may leak in.
        for name in ["PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"] { environment[name] = nil }
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  // no __pycache__ in tools/modemmanager-sim
        environment["PYTHONUNBUFFERED"] = "1"
        let process = try ChildProcess(
            python,
            ["-m", "dbusmock", "--system", "--template", Self.templatePath, "-p", try scenario.parametersJSON()],
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
                    message: "the ModemManager simulator exited (\(status)) before owning \(Self.service): \(standardError())")
            }
            if ContinuousClock.now >= deadline {
                process.blockingTerminate()
                throw ChildProcessError(
                    message: "the ModemManager simulator did not own \(Self.service) within \(timeout): \(standardError())")
            }
            usleep(20_000)
        }
    }

    /// Stops the simulator by PID (SIGTERM, then SIGKILL after `grace`); the name loses its
    /// owner. A bus the fixture made itself is stopped by `close()` or deinit, not here.
    public func stop(grace: Duration = .seconds(3)) {
        guard let process = state.withLock({ $0.process }) else { return }
        process.blockingTerminate(grace: grace)
    }

    /// Kills the simulator by PID and starts it again with the scenario it started with.
    public func restart(timeout: Duration = .seconds(20)) throws(ChildProcessError) {
        stop()
        try start(timeout: timeout)
    }

    /// Stops the simulator and, when the fixture made it, the bus.
    public func close() {
        stop()
        if ownsBus { bus.stop() }
    }

    /// The unique name owning org.freedesktop.ModemManager1 now, nil when nobody does.
    public func busOwner() -> String? {
        guard
            let result = try? BlockingCommand.run(
                "busctl",
                ["--address=" + bus.address, "--json=short", "--", "call", "org.freedesktop.DBus",
                 "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", "s", Self.service],
                timeout: .seconds(10)),
            result.succeeded,
            let reply = try? JSON(parsing: result.standardOutput)
        else { return nil }
        return reply["data"]?[0]?.string
    }

    /// The unique name the simulator got when it last started.
    public var uniqueName: String? { state.withLock { $0.owner } }

    // MARK: Controls

    /// How long each Send takes from now on.
    public func setSendDelay(_ seconds: Double) throws(ChildProcessError) {
        try control("SetSendDelay", "d", [String(seconds)])
    }

    /// The next `count` sends fail after the send delay with this D-Bus error; the message goes
    /// back to the state it had. `count` 0 clears what is left of an earlier injection.
    public func failNextSends(
        count: UInt32,
        errorName: String = "org.freedesktop.ModemManager1.Error.Message.NetworkTimeout",
        message: String = "Network timeout"
    ) throws(ChildProcessError) {
        try control("FailNextSends", "uss", [String(count), errorName, message])
    }

    /// true: Send never replies from now on (the client must time out).
    public func setHang(_ hang: Bool) throws(ChildProcessError) {
        try control("SetHang", "b", [hang ? "true" : "false"])
    }

    /// A new default modem at the next index; its path.
    @discardableResult
    public func addModem() throws(ChildProcessError) -> String {
        let reply = try control("AddModem", "", [])
        guard let path = reply["data"]?[0]?.string else { throw ChildProcessError(message: "AddModem answered \(reply)") }
        return path
    }

    /// The lowest-numbered modem goes, as if unplugged; its path.
    @discardableResult
    public func removeModem() throws(ChildProcessError) -> String {
        let reply = try control("RemoveModem", "", [])
        guard let path = reply["data"]?[0]?.string else { throw ChildProcessError(message: "RemoveModem answered \(reply)") }
        return path
    }

    /// The lowest-numbered modem's MMModemState (StateChanged and PropertiesChanged follow).
    public func setModemState(_ state: Int32) throws(ChildProcessError) {
        try control("SetModemState", "i", [String(state)])
    }

    /// The lowest-numbered modem's signal quality, in percent.
    public func setSignalQuality(_ percent: UInt32) throws(ChildProcessError) {
        try control("SetSignalQuality", "u", [String(percent)])
    }

    /// The paths of the modems present.
    public func modemPaths() throws(ChildProcessError) -> [String] {
        let reply = try control("ListModems", "", [])
        return (reply["data"]?[0]?.array ?? []).compactMap(\.string)
    }

    /// Every message that reached SENT, in order.
    public func sent() throws(ChildProcessError) -> [SentMessage] {
        let reply = try control("Sent", "", [])
        return (reply["data"]?[0]?.array ?? []).compactMap { entry in
            guard let fields = entry.array, fields.count == 4, let number = fields[0].string, let text = fields[1].string,
                  let time = fields[2].number, let path = fields[3].string else { return nil }
            return SentMessage(number: number, text: text, time: time, path: path)
        }
    }

    /// Every call ever created, in order.
    public func calls() throws(ChildProcessError) -> [PlacedCall] {
        let reply = try control("Calls", "", [])
        return (reply["data"]?[0]?.array ?? []).compactMap { entry in
            guard let fields = entry.array, fields.count == 6, let number = fields[0].string, let path = fields[1].string,
                  let states = fields[2].array, let endedBy = fields[3].string, let created = fields[4].number,
                  let activeAt = fields[5].number else { return nil }
            return PlacedCall(number: number, path: path, states: states.compactMap(\.string), endedBy: endedBy, created: created,
                              activeAt: activeAt)
        }
    }

    /// The other end hangs up every call in progress; how many there were.
    @discardableResult
    public func remoteHangup() throws(ChildProcessError) -> Int {
        Int(try control("RemoteHangup", "", [])["data"]?[0]?.number ?? 0)
    }

    /// Call timing for calls started from now on; nil answer: never answered, nil hang-up: the
    /// other end never hangs up.
    public func setCallTiming(ringDelay: Double, answerDelay: Double?, remoteHangupAfter: Double?) throws(ChildProcessError) {
        try control("SetCallTiming", "ddd", [String(ringDelay), String(answerDelay ?? -1), String(remoteHangupAfter ?? -1)])
    }

    /// Messages sent from now on that asked for a status report get one `delay` s after SENT with
    /// this MMSmsDeliveryState; nil delay: no report.
    public func setDeliveryReports(delay: Double?, state: UInt32 = 0) throws(ChildProcessError) {
        try control("SetDeliveryReports", "du", [String(delay ?? -1), String(state)])
    }

    public func stats() throws(ChildProcessError) -> Stats {
        let reply = try control("GetStats", "", [])
        guard let members = reply["data"]?[0]?.object else {
            throw ChildProcessError(message: "GetStats answered \(reply)")
        }
        func value(_ key: String) -> JSON? { members[key]?["data"] }
        func count(_ key: String) -> UInt32 { UInt32(value(key)?.number ?? 0) }
        return Stats(
            created: count("created"), sendCalls: count("send_calls"), sent: count("sent"), failed: count("failed"),
            hung: count("hung"), deleted: count("deleted"), reports: count("reports"), pending: count("pending"),
            failRemaining: count("fail_remaining"), modems: count("modems"), messages: count("messages"),
            sendDelay: value("send_delay")?.number ?? 0, hang: value("hang")?.bool ?? false)
    }

    /// Calls org.pacer.ModemSim1.`method` with busctl's signature and arguments; busctl's JSON
    /// reply ({"type", "data"}), or an error with busctl's message.
    @discardableResult
    public func control(_ method: String, _ signature: String, _ arguments: [String]) throws(ChildProcessError) -> JSON {
        var command = ["--address=" + bus.address, "--json=short", "--timeout=15", "--", "call",
                       Self.service, Self.managerPath, "org.pacer.ModemSim1", method]
        if !signature.isEmpty { command += [signature] + arguments }
        let result = try BlockingCommand.run("busctl", command, timeout: .seconds(20))
        guard result.succeeded else {
            throw ChildProcessError(
                message: "org.pacer.ModemSim1.\(method) \(arguments) failed: \(result.standardError.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        let output = result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        return output.isEmpty ? .null : try JSON(parsing: output)
    }

    // MARK: Diagnostics

    /// What the current (or last) simulator wrote to stderr.
    public func standardError() -> String {
        let run = state.withLock { $0.runs }
        return (try? String(contentsOfFile: directory.file("simulator-\(run).err"), encoding: .utf8)) ?? ""
    }

    /// The current (or last) simulator's log: one line per event (messages, modems, controls).
    public func log() -> String {
        let run = state.withLock { $0.runs }
        return (try? String(contentsOfFile: directory.file("simulator-\(run).log"), encoding: .utf8)) ?? ""
    }
}
