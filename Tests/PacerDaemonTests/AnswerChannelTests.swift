import Foundation
import PacerTestSupport
import Testing

/// Monitors' answers end to end (issue 22): the built pacer-cloud (SQLite, its invitation
/// e-mails caught by tools/smtp-sink) and the built pacerd speaking into WAV files through
/// espeak-ng. A monitor consents through the e-mailed link, the runner raises an SOS, the monitor
/// presses "I am on my way" on the dashboard's form: pacerd says it within 10 s, muted or not,
/// and `pacerctl sos` shows it; after a restart it is not said again, and the next answer is.
@Suite(.serialized, .timeLimit(.minutes(10))) struct AnswerChannelTests {
    static let password = "correct horse battery"

    static func config(_ daemon: DaemonFixture, _ cloud: CloudServer) -> String {
        // Muted: the coach is silent, answers (SOS priority) are still said.
        """
        [voice]
        output = "wav"
        wav_dir = "\(daemon.directory.file("speech"))"
        mute = true
        [sos]
        device_name = "pacer-test"
        sms = false
        [upload]
        url = "\(cloud.url)"
        allow_http = true
        token = "\(cloud.token)"
        sync_every_s = 3600
        """
    }

    static func answersSaid(_ stderr: String) -> [String] {
        CueLine.parse(stderr).filter { $0.kind == "sos_answer" && $0.fate == "said" }.map(\.text)
    }

    static func addUser(_ cloud: CloudServer, _ email: String, _ name: String) throws {
        let added = try DaemonFixture.runBlocking("/bin/sh", [
            "-c", "printf '%s\\n' \"$1\" | \"$2\" user add \"$3\" --display-name \"$4\" --confirmed --database \"$5\"", "sh",
            password, DaemonFixture.binary("pacer-cloud"), email, name, cloud.databaseURL,
        ])
        #expect(added.status == 0, "\(added.stderr)")
    }

    /// tools/pacertools/monitor.py: a browser's forms over HTTP.
    static func monitor(_ cloud: CloudServer, _ email: String, _ arguments: [String]) throws -> DaemonFixture.CtlResult {
        try DaemonFixture.runBlocking("/usr/bin/env", ["python3", DaemonFixture.repositoryRoot + "/tools/pacertools/monitor.py", cloud.url, email, password] + arguments)
    }

    /// pacer-cloud with Ann owning the device and Carl watching over her: Ann invites him, the
    /// e-mail reaches tools/smtp-sink, Carl accepts through its link (the consent of issue 22).
    static func cloudWithMonitor() async throws -> (CloudServer, SMTPSink) {
        let mail = try await offPool { try SMTPSink() }
        let cloud = try await offPool { try CloudServer(serveArguments: ["--smtp", "127.0.0.1:\(mail.port)", "--mail-from", "pacer@example.org"]) }
        try await offPool {
            try Self.addUser(cloud, "ann@example.org", "Ann")
            try Self.addUser(cloud, "carl@example.org", "Carl")
            let assigned = try DaemonFixture.runBlocking(DaemonFixture.binary("pacer-cloud"),
                                                         ["device", "assign", "pacer-test", "ann@example.org", "--database", cloud.databaseURL])
            #expect(assigned.status == 0, "\(assigned.stderr)")
            let consent = try Self.monitor(cloud, "ann@example.org", ["consent", "carl@example.org", mail.logFile])
            #expect(consent.status == 0, "\(consent.stdout)\(consent.stderr)")
        }
        return (cloud, mail)
    }

    @Test func aMonitorsAnswerIsSaidWithinTenSecondsOnceAcrossRestarts() async throws {
        let (cloud, mail) = try await Self.cloudWithMonitor()
        defer { mail.stop() }
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try daemon.writeConfig(Self.config(daemon, cloud))
        try await daemon.start()

        #expect(try await daemon.ctl("sos", "raise").status == 0)
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { ((try? cloud.json("/v1/alerts?state=open"))?["alerts"] as? [Any])?.count == 1 }

        // Pressed on the dashboard; said by pacerd within 10 s.
        let pressed = ContinuousClock.now
        let answered = try await offPool { try Self.monitor(cloud, "carl@example.org", ["answer", "on_my_way"]) }
        #expect(answered.status == 0, "\(answered.stdout)\(answered.stderr)")
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { Self.answersSaid(daemon.stderr) == ["Carl is on the way"] }
        #expect(ContinuousClock.now - pressed < .seconds(10))
        let shown = try await daemon.ctl("sos")
        #expect(shown.stdout.contains("answers from monitors:") && shown.stdout.contains("Carl: on my way")
                && shown.stdout.contains("said: Carl is on the way"), "\(shown.stdout)")
        let json = try await daemon.ctl("sos", "--json")
        #expect(json.stdout.contains("\"kind\":\"on_my_way\"") && json.stdout.contains("\"from\":\"Carl\""), "\(json.stdout)")
        #expect(await daemon.stop() == .exited(0))

        // Restarted: the answer is not said again, and the next one is (the long-poll goes on
        // from the remembered id, so the first would come with it if it had been forgotten).
        try await daemon.start()
        let text = try await offPool { try Self.monitor(cloud, "carl@example.org", ["answer", "text", "Stay where you are"]) }
        #expect(text.status == 0, "\(text.stdout)\(text.stderr)")
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { !Self.answersSaid(daemon.stderr).isEmpty }
        #expect(Self.answersSaid(daemon.stderr) == ["Carl says: Stay where you are"], "\(daemon.stderr)")
        // What was said before the restart still shows.
        let after = try await daemon.ctl("sos")
        #expect(after.stdout.contains("Carl: on my way") && after.stdout.contains("Carl: text \u{201C}Stay where you are\u{201D}"), "\(after.stdout)")

        // "Where are you?" during the alert: the position would be sent; without a fix there is none.
        let asked = try await offPool { try Self.monitor(cloud, "carl@example.org", ["where"]) }
        #expect(asked.status == 0, "\(asked.stdout)\(asked.stderr)")
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { daemon.stderr.contains("asked where you are") }
        #expect(daemon.stderr.contains("no position to send (no GPS fix yet)"), "\(daemon.stderr)")
        #expect(try await daemon.ctl("sos", "cancel").status == 0)
        #expect(await daemon.stop() == .exited(0))
        let wavs = ((try? FileManager.default.contentsOfDirectory(atPath: daemon.directory.file("speech"))) ?? []).filter { $0.hasSuffix("-sos_answer.wav") }
        #expect(wavs.count == 2, "\(wavs)")
    }

    /// The cloud's stored live position of the device (`PUT /v1/position`), read from its SQLite file.
    static func storedPosition(_ cloud: CloudServer) throws -> String {
        let path = String(cloud.databaseURL.dropFirst("sqlite:".count))
        return try DaemonFixture.runBlocking("/usr/bin/env", [
            "python3", "-c", "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute('SELECT body FROM position').fetchone(); print(r[0] if r else '')",
            path,
        ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func whereAreYouSendsThePositionFromAPrivacyZoneOnlyDuringAnAlert() async throws {
        let (cloud, mail) = try await Self.cloudWithMonitor()
        defer { mail.stop() }
        // The route starts at 45.47791, 9.22414, inside the runner's privacy zone (home).
        let (fake, daemon) = try await DaemonFixture.onGPSFake(route: "city-10k-1", cycle: 0.05)
        defer { daemon.cleanUp() }
        _ = await daemon.stop()
        try daemon.writeConfig(Self.config(daemon, cloud) + """

            [[privacy_zone]]
            lat = 45.4779
            lon = 9.2241
            radius_m = 500
            """)
        try await daemon.start()
        #expect(fake.release(sentences: 30))
        try await daemon.waitForStatus { ($0["gps"] as? String)?.hasSuffix("d_fix") == true }

        // No alert: asked from inside the zone, nothing leaves the device.
        #expect(try await offPool { try Self.monitor(cloud, "carl@example.org", ["where"]) }.status == 0)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { daemon.stderr.contains("asked where you are") }
        #expect(daemon.stderr.contains("inside a privacy zone and no alert open: no position sent"), "\(daemon.stderr)")
        #expect(try Self.storedPosition(cloud).isEmpty)

        // During an alert the position goes at once, zone or not.
        #expect(try await daemon.ctl("sos", "raise").status == 0)
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) { ((try? cloud.json("/v1/alerts?state=open"))?["alerts"] as? [Any])?.count == 1 }
        #expect(try await offPool { try Self.monitor(cloud, "carl@example.org", ["where"]) }.status == 0)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { !((try? Self.storedPosition(cloud)) ?? "").isEmpty }
        let position = try JSONSerialization.jsonObject(with: Data(try Self.storedPosition(cloud).utf8)) as? [String: Any]
        let lat = try #require(position?["lat"] as? Double), lon = try #require(position?["lon"] as? Double)
        #expect(abs(lat - 45.4779) < 0.001 && abs(lon - 9.2241) < 0.001, "\(String(describing: position))")
        #expect(daemon.stderr.contains("sent"), "\(daemon.stderr)")
        let shown = try await daemon.ctl("sos")
        #expect(shown.stdout.contains("Carl: where are you?") && shown.stdout.contains("position of "), "\(shown.stdout)")
        #expect(try await daemon.ctl("sos", "cancel").status == 0)
        #expect(await daemon.stop() == .exited(0))
        await fake.stop()
    }
}
