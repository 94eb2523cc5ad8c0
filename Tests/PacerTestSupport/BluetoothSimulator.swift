import Foundation
import Glibc
import Synchronization

/// A simulated bluetoothd (tools/bluez-sim/bluez_hr.py, a python-dbusmock template run by
/// Debian's /usr/bin/python3) owning org.bluez on a `PrivateBus`, with heart-rate straps that
/// tests steer through the simulator's org.pacer.BluezSim1 controls. See
/// tools/bluez-sim/README.md for what the simulator does.
///
/// Every method blocks (async tests call them through `offPool`). Controls run
/// `busctl --address=… call org.bluez /org/bluez org.pacer.BluezSim1 …` as a child process.
/// The simulator is stopped by PID (`stop()`, or when the last reference goes); a bus the
/// fixture made itself goes with it.
public final class BluetoothSimulator: Sendable {
    /// A strap in the simulated world.
    public struct Strap: Sendable, Equatable, Encodable {
        public var address: String
        public var name: String
        public var rssi: Int
        /// Percent.
        public var battery: Int
        public var inRange: Bool
        /// Known to bluetoothd (bonded): its device object exists from the start, disconnected.
        /// Unpaired straps appear only when discovered.
        public var paired: Bool
        /// nil: the same as `paired`.
        public var trusted: Bool?
        /// "random" or "public".
        public var addressType: String
        /// A stream the strap runs from the start (as after a restart while streaming).
        public var stream: Stream?
        /// Where the strap's measurement counter starts.
        public var nextSequence: UInt32?

        public init(
            address: String,
            name: String = "Polar H10 7D3A1B2C",
            rssi: Int = -60,
            battery: Int = 85,
            inRange: Bool = true,
            paired: Bool = true,
            trusted: Bool? = nil,
            addressType: String = "random",
            stream: Stream? = nil,
            nextSequence: UInt32? = nil
        ) {
            self.address = address.uppercased()
            self.name = name
            self.rssi = rssi
            self.battery = battery
            self.inRange = inRange
            self.paired = paired
            self.trusted = trusted
            self.addressType = addressType
            self.stream = stream
            self.nextSequence = nextSequence
        }

        enum CodingKeys: String, CodingKey {
            case address, name, rssi, battery, paired, trusted, stream
            case inRange = "in_range"
            case addressType = "address_type"
            case nextSequence = "next_seq"
        }
    }

    public struct Stream: Sendable, Equatable, Encodable {
        public var rateHz: Double
        public var bpm: [UInt16]

        public init(rateHz: Double, bpm: [UInt16]) {
            self.rateHz = rateHz
            self.bpm = bpm
        }

        enum CodingKeys: String, CodingKey {
            case rateHz = "rate_hz"
            case bpm = "bpm_values"
        }
    }

    /// What the simulator starts with (its `-p` parameters). Timings in seconds; nil keeps the
    /// simulator's default (README.md).
    public struct Scenario: Sendable, Encodable {
        public var straps: [Strap]
        /// true (BlueZ): discovery sessions, filters and notification sessions end when the
        /// client that made them leaves the bus. false: shared by all callers, for one-shot
        /// clients such as busctl and gdbus.
        public var trackClients: Bool
        public var connectDelay: Double?
        public var servicesDelay: Double?
        public var connectTimeout: Double?
        public var refuseDelay: Double?
        public var advertDelay: Double?
        public var temporaryTimeout: Double?

        public init(
            straps: [Strap] = [],
            trackClients: Bool = true,
            connectDelay: Double? = nil,
            servicesDelay: Double? = nil,
            connectTimeout: Double? = nil,
            refuseDelay: Double? = nil,
            advertDelay: Double? = nil,
            temporaryTimeout: Double? = nil
        ) {
            self.straps = straps
            self.trackClients = trackClients
            self.connectDelay = connectDelay
            self.servicesDelay = servicesDelay
            self.connectTimeout = connectTimeout
            self.refuseDelay = refuseDelay
            self.advertDelay = advertDelay
            self.temporaryTimeout = temporaryTimeout
        }

