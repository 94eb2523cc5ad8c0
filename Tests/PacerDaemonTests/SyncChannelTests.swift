import Foundation
import PacerTestSupport
import Testing

/// The sync channel end to end: the built pacer-cloud (SQLite) and the built pacerd speaking
/// into WAV files through espeak-ng. A notice typed by an operator is said once and acknowledged;
/// a restart (offline, so only the cached sync is there) does not say it again; a notice fetched
/// while muted is said after a restart from the cached sync with the cloud down, and
/// acknowledged once it is back; the heartbeat reaches the store.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SyncChannelTests {
    static func config(_ daemon: DaemonFixture, _ cloud: CloudServer, muted: Bool) -> String {
        // Fetches only at start and at `pacerctl sync` (the periodic one an hour away), so what
        // each sync reports is known; heartbeats every 5 s.
        """
        [voice]
        output = "wav"
        wav_dir = "\(daemon.directory.file("speech"))"
        mute = \(muted)
        [upload]
        url = "\(cloud.url)"
        allow_http = true
        token = "\(cloud.token)"
        sync_every_s = 3600
        state_every_s = 5
        """
    }

    static func notices(said stderr: String) -> [String] {
        CueLine.parse(stderr).filter { $0.kind == "notice" && $0.fate == "said" }.map(\.text)
    }

    static func send(_ cloud: CloudServer, _ text: String) async throws {
        let sent = try await DaemonFixture.run(DaemonFixture.binary("pacer-cloud"),
                                               ["notice", "send", "pacer-test", text, "--database", cloud.databaseURL])
        #expect(sent.status == 0, "\(sent.stderr)")
    }

    /// The notices the cloud still lists for the device.
    static func pending(_ cloud: CloudServer) throws -> [String] {
        let sections = try cloud.json("/v1/device/sync")["sections"] as? [String: Any]
        return ((sections?["notices"] as? [String: Any])?["items"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
    }

    /// The device's stored heartbeat, read from the cloud's SQLite file.
    static func storedState(_ cloud: CloudServer) throws -> [String: Any]? {
        let path = String(cloud.databaseURL.dropFirst("sqlite:".count))
        let query = try DaemonFixture.runBlocking("/usr/bin/env", [
            "python3", "-c", "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute('SELECT body FROM device_state').fetchone(); print(r[0] if r else '')",
            path,
        ])
        guard let data = query.stdout.trimmingCharacters(in: .whitespacesAndNewlines).data(using: .utf8), !data.isEmpty else { return nil }
        return try JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    static func noticeWAVs(_ daemon: DaemonFixture) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: daemon.directory.file("speech"))) ?? []).filter { $0.hasSuffix("-notice.wav") }.count
    }

    @Test func aNoticeIsSaidOnceAcrossRestartsAndTheHeartbeatReachesTheCloud() async throws {
        let cloud = try await offPool { try CloudServer() }
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try daemon.writeConfig(Self.config(daemon, cloud, muted: false))

        // Queued before pacerd starts: said at its first sync, once, then acknowledged.
        try await Self.send(cloud, "Rain at five, take a jacket")
        try await daemon.start()
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(50)) { Self.notices(said: daemon.stderr) == ["Rain at five, take a jacket"] }
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(100)) { try Self.pending(cloud).isEmpty }
        // The heartbeat: idle, no position, SOS monitoring as configured (off below 60).
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(100)) { try Self.storedState(cloud) != nil }
        let state = try #require(try Self.storedState(cloud))
        #expect(state["state"] as? String == "idle" && state["sos_monitoring"] as? Bool == false, "\(state)")
        #expect(state["lat"] == nil && state["lon"] == nil && state["position"] == nil)

        // `pacerctl sync` fetches now and says what changed.
        try await Self.send(cloud, "Second notice")
        let sync = try await daemon.ctl("sync")
        #expect(sync.status == 0 && sync.stdout.contains("cloud: notices changed (1 new notice)"), "\(sync.stdout)\(sync.stderr)")
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(50)) { Self.notices(said: daemon.stderr).count == 2 }
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(100)) { try Self.pending(cloud).isEmpty }
        #expect(await daemon.stop() == .exited(0))
        #expect(Self.noticeWAVs(daemon) == 2)

        // Restarted with the cloud down: the cached sync (which still lists the second notice,
        // fetched before it was acknowledged) is used, and nothing is said again. A message said
        // after it shows the speaker had its chance: a notice offered at start would come first.
        _ = try await offPool { cloud.stop() }
        try await daemon.start()
        let offline = try await daemon.ctl("sync")
        #expect(offline.status == 0 && offline.stdout.contains("cloud: not reached") && offline.stdout.contains("using the sync of"),
                "\(offline.stdout)")
        #expect(try await daemon.ctl("speak", "Marker").status == 0)
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(50)) { CueLine.parse(daemon.stderr).contains { $0.text == "Marker" && $0.fate == "said" } }
        #expect(Self.notices(said: daemon.stderr).isEmpty, "\(daemon.stderr)")
        #expect(await daemon.stop() == .exited(0))

        // Fetched while muted, so not said; pacerd stops; it starts again unmuted with the cloud
        // down and says it from the cached sync; once the cloud is back it is acknowledged.
        try await offPool { try cloud.start() }
        try await Self.send(cloud, "Third notice")
        try daemon.writeConfig(Self.config(daemon, cloud, muted: true))
        try await daemon.start()
        // Fetched at start or by this sync, whichever came first; either way it waits to be said.
        let muted = try await daemon.ctl("sync")
        #expect(muted.stdout.contains("cloud: ") && muted.stdout.contains("; 1 notice to say"), "\(muted.stdout)")
        #expect(await daemon.stop() == .exited(0))
        #expect(Self.notices(said: daemon.stderr).isEmpty)
        _ = try await offPool { cloud.stop() }
        try daemon.writeConfig(Self.config(daemon, cloud, muted: false))
        try await daemon.start()
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(50)) { Self.notices(said: daemon.stderr) == ["Third notice"] }
        try await offPool { try cloud.start() }
        #expect(try Self.pending(cloud) == ["Third notice"])
        // The cloud lists what the cached sync has (a 304); the acknowledgement follows the fetch.
        let back = try await daemon.ctl("sync")
        #expect(back.stdout.contains("cloud: nothing changed"), "\(back.stdout)")
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(100)) { try Self.pending(cloud).isEmpty }
        #expect(await daemon.stop() == .exited(0))
        #expect(Self.noticeWAVs(daemon) == 3)
    }
}
