import Foundation
import PacerTestSupport
import Store
import Testing

/// pacerd's uplink end to end: runs recorded before it starts reach a real HTTPS server (through
/// 503s), and a SIGKILL in the middle of an upload loses nothing.
@Suite(.serialized, .enabled(if: DaemonFixture.hasSharedData, "needs ../shared/data"), .timeLimit(.minutes(10)))
struct UploadTests {
    static let demoRun = DaemonFixture.repositoryRoot + "/tools/demo-data/park-3k.gpsd.jsonl"

    func daemon(uploadingTo sink: HTTPSSink, runs: Int) async throws -> DaemonFixture {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        for _ in 0..<runs {
            let record = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", Self.demoRun, "--record", daemon.databasePath])
            #expect(record.status == 0, "\(record.stderr)")
        }
        try daemon.writeConfig("""
            [voice]
            enabled = false
            [upload]
            url = "\(sink.url)"
            ca_file = "\(sink.caFile!)"
            token = "device-token"
            # The sink takes uploads only; its scripted answers are for them.
            sync = false
            """)
        return daemon
    }

    static func summariesAccepted(_ sink: HTTPSSink) -> Set<String> {
        Set(sink.requests().filter { ($0.status ?? 0) / 100 == 2 && !$0.path.contains("/chunks/") && $0.path.hasPrefix("/v1/runs/") }.map(\.path))
    }

    @Test func runsRecordedBeforeStartAreUploadedThrough503s() async throws {
        let sink = try await offPool { try HTTPSSink(tls: true, rules: .init(statusSequence: [503, 503, 503])) }
        defer { sink.stop() }
        let daemon = try await daemon(uploadingTo: sink, runs: 2)
        defer { daemon.cleanUp() }
        let uuids = try RunStore(path: daemon.databasePath, readOnly: true).runs(limit: 10, offset: 0).map(\.uuid)
        try await daemon.start()
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { Self.summariesAccepted(sink).count == 2 }
        #expect(Self.summariesAccepted(sink) == Set(uuids.map { "/v1/runs/\($0)" }))
        let status = try await daemon.ctl("status")
        #expect(status.stdout.contains("uploads: nothing waiting"), "\(status.stdout)")
        #expect(daemon.stderr.contains("is in the cloud"))
        #expect(await daemon.stop() == .exited(0))
        #expect(try RunStore(path: daemon.databasePath, readOnly: true).runs(limit: 10, offset: 0).allSatisfy { $0.uploadState == .uploaded })
    }

    @Test func aSIGKILLInTheMiddleOfAnUploadLosesNothing() async throws {
        // The first answer takes 30 s: pacerd is killed while it waits for it (a loaded test process
        // may take seconds to notice the request, and the kill must still come first).
        let sink = try await offPool { try HTTPSSink(tls: true, rules: .init(faults: ["slow"], faultDelay: .seconds(30))) }
        defer { sink.stop() }
        let daemon = try await daemon(uploadingTo: sink, runs: 1)
        defer { daemon.cleanUp() }
        let uuid = try #require(try RunStore(path: daemon.databasePath, readOnly: true).runs(limit: 1, offset: 0).first?.uuid)
        try await daemon.start()
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { !sink.requests().isEmpty }
        _ = daemon.kill()
        #expect(Self.summariesAccepted(sink).isEmpty)
        try await daemon.start()
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { Self.summariesAccepted(sink).count == 1 }
        // Every chunk was accepted, the one in flight at the kill at least once (the server's
        // idempotency keeps it once), and the run is complete.
        let chunks = Set(sink.requests().filter { ($0.status ?? 0) / 100 == 2 && $0.path.contains("/chunks/") }.map(\.path))
        let summary = try #require(sink.requests().last { $0.path == "/v1/runs/\(uuid)" })
        let count = try #require((try JSONSerialization.jsonObject(with: Data(summary.body)) as? [String: Any])?["chunks"] as? Int)
        #expect(chunks == Set((0..<count).map { "/v1/runs/\(uuid)/chunks/\($0)" }))
        #expect(await daemon.stop() == .exited(0))
    }

