import Foundation
import PacerContract
import PacerTestSupport
import Testing

/// `pacerctl race` (#34): the races of the device's runner from the last sync, from pacerd or,
/// when it is down, from the state directory.
@Suite(.timeLimit(.minutes(10))) struct RaceListingTests {
    @Test func pacerctlRaceListsTheSyncedRacesWithStartBibAndCourse() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try daemon.writeConfig("[voice]\nenabled = false")
        let startsMs = Int64(Date().timeIntervalSince1970 * 1000) + 3 * 86_400_000 + 600_000
        let race = DeviceRace(id: "9b2d1e7a-3c4f-4e5a-8b6c-7d8e9f0a1b2c", name: "Naviglio 10k", starts_at: WireTime.text(milliseconds: startsMs),
                              bib: 12, status: "enrolled", length_m: 10_012.5, path: [[45.46, 9.19], [45.47, 9.19], [45.46, 9.19]],
                              waypoints: [[45.46, 9.19], [45.47, 9.19], [45.46, 9.19]])
        let sync = DeviceSync(sections: .init(notices: nil, profile: ProfileSection(version: "p", display_name: "Ann", timezone: "Europe/Rome", linked: true),
                                              races: RacesSection(version: "r", races: [race])))
        let cache: [String: Any] = ["fetched_at": "2026-11-26T06:00:00.000Z",
                                    "sync": try JSONSerialization.jsonObject(with: try JSONEncoder().encode(sync))]
        try JSONSerialization.data(withJSONObject: cache).write(to: URL(fileURLWithPath: daemon.directory.file("cloud-sync.json")))
        try await daemon.start()
        let listed = try await daemon.ctl("race")
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("Naviglio 10k: bib 12, enrolled, 10.01 km, 1 stage") && listed.stdout.contains("(in 3 days)"), "\(listed.stdout)")
        #expect(await daemon.stop() == .exited(0))

        let offline = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["race", "--json", "--db", daemon.databasePath, "--config", daemon.configPath])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.contains(#""bib":12"#) && offline.stdout.contains(#""id":"9b2d1e7a-3c4f-4e5a-8b6c-7d8e9f0a1b2c""#), "\(offline.stdout)")
    }

    @Test func withoutASyncPacerctlRaceSaysNoneWasFetched() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try daemon.writeConfig("[voice]\nenabled = false")
        try await daemon.start()
        let listed = try await daemon.ctl("race")
        #expect(listed.status == 0 && listed.stdout.hasPrefix("No races fetched yet") && listed.stdout.contains("The sync channel is off"), "\(listed.stdout)")
        #expect(await daemon.stop() == .exited(0))
        let offline = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["race", "--db", daemon.databasePath, "--config", daemon.configPath])
        #expect(offline.status == 0 && offline.stdout.hasPrefix("No races fetched yet"), "\(offline.stdout)\(offline.stderr)")
    }
}
