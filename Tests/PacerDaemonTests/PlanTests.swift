import Foundation
import PacerTestSupport
import Store
import Testing

/// The training plan through the built pacerd and pacerctl: a cloud (a scripted HTTP server
/// answering every request with a sync whose plan has a session today) is fetched at start; the
/// session becomes a workout file; `pacerctl plan` lists it from pacerd and, pacerd stopped, from
/// the state directory; the readiness names it; `pacerctl run start --planned` speaks its first
/// step into a WAV file; the uploaded summary carries the session's id; a second --planned is
/// refused. The real cloud fills the same section (openapi.yaml `PlanSection`).
@Suite(.serialized, .enabled(if: DaemonFixture.hasSharedData, "needs ../shared/data"), .timeLimit(.minutes(10)))
struct PlanTests {
    static let sessionID = "5e55104e-0000-4000-8000-000000000001"
    static let tomorrowID = "5e55104e-0000-4000-8000-000000000002"

    static func utcDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date)
    }

    /// A sync as the cloud sends it: linked, a plan in UTC with a session today and one tomorrow.
    static func sync(today: String, tomorrow: String) -> String {
        """
        {"sections": {"profile": {"version": "p1", "display_name": "Ann", "timezone": "UTC", "linked": true},
         "plan": {"version": "v1", "timezone": "UTC", "sessions": [
           {"id": "\(sessionID)", "date": "\(today)", "name": "6 by 400 metres", "steps": [
             {"type": "warmup", "distance_m": 800, "pace_s_per_km": [300, 360]},
             {"type": "repeat", "times": 6, "steps": [{"type": "run", "distance_m": 400, "pace_s_per_km": [190, 210]},
                                                      {"type": "recover", "distance_m": 200}]},
             {"type": "cooldown", "distance_m": 200}]},
           {"id": "\(tomorrowID)", "date": "\(tomorrow)", "name": "Easy", "steps": [{"type": "run", "time_s": 1800, "hr_zone": 2}]}]}}}
        """
    }

    @Test func aSessionPlannedForTodayIsFetchedListedAnnouncedStartedAndUploadedWithItsID() async throws {
        let now = Date()
        let today = Self.utcDate(now), tomorrow = Self.utcDate(now.addingTimeInterval(86_400))
        let json = Self.sync(today: today, tomorrow: tomorrow).replacingOccurrences(of: "\n", with: " ")
        let sink = try await offPool { try HTTPSSink(tls: false, rules: .init(status: 200, body: json)) }
        defer { sink.stop() }
        let fake = try GPSFake(log: DaemonFixture.sharedData + "/sim/track-intervals-1.nmea", options: .init(cycle: 0.02, holdUntilReleased: true))
        try await fake.start()
        let daemon = try DaemonFixture(gpsPort: fake.port)
        defer { daemon.cleanUp() }
        try daemon.writeConfig("""
            [voice]
            output = "wav"
            wav_dir = "\(daemon.directory.file("speech"))"
            [upload]
            url = "\(sink.url)"
            allow_http = true
            token = "device-token"
            sync_every_s = 3600
            """)
        try await daemon.start()

        // Fetched at start: today's session is a workout file the parser reads.
        let file = daemon.directory.file("plan/\(today)-\(Self.sessionID).toml")
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) { FileManager.default.fileExists(atPath: file) }
        let replayable = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", DaemonFixture.sharedData + "/sim/track-intervals-1.gpsd.jsonl",
                                                                                       "--workout", file, "--json"])
        #expect(replayable.status == 0, "\(replayable.stderr)")
        #expect(replayable.stdout.contains("Interval 6 of 6"), "the file is the session's workout, its six intervals")

        let plan = try await daemon.ctl("plan")
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("Plan in UTC, today \(today)"), "\(plan.stdout)")
        #expect(plan.stdout.contains("\(today)  today, next  6 by 400 metres: 800 m warmup at 5:00-6:00/km, 6 × (400 m run at 3:10-3:30/km, 200 m recover), 200 m cooldown"), "\(plan.stdout)")
        #expect(plan.stdout.contains("\(tomorrow)               Easy: 30 min run in zone 2"), "\(plan.stdout)")

        let ready = try await daemon.ctl("readiness")
        #expect(ready.stdout.contains("Today: 6 by 400 metres."), "\(ready.stdout)")

        // --planned: the session's workout, its first step spoken.
        let start = try await daemon.ctl("run", "start", "--planned")
        #expect(start.status == 0, "\(start.stderr)")
        fake.release()
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(50)) {
            CueLine.parse(daemon.stderr).contains { $0.fate == "said" && $0.kind == "step" && $0.text.hasPrefix("Warm-up: 800 metres") }
        }
        #expect(daemon.stderr.contains("with the workout \"6 by 400 metres\" (planned session \(Self.sessionID) of \(today))"))
        let files = try FileManager.default.contentsOfDirectory(atPath: daemon.directory.file("speech"))
        #expect(files.contains { $0.hasSuffix("-step.wav") }, "\(files)")
        try await daemon.waitForStatus(timeout: .seconds(60)) { ($0["distance_m"] as? Double ?? 0) > 50 }
        #expect(try await daemon.ctl("run", "stop").status == 0)

        // The uploaded summary names the session: the cloud marks it done.
        try await waitOffPool(timeout: .seconds(60), every: .milliseconds(100)) {
            sink.requests().contains { $0.method == "PUT" && $0.path.hasPrefix("/v1/runs/") && !$0.path.contains("/chunks/") }
        }
        let summary = try #require(sink.requests().last { $0.method == "PUT" && $0.path.hasPrefix("/v1/runs/") && !$0.path.contains("/chunks/") })
        let body = try JSONSerialization.jsonObject(with: Data(summary.body)) as? [String: Any]
        #expect(body?["planned_session_id"] as? String == Self.sessionID, "\(summary.bodyText)")
        #expect(body?["workout_name"] as? String == "6 by 400 metres")
        let shown = try await daemon.ctl("runs", "show", "1")
        #expect(shown.stdout.contains("Workout       6 by 400 metres (planned session \(Self.sessionID))"), "\(shown.stdout)")

        // Run once: --planned is refused with why, and the plan says so.
        let again = try await daemon.ctl("run", "start", "--planned")
        #expect(again.status == 75 && again.stderr.contains("today's planned session was run already"), "\(again.stderr)")
        #expect(try await daemon.ctl("plan").stdout.contains("6 by 400 metres (run)"))
        #expect(await daemon.stop() == .exited(0))
        await fake.stop()

        // pacerd down: pacerctl reads the last sync and the store itself.
        let offline = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["plan", "--db", daemon.databasePath, "--config", daemon.configPath])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.contains("\(today)  today        6 by 400 metres (run)"), "\(offline.stdout)")
    }

    @Test func withoutASyncPacerctlPlanSaysNoneWasFetchedAndPlannedIsRefused() async throws {
        let daemon = try DaemonFixture(gpsPort: try FreePort.tcp())
        defer { daemon.cleanUp() }
        try daemon.writeConfig("[voice]\nenabled = false")
        try await daemon.start()
        let plan = try await daemon.ctl("plan")
        #expect(plan.status == 0 && plan.stdout.hasPrefix("No plan fetched yet"), "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("The sync channel is off"), "\(plan.stdout)")
        let planned = try await daemon.ctl("run", "start", "--planned")
        #expect(planned.status == 75 && planned.stderr.contains("no training plan on this device"), "\(planned.stderr)")
        let both = try await daemon.ctl("run", "start", "--planned", "--workout", "x.toml")
        #expect(both.status == 64 && both.stderr.contains("--planned and --workout"), "\(both.stderr)")
        #expect(try await daemon.status()["state"] as? String == "idle")
        #expect(await daemon.stop() == .exited(0))

        // pacerd down, the last sync from a cloud that knows no account for the device.
        let unlinked = #"{"fetched_at": "2026-11-26T06:00:00.000Z", "sync": {"sections": {"profile": {"version": "p", "display_name": "Runner", "timezone": "UTC", "linked": false}}}}"#
        try unlinked.write(toFile: daemon.directory.file("cloud-sync.json"), atomically: true, encoding: .utf8)
        let offline = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["plan", "--db", daemon.databasePath, "--config", daemon.configPath])
        #expect(offline.status == 0 && offline.stdout.hasPrefix("Linked to no account"), "\(offline.stdout)\(offline.stderr)")
        let json = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["plan", "--json", "--db", daemon.databasePath, "--config", daemon.configPath])
        #expect(json.stdout.contains(#""state":"not_linked""#), "\(json.stdout)")
    }
}
