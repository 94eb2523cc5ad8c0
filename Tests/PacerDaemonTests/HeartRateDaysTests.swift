import Foundation
import PacerTestSupport
import Testing

/// pacerd's heartbeat carries the strap's readings outside runs as daily summaries (`hr_daily`)
/// and `[profile] max_hr_bpm`: the simulated bluetoothd streams, the built pacer-cloud stores.
@Suite(.serialized, .timeLimit(.minutes(10))) struct HeartRateDaysTests {
    /// The cloud's hr_daily rows (date, count, min_bpm), read from its SQLite file.
    static func storedDays(_ cloud: CloudServer) throws -> [(date: String, count: Int, min: Int)] {
        let path = String(cloud.databaseURL.dropFirst("sqlite:".count))
        let query = try DaemonFixture.runBlocking("/usr/bin/env", [
            "python3", "-c",
            "import sqlite3,sys\nfor r in sqlite3.connect(sys.argv[1]).execute('SELECT date, count, min_bpm FROM hr_daily ORDER BY date'): print(*r)",
            path,
        ])
        return query.stdout.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let count = Int(parts[1]), let low = Int(parts[2]) else { return nil }
            return (String(parts[0]), count, low)
        }
    }

    @Test func theHeartbeatCarriesTheDaysReadingsAndTheProfileMaximumAcrossARestart() async throws {
        let simulator = try await HeartRateTests.simulator([.init(address: HeartRateTests.strap, name: "Polar H10 1234", battery: 64)])
        defer { simulator.close() }
        let cloud = try await offPool { try CloudServer() }
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        // The sync channel's test set-up (heartbeats every 5 s), with the strap and the profile's maximum.
        try daemon.writeConfig(SyncChannelTests.config(daemon, cloud, muted: true)
            + "\n[hr]\nstrap = \"\(HeartRateTests.strap)\"\n[profile]\nmax_hr_bpm = 185\n")
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.address])
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }
        // No run: every reading is one between runs. The device is linked to no account: UTC days.
        try await simulator.run { try $0.startStream(address: HeartRateTests.strap, rateHz: 4, bpm: Array(58...66)) }
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(200)) { (try Self.storedDays(cloud).first?.count ?? 0) >= 8 }
        try await simulator.run { try $0.stopStream(address: HeartRateTests.strap) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        let today = formatter.string(from: Date()), yesterday = formatter.string(from: Date().addingTimeInterval(-86_400))
        let first = try #require(try Self.storedDays(cloud).last)
        #expect([today, yesterday].contains(first.date) && first.min == 58, "\(first)")
        let state = try #require(try SyncChannelTests.storedState(cloud))
        #expect(state["max_hr_bpm"] as? Int == 185, "\(state)")

        // Stopped and started again: the day goes on from what was counted.
        #expect(await daemon.stop() == .exited(0))
        let saved = try String(contentsOfFile: daemon.directory.file("heart-rate-days.json"), encoding: .utf8)
        #expect(saved.contains(first.date), "\(saved)")
        let counted = try #require(try Self.storedDays(cloud).last).count
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.address])
        try await daemon.waitForStatus { ($0["hr"] as? [String: Any])?["state"] as? String == "connected" }
        try await simulator.run { try $0.startStream(address: HeartRateTests.strap, rateHz: 4, bpm: [70]) }
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(200)) {
            try Self.storedDays(cloud).reduce(0) { $0 + $1.count } >= counted + 4
        }
        try await simulator.run { try $0.stopStream(address: HeartRateTests.strap) }
        // The day's summary goes on from the saved one (a day counted afresh would replace the
        // cloud's row with a smaller count); near midnight the new readings may start a new day.
        let after = try Self.storedDays(cloud)
        let sameDay = try #require(after.first { $0.date == first.date })
        #expect(sameDay.count >= counted && sameDay.min == 58, "\(after)")
        if after.count == 1 { #expect(sameDay.count >= counted + 4, "\(after)") }
        #expect(await daemon.stop() == .exited(0))
    }
}
