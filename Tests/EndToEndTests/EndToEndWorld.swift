import Foundation
import Glibc
import PacerTestSupport

/// Everything pacerd talks to, real or a faithful simulation, each on its own socket or free
/// port: one private dbus-daemon as the system bus with the simulated bluetoothd (the strap) and
/// ModemManager on it, and pacer-cloud (SQLite) over plain HTTP to loopback; pacerd itself as a
/// child process (`DaemonFixture`), speaking through espeak-ng into WAV files. gpsd (through
/// gpsfake) is started by the scenario, which restarts it. Blocking: created through `offPool`.
final class EndToEndWorld: Sendable {
    static let strap = "C8:4F:0E:12:34:56"
    static let contact = "+393471234567"
    static let device = "pacer-e2e"
    static let highBpm = 205
    /// The bundled demo run (tools/demo-data): in the repository, so CI always has it.
    static let parkNMEA = DaemonFixture.repositoryRoot + "/tools/demo-data/park-3k.nmea"
    static let parkGPSD = DaemonFixture.repositoryRoot + "/tools/demo-data/park-3k.gpsd.jsonl"

    /// Intervals by distance that end inside park-3k's 3 km, so the workout completes and every
    /// kind of step is announced.
    static let workout = """
        name = "Park intervals"

        [[step]]
        type = "warmup"
        distance_m = 600
        pace = "5:00-6:30"

        [[step]]
        type = "repeat"
        times = 2
        steps = 2

        [[step]]
        type = "run"
        distance_m = 500
        pace = "4:30-5:10"

        [[step]]
        type = "recover"
        distance_m = 300

        [[step]]
        type = "cooldown"
        distance_m = 400

        """
    /// The step announcements the workout makes: each step as it begins, then "Workout complete.".
    static let stepAnnouncements = 1 + 2 * 2 + 1 + 1

    let bus: PrivateBus
    let bluetooth: BluetoothSimulator
    let modem: ModemManagerSimulator
    let cloud: CloudServer
    let daemon: DaemonFixture
    var workoutPath: String { daemon.directory.file("workout.toml") }
    var speechDirectory: String { daemon.directory.file("speech") }

    init() throws {
        bus = try PrivateBus()
        bluetooth = try BluetoothSimulator(.init(straps: [.init(address: Self.strap, name: "Polar H10 E2E", battery: 80)]), bus: bus)
        modem = try ModemManagerSimulator(.init(sendDelay: 0.3), bus: bus)
        cloud = try CloudServer(device: Self.device)
        daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        try Self.workout.write(toFile: workoutPath, atomically: true, encoding: .utf8)
        // rate_wpm at its maximum: cues take a third of the time to say, so the run can be played
        // faster around them. Follow-ups off: the alert's messages are exactly the alert and its
        // cancel. Live positions every 5 s (the minimum), so they go out during the outage too.
        try daemon.writeConfig("""
            [hr]
            strap = "\(Self.strap)"
            [voice]
            output = "wav"
            wav_dir = "\(speechDirectory)"
            rate_wpm = 450
            [sos]
            enabled = true
            hr_high_bpm = \(Self.highBpm)
            contacts = ["\(Self.contact)"]
            device_name = "\(Self.device)"
            follow_up_every_s = 0
            retry_max_s = 2
            attempt_timeout_s = 5
            [upload]
            url = "\(cloud.url)"
            allow_http = true
            token = "\(cloud.token)"
            live_position_every_s = 5
            """)
    }

    /// pacerd on the private bus; returns once it said READY=1.
    func startDaemon() async throws {
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    }

    /// pacerd's stderr as journal entries.
    var journal: [JournalEntry] { JournalEntry.parse(daemon.stderr) }

    /// Every cue pacerd dealt with, in the order logged.
    var cues: [CueLine] { CueLine.parse(daemon.stderr) }

    /// Stops everything by PID; pacerd first, so it sees nothing else go.
    func close() {
        daemon.cleanUp()
        cloud.stop()
        modem.close()
        bluetooth.close()
        bus.stop()
    }
}