        enum CodingKeys: String, CodingKey {
            case straps
            case trackClients = "track_clients"
            case connectDelay = "connect_delay"
            case servicesDelay = "services_delay"
            case connectTimeout = "connect_timeout"
            case refuseDelay = "refuse_delay"
            case advertDelay = "advert_delay"
            case temporaryTimeout = "temporary_timeout"
        }
    }

    /// GetStats, typed.
    public struct Stats: Sendable, Equatable {
        /// Notifications emitted (2A37 and 2A19).
        public var sent: UInt32
        public var streamSent: UInt32
        public var rawSent: UInt32
        /// Stream measurements that found the strap disconnected or not notifying.
        public var skipped: UInt32
        /// Measurements so far; the RR field carries it modulo 65536.
        public var nextSequence: UInt32
        /// Links established.
        public var connects: UInt32
        /// Connect and Pair attempts.
        public var connectCalls: UInt32
        /// Attempts that failed (refused, out of range, cancelled).
        public var refused: UInt32
        /// Links lost or closed.
        public var disconnects: UInt32
        public var connected: Bool
        public var notifying: Bool
        public var streaming: Bool
        public var inRange: Bool
        public var paired: Bool
        public var trusted: Bool
        public var battery: Int
        public var rateHz: Double
        public var bpm: [UInt16]
        public var name: String
        public var addressType: String
        public var rssi: Int
    }

    public static let adapterPath = "/org/bluez/hci0"

    /// /org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF
    public static func devicePath(_ address: String) -> String {
        adapterPath + "/dev_" + address.uppercased().replacingOccurrences(of: ":", with: "_")
    }

    /// The Heart Rate Measurement (2A37) characteristic of a connected strap.
    public static func heartRateMeasurementPath(_ address: String) -> String {
        devicePath(address) + "/service000c/char000d"
    }

    /// The Battery Level (2A19) characteristic of a connected strap.
    public static func batteryLevelPath(_ address: String) -> String {
        devicePath(address) + "/service0010/char0011"
    }

    static let kind = DBusMockProcess.Kind(
        description: "the Bluetooth simulator", service: "org.bluez",
        templatePath: DaemonFixture.repositoryRoot + "/tools/bluez-sim/bluez_hr.py",
        controlPath: "/org/bluez", controlInterface: "org.pacer.BluezSim1")

    /// The process: PID, bus, unique name, controls and logs.
    public let process: DBusMockProcess
    public var bus: PrivateBus { process.bus }
    /// The bus's address (DBUS_SYSTEM_BUS_ADDRESS for a client under test).
    public var address: String { bus.address }
    public var directory: TemporaryDirectory { process.directory }
    private let scenarioState: Mutex<Scenario>

    /// Starts the simulator on `bus`, or on a private bus of its own, and returns once it owns
    /// org.bluez.
    public init(
        _ scenario: Scenario = Scenario(),
        bus: PrivateBus? = nil,
        python: String = "/usr/bin/python3",
        timeout: Duration = .seconds(20)
    ) throws(ChildProcessError) {
        process = try DBusMockProcess(Self.kind, bus: bus, python: python, directoryPrefix: "pacer-bluez-sim")
        scenarioState = Mutex(scenario)
        try start(timeout: timeout)
    }

    /// The scenario a (re)start uses: the one given, kept up to date by the controls that change
    /// the simulated world and, on `restart()`, by what the running simulator reports.
    public var scenario: Scenario { scenarioState.withLock { $0 } }

    public var pid: pid_t? { process.pid }

    public var isRunning: Bool { process.isRunning }

    /// Starts the simulator (when stopped) and waits until it owns org.bluez.
    public func start(timeout: Duration = .seconds(20)) throws(ChildProcessError) {
        try process.start(scenario, timeout: timeout)
    }

    /// Stops the simulator by PID (SIGTERM, then SIGKILL after `grace`); org.bluez loses its
    /// owner. A bus the fixture made itself is stopped by `close()` or deinit, not here.
    public func stop(grace: Duration = .seconds(3)) {
        process.stop(grace: grace)
    }

