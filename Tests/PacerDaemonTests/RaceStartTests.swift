import Foundation
import PacerContract
import PacerTestSupport
import Testing

/// `pacerctl race start|stop` through a real pacerd (#34), from a sync written beside the store:
/// refused with why (exit 75) when the device has no race; the reminder said once before the
/// start, not again after a restart; race start starts a run, race stop leaves it running.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RaceStartTests {
    static let raceID = "9b2d1e7a-3c4f-4e5a-8b6c-7d8e9f0a1b2c"

    static func writeSync(_ daemon: DaemonFixture, startsMs: Int64) throws {
        let path = stride(from: 0.0, through: 0.01, by: 0.0005).map { [45.46 + $0, 9.19] }
        let race = DeviceRace(id: raceID, name: "Naviglio 10k", starts_at: WireTime.text(milliseconds: startsMs), bib: 12, status: "enrolled",
                              length_m: 1112, path: path, waypoints: [path[0], path[path.count - 1]])
        let sync = DeviceSync(sections: .init(notices: nil, profile: ProfileSection(version: "p", display_name: "Ann", timezone: "UTC", linked: true),
                                              races: RacesSection(version: "r", races: [race])))
        let cache: [String: Any] = ["fetched_at": "2026-11-26T06:00:00.000Z",
                                    "sync": try JSONSerialization.jsonObject(with: try JSONEncoder().encode(sync))]
        try JSONSerialization.data(withJSONObject: cache).write(to: URL(fileURLWithPath: daemon.directory.file("cloud-sync.json")))
    }

    @Test func withoutARaceRaceStartIsRefusedWithWhy() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try daemon.writeConfig("[voice]\nenabled = false")
        try await daemon.start()
        let refused = try await daemon.ctl("race", "start")
        #expect(refused.status == 75 && refused.stderr.contains("no race to start"), "\(refused.status) \(refused.stderr)")
        let stop = try await daemon.ctl("race", "stop")
        #expect(stop.status == 75 && stop.stderr.contains("race mode is not on"), "\(stop.stderr)")
        #expect(try await daemon.status()["state"] as? String == "idle", "nothing started")
        #expect(await daemon.stop() == .exited(0))
    }

    @Test func theReminderIsSaidOnceAndRaceStartStartsARun() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try daemon.writeConfig("[voice]\nenabled = false\n[race]\nreminder_min = 15")
        try Self.writeSync(daemon, startsMs: Int64(Date().timeIntervalSince1970 * 1000) + 10 * 60_000 + 30_000)
        try await daemon.start()
        let reminded = await eventually(timeout: .seconds(10)) { daemon.stderr.contains("reminder: The race Naviglio 10k starts in 11 minutes, bib 12.") }
        #expect(reminded, "\(daemon.stderr)")
        #expect(await eventually(timeout: .seconds(5)) { FileManager.default.fileExists(atPath: daemon.directory.file("race-reminders.json")) })

        let unknown = try await daemon.ctl("race", "start", "0b2d1e7a-3c4f-4e5a-8b6c-7d8e9f0a1b2c")
        #expect(unknown.status == 75 && unknown.stderr.contains("no race 0b2d1e7a"), "\(unknown.stderr)")
        let started = try await daemon.ctl("race", "start", "--json")
        #expect(started.status == 0, "\(started.stderr)")
        let status = try await daemon.status()
        #expect(status["state"] as? String == "waiting_for_fix", "race start starts a run: \(status)")
        let race = status["race"] as? [String: Any]
        #expect(race?["id"] as? String == Self.raceID && (race?["bib"] as? NSNumber)?.intValue == 12, "\(status)")
        #expect((status["line"] as? String)?.contains("race Naviglio 10k: not started, 1.11 km") == true, "\(status)")
        let again = try await daemon.ctl("race", "start")
        #expect(again.status == 75 && again.stderr.contains("race mode is already on"), "\(again.stderr)")
        #expect(try await daemon.ctl("race", "stop").status == 0)
        let after = try await daemon.status()
        #expect(after["race"] is NSNull && after["state"] as? String == "waiting_for_fix", "the run goes on: \(after)")
        #expect(await daemon.stop() == .exited(0))

        // After a restart the reminder is not said again.
        try await daemon.start()
        try await Task.sleep(for: .seconds(2))
        #expect(!daemon.stderr.contains("reminder:"), "\(daemon.stderr)")
        #expect(await daemon.stop() == .exited(0))
    }
}
