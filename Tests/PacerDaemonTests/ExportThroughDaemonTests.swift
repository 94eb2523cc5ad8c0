import Foundation
import PacerTestSupport
import Testing

/// `pacerctl runs export --format fit` while pacerd runs: the file comes over the control socket
/// as base64 and must be byte for byte the file pacerctl writes from the store itself.
@Suite(.enabled(if: DaemonFixture.hasSharedData, "needs ../shared/data beside the repository"), .timeLimit(.minutes(10)))
struct ExportThroughDaemonTests {
    @Test func fitThroughTheDaemonEqualsFitFromTheStore() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        let gps = DaemonFixture.sharedData + "/sim/track-intervals-1.gpsd.jsonl", hr = DaemonFixture.sharedData + "/hr/hr-dropout-1.jsonl"
        let recorded = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", gps, "--hr", hr, "--record", daemon.databasePath])
        #expect(recorded.status == 0, "\(recorded.stderr)")
        try await daemon.start()
        let viaDaemon = daemon.databasePath + ".daemon.fit", fromStore = daemon.databasePath + ".store.fit"
        let exported = try await daemon.ctl("runs", "export", "1", "--format", "fit", "-o", viaDaemon)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(await daemon.stop() == .exited(0))
        let direct = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"),
                                                 ["runs", "export", "1", "--db", daemon.databasePath, "--format", "fit", "-o", fromStore])
        #expect(direct.status == 0, "\(direct.stderr)")
        let a = try Data(contentsOf: URL(fileURLWithPath: viaDaemon)), b = try Data(contentsOf: URL(fileURLWithPath: fromStore))
        #expect(a.count > 1000 && a.prefix(12).suffix(4) == Data(".FIT".utf8))
        #expect(a == b)
    }
}