    /// Kills the simulator by PID and starts it again with the same straps, disconnected (as
    /// bluetoothd comes back after a restart): org.bluez gets a new unique name. Straps'
    /// pairing, range, battery and stream (with its sequence numbers) carry over.
    public func restart(timeout: Duration = .seconds(20)) throws(ChildProcessError) {
        refreshScenario()
        stop()
        try start(timeout: timeout)
    }

    /// Stops the simulator and, when the fixture made it, the bus.
    public func close() {
        process.close()
    }

    /// The unique name owning org.bluez now, nil when nobody does.
    public func busOwner() -> String? { process.busOwner() }

    /// The unique name the simulator got when it last started.
    public var uniqueName: String? { process.uniqueName }

    // MARK: Controls

    /// A new strap, switched on and in range, not paired: it appears once a discovery sees it.
    public func addStrap(address: String, name: String, rssi: Int = -60) throws(ChildProcessError) {
        try control("AddStrap", "ssn", [address, name, String(rssi)])
        updateScenario { $0.straps.append(Strap(address: address, name: name, rssi: rssi, paired: false)) }
    }

    /// The strap leaves the simulated world (its device object goes).
    public func removeStrap(address: String) throws(ChildProcessError) {
        try control("RemoveStrap", "s", [address])
        updateScenario { $0.straps.removeAll { $0.address == address.uppercased() } }
    }

    /// Out of range: a live link drops as a strap switched off would, Connect fails. Back in
    /// range: discovery sees it again and a pending Connect completes.
    public func setInRange(address: String, _ inRange: Bool) throws(ChildProcessError) {
        try control("SetInRange", "sb", [address, inRange ? "true" : "false"])
        updateStrap(address) { $0.inRange = inRange }
    }

    /// The RSSI the strap's adverts arrive with.
    public func setRSSI(address: String, _ rssi: Int) throws(ChildProcessError) {
        try control("SetRssi", "sn", [address, String(rssi)])
        updateStrap(address) { $0.rssi = rssi }
    }

    /// Link loss now; the strap stays in range, so a reconnect succeeds.
    public func dropLink(address: String) throws(ChildProcessError) {
        try control("DropLink", "s", [address])
    }

    /// The next `count` Connect (or Pair) calls fail with org.bluez.Error.Failed
    /// "le-connection-abort-by-local", or with the given error.
    public func refuseConnects(
        address: String, count: UInt32, errorName: String? = nil, message: String? = nil
    ) throws(ChildProcessError) {
        if let errorName {
            try control("RefuseConnectsWith", "suss", [address, String(count), errorName, message ?? ""])
        } else {
            try control("RefuseConnects", "su", [address, String(count)])
        }
    }

    public func setBattery(address: String, percent: UInt8) throws(ChildProcessError) {
        try control("SetBattery", "sy", [address, String(percent)])
        updateStrap(address) { $0.battery = Int(percent) }
    }

    /// Measurements at `rateHz`, each a 2A37 notification (flags 0x10, heart rate cycling through
    /// `bpm`, one RR field carrying the measurement's sequence number) while connected and
    /// notifying; skipped measurements still use their number.
    public func startStream(address: String, rateHz: Double, bpm: [UInt16]) throws(ChildProcessError) {
        try control("StartStream", "sdaq", [address, String(rateHz), String(bpm.count)] + bpm.map(String.init))
        updateStrap(address) { $0.stream = Stream(rateHz: rateHz, bpm: bpm) }
    }

    /// Each value once, in order, at `rateHz` (the first `1 / rateHz` after the call), then the
    /// stream ends (`Stats.streaming` false). The simulator times it on its own clock, so a busy
    /// test process cannot make the strap late. Notifications as for `startStream`.
    public func playOnce(address: String, rateHz: Double, bpm: [UInt16]) throws(ChildProcessError) {
        try control("PlayOnce", "sdaq", [address, String(rateHz), String(bpm.count)] + bpm.map(String.init))
        updateStrap(address) { $0.stream = nil }
    }