    /// The network down (nothing listens), the uplink deep in its backoff; then the network comes
    /// back and NetworkManager says so on the bus: the upload goes at once, not at the backoff's end.
    @Test func theNetworkComingBackWakesTheUplinkAtOnce() async throws {
        let bus = try await offPool { try PrivateBus() }
        defer { bus.stop() }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        for name in ["PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"] { environment.removeValue(forKey: name) }
        let networkManager = try ChildProcess("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "networkmanager"], environment: environment)
        defer { _ = networkManager.killAndReap() }
        func nm(_ arguments: String...) async throws -> DaemonFixture.CtlResult {
            try await DaemonFixture.run("/usr/bin/busctl", ["--address=" + bus.address] + arguments)
        }
        try await waitOffPool(timeout: .seconds(20), every: .milliseconds(100)) {
            (try DaemonFixture.runBlocking("/usr/bin/busctl", ["--address=" + bus.address, "status", "org.freedesktop.NetworkManager"])).status == 0
        }

        // Certificates for a server that is not up yet, on a port nothing listens on.
        let certificateDirectory = try TemporaryDirectory(prefix: "nm-certs")
        defer { certificateDirectory.remove() }
        let certificates = try await offPool { try HTTPSSink.Certificates.make(in: certificateDirectory) }
        let port = try FreePort.tcp()
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        let record = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", Self.demoRun, "--record", daemon.databasePath])
        #expect(record.status == 0)
        try daemon.writeConfig("""
            [voice]
            enabled = false
            [upload]
            url = "https://127.0.0.1:\(port)"
            ca_file = "\(certificates.caFile)"
            """)
        try await daemon.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        // Five failures in a row: the next try is 8-16 s away.
        try await waitOffPool(timeout: .seconds(40), every: .milliseconds(100)) {
            let status = try DaemonFixture.runBlocking(DaemonFixture.binary("pacerctl"), ["status", "--json", "--socket", daemon.socketPath])
            let uploads = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["uploads"] as? [String: Any]
            return (uploads?["failures_in_a_row"] as? Int ?? 0) >= 5
        }
        let status = try await daemon.ctl("status")
        #expect(status.stdout.contains("failed attempts in a row"), "\(status.stdout)")
        let sink = try await offPool { try HTTPSSink(tls: true, certificates: certificates, port: port) }
        defer { sink.stop() }
        let back = ContinuousClock.now
        #expect(try await nm("call", "org.freedesktop.NetworkManager", "/org/freedesktop", "org.freedesktop.DBus.Mock",
                             "SetGlobalConnectionState", "u", "70").status == 0)
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(100)) { Self.summariesAccepted(sink).count == 1 }
        let took = ContinuousClock.now - back
        #expect(took < .seconds(7), "uploaded \(took) after the network came back: woken, not at the backoff's end")
        #expect(daemon.stderr.contains("NetworkManager says the network is connected"))
        #expect(await daemon.stop() == .exited(0))
    }

    /// Issue 19: a chunk the server refuses for good does not stall the uplink. It is set aside,
    /// logged once with the server's words and shown by `pacerctl status`; both runs' summaries
    /// still go; after a restart it is still shown and not sent again.
    @Test func aRefusedChunkIsSetAsideShownInStatusAndNotRetriedAfterARestart() async throws {
        // The first request is the oldest run's first chunk: refused, for good.
        let refusing = try await offPool {
            try HTTPSSink(tls: true, rules: .init(statusSequence: [413], body: #"{"error": {"code": "too_large", "message": "over the cap"}}"#))
        }
        defer { refusing.stop() }
        let daemon = try await daemon(uploadingTo: refusing, runs: 2)
        defer { daemon.cleanUp() }
        let runs = try RunStore(path: daemon.databasePath, readOnly: true).runs(limit: 10, offset: 0).sorted { $0.id < $1.id }
        let refusedPath = "/v1/runs/\(runs[0].uuid)/chunks/0"
        try await daemon.start()
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { Self.summariesAccepted(refusing).count == 2 }
        #expect(Self.summariesAccepted(refusing) == Set(runs.map { "/v1/runs/\($0.uuid)" }))
        #expect(refusing.requests().first?.path == refusedPath && refusing.requests().first?.status == 413)
        let status = try await daemon.ctl("status")
        #expect(status.stdout.contains("uploads: nothing waiting; 1 item refused by the server: run \(runs[0].id) chunk 0: HTTP 413: "),
                "\(status.stdout)")
        #expect(status.stdout.contains("over the cap"), "\(status.stdout)")
        #expect(daemon.stderr.components(separatedBy: "refused by the server").count == 2, "logged once: \(daemon.stderr)")
        #expect(await daemon.stop() == .exited(0))

        try await daemon.start()
        _ = try await daemon.ctl("sync")
        try await Task.sleep(for: .seconds(1))
        let again = try await daemon.ctl("status")
        #expect(again.stdout.contains("1 item refused by the server: run \(runs[0].id) chunk 0: HTTP 413"), "\(again.stdout)")
        #expect(refusing.requests().filter { $0.path == refusedPath }.count == 1, "never sent again")
        #expect(!daemon.stderr.contains("refused by the server"), "not logged again")
        #expect(await daemon.stop() == .exited(0))
    }
}
