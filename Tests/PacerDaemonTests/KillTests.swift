import Foundation
import PacerCore
import PacerTestSupport
import Store
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// pacerd SIGKILLed 50 times during a fast replayed run (gpsfake): after every kill the store is
/// sound and at most 5 s of what pacerd had taken in is lost; every restart continues the same
/// run (README: an interrupted run resumes when the next fix is within 10 minutes of it); at the
/// end there is one run, and a replay of its raw lines gives exactly what was stored.
@Suite(.serialized, .timeLimit(.minutes(10))) struct KillTests {
    static let kills = 50
    static let lossBudgetMs: Int64 = 5000

    @Test(.enabled(if: DaemonFixture.hasSharedData))
    func sigkillFiftyTimesLosesAtMostFiveSecondsEachAndResumes() async throws {
        // 3 sentences per epoch: about 30 epochs of run time per second.
        let (fake, daemon) = try await DaemonFixture.onGPSFake(route: "city-10k-1", cycle: 0.011)
        defer { Task { await fake.stop() } }
        defer { daemon.cleanUp() }
        #expect(try await daemon.startRun(releasing: fake).status == 0)

        var generator = SystemRandomNumberGenerator()
        var maxLossMs: Int64 = 0
        var losses: [Int64] = []
        for kill in 1...Self.kills {
            // Recording run 1 (again, after a restart), and some way into it.
            let first = try await daemon.waitForStatus { $0["state"] as? String == "recording" && $0["run"] as? Int == 1 && $0["last_sample_time"] is String }
            let firstTime = Timestamp(iso8601: first["last_sample_time"] as! String)!
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...600, using: &generator)))
            // What pacerd has taken in, asked right before the kill (the pipeline answers in order).
            let status = try await daemon.status()
            _ = daemon.kill()
            let ingested = (status["last_sample_time"] as? String).flatMap(Timestamp.init(iso8601:)) ?? firstTime

            let store = try RunStore(path: daemon.databasePath, readOnly: true)
            #expect(try store.integrityCheck() == "ok", "kill \(kill)")
            #expect(try store.runCount() == 1, "kill \(kill)")
            let durable = try store.track(1).samples.last?.time
            let loss = ingested.milliseconds - (durable?.milliseconds ?? 0)
            losses.append(loss)
            maxLossMs = max(maxLossMs, loss)
            #expect(loss <= Self.lossBudgetMs, "kill \(kill): ingested up to \(ingested.iso8601), durable up to \(durable?.iso8601 ?? "-")")
            try await daemon.start()
        }
        try await daemon.waitForStatus { $0["state"] as? String == "recording" && $0["run"] as? Int == 1 }
        #expect(daemon.stderr.contains("continuing run 1"))
        let stop = try await daemon.ctl("run", "stop")
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(await daemon.stop() == .exited(0))
        print("KillTests: \(Self.kills) SIGKILLs; run time lost per kill max \(maxLossMs) ms, median \(losses.sorted()[losses.count / 2]) ms (budget \(Self.lossBudgetMs) ms)")

        let store = try RunStore(path: daemon.databasePath, readOnly: true)
        #expect(try store.integrityCheck() == "ok")
        let runs = try store.runs(limit: 10)
        #expect(runs.count == 1)
        #expect(runs.first?.state == .finished)

        // The run, continued 50 times, is still exactly the replay of its raw log.
        let raw = daemon.directory.file("raw.jsonl")
        let export = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["runs", "export", "1", "--format", "gpsd", "-o", raw, "--db", daemon.databasePath])
        #expect(export.status == 0, "\(export.stderr)")
        let replayDB = daemon.directory.file("replay.db")
        let replay = try await DaemonFixture.run(DaemonFixture.binary("pacerctl"), ["replay", "--gps", raw, "--record", replayDB])
        #expect(replay.status == 0, "\(replay.stderr)")
        let replayed = try RunStore(path: replayDB, readOnly: true)
        #expect(try store.track(1).samples == replayed.track(1).samples)
        #expect(try store.detail(1).splits == replayed.detail(1).splits)
        #expect(try store.run(1)?.distance == replayed.run(1)?.distance)
    }
}
