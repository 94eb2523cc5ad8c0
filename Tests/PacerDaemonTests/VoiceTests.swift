import Foundation
import PacerCore
import PacerTestSupport
import Testing

/// pacerd speaking: cues to WAV files through the real espeak-ng, `pacerctl speak`, `readiness`
/// and `voice mute`, and the coach deciding live exactly what a replay of the run decides.
@Suite(.serialized, .timeLimit(.minutes(10))) struct VoiceTests {
    static func voiceConfig(_ directory: TemporaryDirectory) -> String {
        """
        [voice]
        output = "wav"
        wav_dir = "\(directory.file("speech"))"
        """
    }

    /// "said (kind): text", "interrupted (kind): text" or "not said (reason) (kind): text" from
    /// pacerd's stderr, in order.
    static func cueLines(_ stderr: String) -> [(fate: String, kind: String, text: String)] {
        CueLine.parse(stderr).map { ($0.fate, $0.kind, $0.text) }
    }

    @Test func speakReadinessAndMuteGoThroughTheDaemon() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try daemon.writeConfig(Self.voiceConfig(daemon.directory))
        try await daemon.start()

        let spoken = try await daemon.ctl("speak", "Testing one two three")
        #expect(spoken.status == 0, "\(spoken.stderr)")
        let speech = daemon.directory.file("speech")
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { (try? FileManager.default.contentsOfDirectory(atPath: speech))?.contains { $0.hasSuffix("-message.wav") } == true }
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { Self.cueLines(daemon.stderr).contains { $0.fate == "said" && $0.text == "Testing one two three" } }
        let wav = try FileManager.default.contentsOfDirectory(atPath: speech).first { $0.hasSuffix("-message.wav") }!
        // 22050 Hz, 16 bit: a short sentence is well over half a second of sound.
        let size = try FileManager.default.attributesOfItem(atPath: speech + "/" + wav)[.size] as! Int
        #expect(size > 22050, "\(wav) is only \(size) bytes")

        let ready = try await daemon.ctl("readiness")
        #expect(ready.status == 0, "\(ready.stderr)")
        #expect(ready.stdout.contains("GPS receiver not available."), "\(ready.stdout)")
        #expect(ready.stdout.contains("No heart rate strap."), "\(ready.stdout)")
        #expect(ready.stdout.contains("All runs uploaded."), "\(ready.stdout)")
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { Self.cueLines(daemon.stderr).contains { $0.kind == "readiness" } }

        // Muted: a coaching-level message is dropped, and the journal says why.
        #expect(try await daemon.ctl("voice", "mute").status == 0)
        #expect(try await daemon.ctl("speak", "This is muted").status == 0)
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { Self.cueLines(daemon.stderr).contains { $0.fate == "not said (muted)" && $0.text == "This is muted" } }
        #expect(try await daemon.ctl("voice", "unmute").status == 0)

        // A malformed request: a clear refusal, and the daemon carries on.
        let empty = try await daemon.ctl("speak", "")
        #expect(empty.status != 0)
        #expect(try await daemon.ctl("status").status == 0)
        #expect(await daemon.stop() == .exited(0))
    }

    @Test(.enabled(if: DaemonFixture.hasSharedData))
    func aWorkoutRunIsCoachedAsItsReplayDecides() async throws {
        let fake = try GPSFake(log: DaemonFixture.sharedData + "/sim/track-intervals-1.nmea", options: .init(cycle: 0.004, holdUntilReleased: true))
        try await fake.start()
        let daemon = try DaemonFixture(gpsPort: fake.port)
        defer { daemon.cleanUp() }
        try daemon.writeConfig(Self.voiceConfig(daemon.directory))
        try await daemon.start()
        try await daemon.waitForStatus { $0["gps"] as? String == "no_fix" }

        let workout = DaemonFixture.repositoryRoot + "/config/workouts/track-6x400.toml"
        let start = try await daemon.ctl("run", "start", "--workout", workout)
        #expect(start.status == 0, "\(start.stderr)")
        fake.release()
        try await daemon.waitForStatus(timeout: .seconds(120)) { $0["gps"] as? String == "gpsd_unreachable" }
        #expect(try await daemon.ctl("run", "stop").status == 0)
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { Self.cueLines(daemon.stderr).contains { $0.text.hasPrefix("Run stopped.") } }

        // What the daemon decided (said, cut short or dropped as the arbiter saw fit) is what the
        // replay of the run's raw log decides. GPS loss is left out: live, the end of gpsfake's
        // log is a lost signal; in the replay the log just ends.
        let raw = daemon.directory.file("raw.gpsd.jsonl")
        let export = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["runs", "export", "1", "--format", "gpsd", "-o", raw, "--db", daemon.databasePath])
        #expect(export.status == 0, "\(export.stderr)")
        let replay = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", raw, "--workout", workout, "--json"])
        #expect(replay.status == 0, "\(replay.stderr)")
        let document = try JSONSerialization.jsonObject(with: Data(replay.stdout.utf8)) as! [String: Any]
        let replayed = (document["cues"] as! [[String: Any]]).map { "\($0["kind"]!): \($0["text"]!)" }
        let live = Self.cueLines(daemon.stderr)
            .filter { !($0.kind == "run_state" && $0.text == "Run started. Waiting for GPS.") }
            .map { "\($0.kind): \($0.text)" }
        let withoutGPSLoss = { (cues: [String]) in cues.filter { !$0.hasPrefix("gps_lost") && !$0.hasPrefix("gps_back") } }
        // The journal lists cues as the arbiter dealt with them (a dropped one when it went
        // stale), not in the order decided; their texts carry times and distances, so the same
        // multiset is the same decisions.
        #expect(withoutGPSLoss(live).sorted() == withoutGPSLoss(replayed).sorted())
        #expect(live.count >= replayed.count - 2, "every decided cue is accounted for in the journal")
        #expect(replayed.filter { $0.hasPrefix("step: Interval") }.count == 6)

        // Some of it was really spoken into WAV files.
        let files = try FileManager.default.contentsOfDirectory(atPath: daemon.directory.file("speech"))
        #expect(files.contains { $0.hasSuffix("-run_state.wav") }, "\(files)")
        #expect(files.contains { $0.hasSuffix("-step.wav") }, "\(files)")
        #expect(await daemon.stop() == .exited(0))
        await fake.stop()
    }
}
