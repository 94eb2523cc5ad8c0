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

    static let kind = DBusMockProcess.Kind(
        description: "the ModemManager simulator", service: service,
        templatePath: DaemonFixture.repositoryRoot + "/tools/modemmanager-sim/modemmanager.py",
        controlPath: managerPath, controlInterface: "org.pacer.ModemSim1")

    /// The process: PID, bus, unique name, controls and logs.
    public let process: DBusMockProcess
    public var bus: PrivateBus { process.bus }
    /// The bus's address (DBUS_SYSTEM_BUS_ADDRESS for a client under test).
    public var address: String { bus.address }
    public var directory: TemporaryDirectory { process.directory }
    private let scenarioState: Mutex<Scenario>

    /// Starts the simulator on `bus`, or on a private bus of its own, and returns once it owns
    /// org.freedesktop.ModemManager1.
    public init(
        _ scenario: Scenario = Scenario(),
        bus: PrivateBus? = nil,
        python: String = "/usr/bin/python3",
        timeout: Duration = .seconds(20)
    ) throws(ChildProcessError) {
        process = try DBusMockProcess(Self.kind, bus: bus, python: python, directoryPrefix: "pacer-mm-sim")
        scenarioState = Mutex(scenario)
        try start(timeout: timeout)
    }

    public var scenario: Scenario { scenarioState.withLock { $0 } }

    public var pid: pid_t? { process.pid }

    public var isRunning: Bool { process.isRunning }

    /// Starts the simulator (when stopped) and waits until it owns the name. The scenario's
    /// modems start over at Modem/0, as they do when ModemManager restarts.
    public func start(timeout: Duration = .seconds(20)) throws(ChildProcessError) {
        try process.start(scenario, timeout: timeout)
    }

    /// Stops the simulator by PID (SIGTERM, then SIGKILL after `grace`); the name loses its
    /// owner. A bus the fixture made itself is stopped by `close()` or deinit, not here.
    public func stop(grace: Duration = .seconds(3)) {
        process.stop(grace: grace)
    }

    /// Kills the simulator by PID and starts it again with the scenario it started with.
    public func restart(timeout: Duration = .seconds(20)) throws(ChildProcessError) {
        stop()
        try start(timeout: timeout)
    }

    /// Stops the simulator and, when the fixture made it, the bus.
    public func close() {
        process.close()
    }

    /// The unique name owning org.freedesktop.ModemManager1 now, nil when nobody does.
    public func busOwner() -> String? { process.busOwner() }

    /// The unique name the simulator got when it last started.
    public var uniqueName: String? { process.uniqueName }

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
        try process.control(method, signature, arguments)
    }

    // MARK: Diagnostics

    /// What the current (or last) simulator wrote to stderr.
    public func standardError() -> String { process.standardError() }

    /// The current (or last) simulator's log: one line per event (messages, modems, controls).
    public func log() -> String { process.log() }
}