    public func stopStream(address: String) throws(ChildProcessError) {
        try control("StopStream", "s", [address])
        updateStrap(address) { $0.stream = nil }
    }

    /// One 2A37 notification with exactly these bytes; fails unless connected and notifying.
    public func sendRaw(address: String, bytes: [UInt8]) throws(ChildProcessError) {
        try control("SendRaw", "say", [address, String(bytes.count)] + bytes.map(String.init))
    }

    public func stats(address: String) throws(ChildProcessError) -> Stats {
        let reply = try control("GetStats", "s", [address])
        guard let members = reply["data"]?[0]?.object else {
            throw ChildProcessError(message: "GetStats answered \(reply)")
        }
        func value(_ key: String) -> JSON? { members[key]?["data"] }
        func count(_ key: String) -> UInt32 { UInt32(value(key)?.number ?? 0) }
        func flag(_ key: String) -> Bool { value(key)?.bool ?? false }
        return Stats(
            sent: count("sent"), streamSent: count("stream_sent"), rawSent: count("raw_sent"),
            skipped: count("skipped"), nextSequence: count("next_seq"), connects: count("connects"),
            connectCalls: count("connect_calls"), refused: count("refused"), disconnects: count("disconnects"),
            connected: flag("connected"), notifying: flag("notifying"), streaming: flag("streaming"),
            inRange: flag("in_range"), paired: flag("paired"), trusted: flag("trusted"),
            battery: value("battery")?.int ?? 0, rateHz: value("rate_hz")?.number ?? 0,
            bpm: (value("bpm_values")?.array ?? []).compactMap { $0.int.map { UInt16($0) } },
            name: value("name")?.string ?? "", addressType: value("address_type")?.string ?? "",
            rssi: value("rssi")?.int ?? 0)
    }

    /// The addresses of all simulated straps.
    public func strapAddresses() throws(ChildProcessError) -> [String] {
        let reply = try control("ListStraps", "", [])
        return (reply["data"]?[0]?.array ?? []).compactMap(\.string)
    }

    /// Calls org.pacer.BluezSim1.`method` with busctl's signature and arguments; busctl's
    /// JSON reply ({"type", "data"}), or an error with busctl's message.
    @discardableResult
    public func control(_ method: String, _ signature: String, _ arguments: [String]) throws(ChildProcessError) -> JSON {
        try process.control(method, signature, arguments)
    }

    // MARK: Diagnostics

    /// What the current (or last) simulator wrote to stderr.
    public func standardError() -> String { process.standardError() }

    /// The current (or last) simulator's log: one line per event (connects, controls, sessions).
    public func log() -> String { process.log() }

    // MARK: Scenario bookkeeping

    private func updateScenario(_ change: (inout Scenario) -> Void) {
        scenarioState.withLock { change(&$0) }
    }

    private func updateStrap(_ address: String, _ change: (inout Strap) -> Void) {
        updateScenario { scenario in
            if let index = scenario.straps.firstIndex(where: { $0.address == address.uppercased() }) {
                change(&scenario.straps[index])
            }
        }
    }

    /// Brings the scenario up to date with the running simulator (pairing done over the BlueZ
    /// API, straps added by other clients, stream positions). Keeps what it has when the
    /// simulator does not answer.
    private func refreshScenario() {
        guard isRunning, let addresses = try? strapAddresses() else { return }
        var straps: [Strap] = []
        for address in addresses {
            guard let stats = try? stats(address: address) else { return }
            straps.append(Strap(
                address: address, name: stats.name, rssi: stats.rssi, battery: stats.battery,
                inRange: stats.inRange, paired: stats.paired, trusted: stats.trusted,
                addressType: stats.addressType,
                stream: stats.streaming ? Stream(rateHz: stats.rateHz, bpm: stats.bpm) : nil,
                nextSequence: stats.nextSequence))
        }
        updateScenario { $0.straps = straps }
    }
}
