import Foundation
import PacerCore
import PacerReplay
import PacerTestSupport
import Store
import Testing

/// pacerd with a heart-rate strap: the simulated bluetoothd on a private dbus-daemon (through
/// DBUS_SYSTEM_BUS_ADDRESS, as sd_bus_open_system reads it), gpsd through gpsfake.
@Suite(.serialized, .timeLimit(.minutes(10))) struct HeartRateTests {
    static let strap = "C8:4F:0E:12:34:56"
    static let stranger = "F0:0D:0E:00:00:01"

    static func simulator(_ straps: [BluetoothSimulator.Strap]) async throws -> BluetoothSimulator {
        try await offPool { try BluetoothSimulator(.init(straps: straps)) }
    }

    @Test(.enabled(if: DaemonFixture.hasSharedData))
    func aRunRecordsEveryNotificationAndItsReplayAgrees() async throws {
        let simulator = try await Self.simulator([.init(address: Self.strap, name: "Polar H10 1234", battery: 64)])
        defer { simulator.close() }
        let fake = try GPSFake(log: DaemonFixture.sharedData + "/sim/walk-1.nmea", options: .init(cycle: 0.01, holdUntilReleased: true))
        try await fake.start()
        let daemon = try DaemonFixture(gpsPort: fake.port, extraConfig: "[hr]\nstrap = \"\(Self.strap.lowercased())\"")
        defer { daemon.cleanUp() }
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.address])

        // Monitored before any run: connected, battery read, and a live heart rate once it streams.
        let connected = try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }
        let hr = connected["hr"] as! [String: Any]
        #expect(hr["name"] as? String == "Polar H10 1234")
        #expect(hr["address"] as? String == Self.strap)
        #expect(hr["battery_percent"] as? Int == 64)
        #expect(hr["bpm"] is NSNull, "no heart rate before the strap sends one")
        try await simulator.run { try $0.startStream(address: Self.strap, rateHz: 4, bpm: Array(110...150)) }
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["reading"] as? String == "live" }

        #expect(try await daemon.ctl("run", "start").status == 0)
        fake.release()
        try await daemon.waitForStatus(timeout: .seconds(120)) { $0["gps"] as? String == "gpsd_unreachable" }
        #expect(try await daemon.ctl("run", "stop").status == 0)
        try await simulator.run { try $0.stopStream(address: Self.strap) }
        #expect(daemon.notify.statusLines.contains { $0.hasPrefix("Recording run 1: ") && $0.contains(", HR 1") })

        // The raw log holds every notification of the run: consecutive sequence numbers.
        let raw = daemon.directory.file("raw.gpsd.jsonl")
        let export = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["runs", "export", "1", "--format", "gpsd", "-o", raw, "--db", daemon.databasePath])
        #expect(export.status == 0, "\(export.stderr)")
        let sequence = try String(contentsOfFile: raw, encoding: .utf8).split(separator: "\n").compactMap { line -> Int? in
            guard let (_, bytes) = HeartRateLine.parse(line), case .success(let m) = HeartRateMeasurement.decode(bytes) else { return nil }
            return m.rrIntervalsRaw.first.map(Int.init)
        }
        #expect(sequence.count > 40, "\(sequence.count) HRM lines")
        #expect(sequence == Array(sequence.first!...sequence.last!), "a notification was missed while recording")

        // The replay of the raw lines has the same heart rate as the live run.
        let replayDB = daemon.directory.file("replay.db")
        let replay = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", raw, "--record", replayDB])
        #expect(replay.status == 0, "\(replay.stderr)")
        let live = try RunStore(path: daemon.databasePath, readOnly: true), replayed = try RunStore(path: replayDB, readOnly: true)
        let liveRun = try live.detail(1).run, replayRun = try replayed.detail(1).run
        #expect(liveRun.heartRateAverage != nil)
        #expect(liveRun.heartRateAverage == replayRun.heartRateAverage)
        #expect(liveRun.heartRateMax == replayRun.heartRateMax)
        #expect(try live.track(1).heartRate == replayed.track(1).heartRate)
        #expect(try live.track(1).heartRate.count == sequence.count)
        #expect(await daemon.stop() == .exited(0))
    }

    @Test func pairingChoosesTheStrapAndSurvivesARestart() async throws {
        let simulator = try await Self.simulator([
            .init(address: Self.strap, rssi: -72, paired: false),
            .init(address: Self.stranger, name: "Someone else", rssi: -41, paired: false),
        ])
        defer { simulator.close() }
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.address])
        let unpaired = try await daemon.ctl("status")
        #expect(unpaired.stdout.contains("HR strap not paired"), "\(unpaired.stdout)")

        let scan = try await daemon.ctl("strap", "scan", "--seconds", "1")
        #expect(scan.status == 0, "\(scan.stderr)")
        let lines = scan.stdout.split(separator: "\n")
        #expect(lines.count == 3, "\(scan.stdout)")
        #expect(lines.dropFirst().first?.hasPrefix(Self.stranger) == true, "strongest first")
        #expect(lines.last?.contains("-72 dBm") == true)
        // Scanning never connects to anything.
        #expect(try await offPool { try simulator.stats(address: Self.stranger) }.connectCalls == 0)

        let pair = try await daemon.ctl("strap", "pair", Self.strap.lowercased())
        #expect(pair.status == 0, "\(pair.stderr)")
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }
        let bad = try await daemon.ctl("strap", "pair", "C8:4F:0E:12:34")
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("not a Bluetooth address"))

        // The choice is kept across a restart.
        #expect(await daemon.stop() == .exited(0))
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.address])
        let status = try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }
        #expect((status["hr"] as? [String: Any])?["address"] as? String == Self.strap)
        #expect(try await offPool { try simulator.stats(address: Self.stranger) }.connectCalls == 0)
        #expect(await daemon.stop() == .exited(0))

        // A strap fixed in the config wins; pairing is refused rather than silently ignored.
        try daemon.writeConfig("[hr]\nstrap = \"\(Self.strap)\"")
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.address])
        let refused = try await daemon.ctl("strap", "pair", Self.stranger)
        #expect(refused.status == 75)
        #expect(refused.stderr.contains("[hr] strap"))
        #expect(await daemon.stop() == .exited(0))
    }

    @Test func faultsAreSensorStatesAndTheDaemonCarriesOn() async throws {
        let simulator = try await Self.simulator([.init(address: Self.strap)])
        defer { simulator.close() }
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp(), extraConfig: "[hr]\nstrap = \"\(Self.strap)\"")
        defer { daemon.cleanUp() }
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.address])
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }

        // Malformed packets: counted, never a reading, never a crash.
        for packet: [UInt8] in [[], [0x01, 0x50], [0x17, 0x01, 0x01], [0x08, 0x48, 0x00]] {
            try await simulator.run { try $0.sendRaw(address: Self.strap, bytes: packet) }
        }
        let malformed = try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["malformed_packets"] as? Int == 4 }
        #expect((malformed["hr"] as? [String: Any])?["bpm"] is NSNull)
        // No skin contact is a sensor state: no bpm.
        try await simulator.run { try $0.sendRaw(address: Self.strap, bytes: [0x04, 0x00]) }
        let noContact = try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["reading"] as? String == "no_contact" }
        #expect((noContact["hr"] as? [String: Any])?["bpm"] is NSNull)
        #expect(daemon.notify.statusLines.contains { $0.hasSuffix("HR no skin contact") } || (noContact["line"] as? String)?.hasSuffix("HR no skin contact") == true)
        // A live value goes stale after 5 s without notifications.
        try await simulator.run { try $0.sendRaw(address: Self.strap, bytes: [0x06, 0x5A]) }
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["bpm"] as? Int == 90 }
        try await daemon.waitForStatus(timeout: .seconds(10)) { ($0["hr"] as? [String: Any])?["reading"] as? String == "stale" }

        // The strap switched off: lost, then back.
        try await simulator.run { try $0.setInRange(address: Self.strap, false) }
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "lost" }
        try await simulator.run { try $0.setInRange(address: Self.strap, true) }
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }
        // bluetoothd gone for a while, then back.
        try await offPool { simulator.stop() }
        try await daemon.waitForStatus { ["lost", "bluetooth_unavailable"].contains(($0["hr"] as? [String: Any])?["state"] as? String ?? "") }
        try await offPool { try simulator.start() }
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }

        let journal = try String(contentsOfFile: daemon.stderrPath, encoding: .utf8)
        #expect(journal.contains("malformed heart-rate packet"))
        #expect(journal.contains("disconnected"))
        #expect(await daemon.stop() == .exited(0))
    }
}

extension HeartRateTests {
    @Test func withoutABusTheStrapIsUnavailableAndTheJournalIsToldOnce() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp(), extraConfig: "[hr]\nstrap = \"\(Self.strap)\"")
        defer { daemon.cleanUp() }
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + daemon.directory.file("no-bus-here")])
        let status = try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "bluetooth_unavailable" }
        #expect((status["line"] as? String)?.hasSuffix("HR: Bluetooth unavailable") == true)
        // Retried every 1.5 s meanwhile; said once.
        try await Task.sleep(for: .seconds(5))
        let journal = try String(contentsOfFile: daemon.stderrPath, encoding: .utf8)
        #expect(journal.components(separatedBy: "heart rate unavailable").count == 2, "\(journal)")
        #expect(await daemon.stop() == .exited(0))
    }
}

extension BluetoothSimulator {
    func run(_ body: @escaping @Sendable (BluetoothSimulator) throws -> Void) async throws {
        try await offPool { try body(self) }
    }
}
