import Foundation
import PacerTestSupport
import Store
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// pacerd and pacer-cloud together (SQLite): finished runs reach the backend exactly once however
/// often pacerd is killed mid-upload, and an SOS shows up there with its page.
@Suite(.serialized, .timeLimit(.minutes(10))) struct CloudTests {
    @Test(.enabled(if: DaemonFixture.hasSharedData, "needs ../shared/data"))
    func runsReachTheCloudExactlyOnceThroughKillsMidUpload() async throws {
        let cloud = try await offPool { try CloudServer() }
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        for log in [DaemonFixture.sharedData + "/sim/marathon-1.gpsd.jsonl", UploadTests.demoRun] {
            let record = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", log, "--record", daemon.databasePath])
            #expect(record.status == 0, "\(record.stderr)")
        }
        try daemon.writeConfig("""
            [voice]
            enabled = false
            [upload]
            url = "\(cloud.url)"
            allow_http = true
            token = "\(cloud.token)"
            """)
        // Killed at random moments while it uploads; whatever it had sent goes again.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<6 {
            try await daemon.start()
            try await Task.sleep(for: .milliseconds(Int64.random(in: 0...250, using: &generator)))
            _ = daemon.kill()
        }
        try await daemon.start()
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { ((try? cloud.json("/v1/runs"))?["runs"] as? [Any])?.count == 2 }

        let store = try RunStore(path: daemon.databasePath, readOnly: true)
        for run in try store.runs(limit: 10, offset: 0) {
            let detail = try cloud.json("/v1/runs/\(run.uuid)")
            let samples = try #require(detail["samples"] as? [[String: Any]])
            #expect(samples.count == (try store.track(run.id).samples.count), "run \(run.id): every sample once")
            let times = samples.compactMap { $0["time"] as? String }
            #expect(times == times.sorted() && Set(times).count == times.count, "in order, none twice")
        }
        let runs = try #require(try cloud.json("/v1/runs")["runs"] as? [[String: Any]])
        #expect(runs.count == 2)
        #expect(await daemon.stop() == .exited(0))
    }

    @Test func anSOSReachesTheCloudWithItsPageAndItsCancel() async throws {
        let cloud = try await offPool { try CloudServer() }
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp(), extraConfig: """
            [voice]
            enabled = false
            [sos]
            device_name = "pacer-test"
            [upload]
            url = "\(cloud.url)"
            allow_http = true
            token = "\(cloud.token)"
            """)
        defer { daemon.cleanUp() }
        try await daemon.start()
        #expect(try await daemon.ctl("sos", "raise").status == 0)
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { ((try? cloud.json("/v1/alerts?state=open"))?["alerts"] as? [Any])?.count == 1 }
        let alert = try #require((try cloud.json("/v1/alerts?state=open")["alerts"] as? [[String: Any]])?.first)
        #expect(alert["kind"] as? String == "manual")
        let page = try #require(alert["page"] as? String)
        let html = String(decoding: try await offPool { try CloudServer.get(page, token: nil).body }, as: UTF8.self)
        #expect(html.contains("OPEN"), "\(html.prefix(400))")

        #expect(try await daemon.ctl("sos", "cancel").status == 0)
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { ((try? cloud.json("/v1/alerts?state=open"))?["alerts"] as? [Any])?.isEmpty == true }
        let cancelled = String(decoding: try await offPool { try CloudServer.get(page, token: nil).body }, as: UTF8.self)
        #expect(cancelled.lowercased().contains("false alarm"), "\(cancelled.prefix(400))")
        #expect(await daemon.stop() == .exited(0))
    }
}
