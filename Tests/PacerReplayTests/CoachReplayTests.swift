import Foundation
import PacerCore
import Testing
@testable import PacerReplay

/// The coach over a replay: the same cues the daemon would decide, listed in the report.
@Suite(.timeLimit(.minutes(10))) struct CoachReplayTests {
    static func tpvLine(_ second: Int, speed: Double = 3) -> String {
        let time = "2026-05-10T07:\(30 + second / 60):\(String(format: "%02d", second % 60)).000Z"
        return #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"\#(time)","lat":\#(45.4775 + Double(second) * 0.000027 * speed / 3),"lon":9.2241,"speed":\#(speed),"track":0.0,"eph":15.2}"#
    }

    @Test func withoutACoachThereAreNoCues() throws {
        let path = SharedData.temporaryFile((0..<20).map { Self.tpvLine($0) }.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inputs = try ReplayLoader.load(gpsPath: path, heartRatePath: nil)
        #expect(Replay.run(inputs, configuration: TrackerConfiguration()).cues.isEmpty)
    }

    @Test func startAndStopAndTheirJSON() throws {
        let path = SharedData.temporaryFile((0..<20).map { Self.tpvLine($0) }.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inputs = try ReplayLoader.load(gpsPath: path, heartRatePath: nil)
        let report = Replay.run(inputs, configuration: TrackerConfiguration(), coach: Coach())
        #expect(report.cues.map(\.kind) == [.runState, .runState])
        #expect(report.cues.first == Cue(time: Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!, kind: .runState, text: "Run started."))
        #expect(report.cues.last?.time == Timestamp(iso8601: "2026-05-10T07:30:19.000Z")!)
        #expect(report.cues.last?.text.hasPrefix("Run stopped. ") == true)

        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let cues = try #require(json["cues"] as? [[String: Any]])
        #expect(cues.count == 2)
        #expect(cues.first?["time"] as? String == "2026-05-10T07:30:00.000Z")
        #expect(cues.first?["kind"] as? String == "run_state")
        #expect(cues.first?["priority"] as? String == "workout")
        #expect(cues.first?["text"] as? String == "Run started.")
        #expect(Set(cues.flatMap { $0.keys }) == ["time", "kind", "priority", "text"])
    }

    @Test func theSessionGivesTheSameCuesAsRun() throws {
        let lines = (0..<400).map { Self.tpvLine($0, speed: 4) }
        let path = SharedData.temporaryFile(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inputs = try ReplayLoader.load(gpsPath: path, heartRatePath: nil)
        let coach = Coach(workout: CoachReplayOnTrackTests.workout(runPace: (190, 210)))
        let whole = Replay.run(inputs, configuration: TrackerConfiguration(), coach: coach)
        var session = ReplaySession(inputs: inputs, configuration: TrackerConfiguration(), coach: coach)
        for item in inputs.items { _ = session.ingest(item) }
        #expect(session.finish().report.cues == whole.cues)
        #expect(whole.cues.contains { $0.kind == .summary })  // 1.6 km
        #expect(whole.cues.contains { $0.kind == .step })
    }
}

/// track-intervals-1 (60 s standing, 800 m at 3.0 m/s, 6 × 400 m at 5.0 m/s with 200 m jogs at
/// 2.4 m/s, no jog after the 6th, 30 s stop, 400 m at 2.8 m/s) coached with
/// config/workouts/track-6x400.toml, built here as WorkoutFile parses it (this target does not
/// depend on PacerConfig; pacerctlTests runs the file itself through `pacerctl replay --workout`).
@Suite(.enabled(if: SharedData.isAvailable, "needs ../shared/data beside the repository"), .timeLimit(.minutes(10)))
struct CoachReplayOnTrackTests {
    struct Truth: Decodable {
        struct Sample: Decodable {
            var t: Double
            var speed: Double
        }
        var samples: [Sample]
    }

    /// track-6x400.toml with the runs' pace range (seconds per km).
    static func workout(runPace: (Double, Double)) -> Workout {
        let run = WorkoutStep(kind: .run, end: .distance(meters: 400), target: .pace(fastest: runPace.0, slowest: runPace.1))
        return Workout(name: "6 x 400 m on the track", items: [
            .step(WorkoutStep(kind: .warmup, end: .distance(meters: 800), target: .pace(fastest: 300, slowest: 360))),
            .repeated(times: 6, steps: [run, WorkoutStep(kind: .recover, end: .distance(meters: 200))]),
            .step(WorkoutStep(kind: .cooldown, end: .distance(meters: 200))),
        ])
    }

    /// The truth's rep starts and ends (seconds from the first epoch): where the speed goes to
    /// 5.0 m/s and where it leaves it.
    static func reps() throws -> [(start: Double, end: Double)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: SharedData.path("sim/track-intervals-1.truth.json")))
        let samples = try JSONDecoder().decode(Truth.self, from: data).samples
        var reps: [(Double, Double)] = []
        for (a, b) in zip(samples, samples.dropFirst()) {
            if a.speed != 5, b.speed == 5 { reps.append((b.t, .nan)) }
            if a.speed == 5, b.speed != 5 { reps[reps.count - 1].1 = b.t }
        }
        return reps
    }

    static func replay(runPace: (Double, Double)) throws -> (cues: [Cue], t0: Timestamp) {
        let inputs = try ReplayLoader.load(gpsPath: SharedData.path("sim/track-intervals-1.gpsd.jsonl"), heartRatePath: nil)
        let report = Replay.run(inputs, configuration: TrackerConfiguration(), coach: Coach(workout: workout(runPace: runPace)))
        return (report.cues, report.samples[0].time)
    }

    @Test func truthHasSixReps() throws {
        let reps = try Self.reps()
        #expect(reps.map(\.start) == [327, 490, 654, 817, 980, 1144])
        #expect(reps.map(\.end) == [407, 570, 734, 897, 1060, 1224])
    }

    @Test func intervalsAreAnnouncedWhereTheRepsStartAndNothingIsCorrected() throws {
        let (cues, t0) = try Self.replay(runPace: (190, 210))  // "3:10-3:30"
        let reps = try Self.reps()
        let intervals = cues.filter { $0.kind == .step && $0.text.hasPrefix("Interval ") }
        #expect(intervals.map(\.text) == (1...6).map { "Interval \($0) of 6: 400 metres at 3 minutes 20 per kilometre." })
        try #require(intervals.count == 6)
        for (cue, rep) in zip(intervals, reps) {
            let at = cue.time.seconds(since: t0)
            #expect(abs(at - rep.start) <= 3, "\(cue.text) at \(at) s, the rep starts at \(rep.start) s")
        }
        // Warm-up at 3.0 m/s in "5:00-6:00", reps at 5.0 m/s in "3:10-3:30", jogs untargeted.
        #expect(cues.filter { $0.kind == .speedUp || $0.kind == .slowDown || $0.kind == .onTarget }.isEmpty)
        var expected = ["Warm-up: 800 metres at 5 minutes 30 per kilometre."]
        for k in 1...6 { expected += ["Interval \(k) of 6: 400 metres at 3 minutes 20 per kilometre.", "Recovery \(k) of 6: 200 metres."] }
        expected.append("Cool-down: 200 metres.")
        // The run is 4.6 km, the workout too: "Workout complete." may or may not make it.
        let steps = cues.filter { $0.kind == .step }.map(\.text)
        #expect(Array(steps.prefix(14)) == expected)
        #expect(steps.dropFirst(14).allSatisfy { $0 == "Workout complete." })
    }

    /// Each rep ends (and its recovery is announced) where the runner stops running fast. The
    /// 6th ends at 4200 m, at 1224 s, just before a 30 s stop: announced late it is announced
    /// after the stop.
    @Test func recoveriesAreAnnouncedWhereTheRepsEnd() throws {
        let (cues, t0) = try Self.replay(runPace: (190, 210))
        let reps = try Self.reps()
        let recoveries = cues.filter { $0.kind == .step && $0.text.hasPrefix("Recovery ") }
        try #require(recoveries.count == 6)
        for (cue, rep) in zip(recoveries, reps) {
            let at = cue.time.seconds(since: t0)
            #expect(abs(at - rep.end) <= 3, "\(cue.text) at \(at) s, the rep ends at \(rep.end) s")
        }
    }

    @Test func aTargetTooFastForTheRunnerIsCorrectedInEveryRepWithoutChatter() throws {
        let (cues, t0) = try Self.replay(runPace: (175, 185))  // "2:55-3:05": 5.0 m/s is too slow
        let reps = try Self.reps()
        let corrective = cues.filter { $0.kind == .speedUp || $0.kind == .slowDown || $0.kind == .onTarget }
        let speedUps = corrective.filter { $0.kind == .speedUp }.map { $0.time.seconds(since: t0) }
        for (k, rep) in reps.enumerated() {
            #expect(speedUps.contains { $0 >= rep.start && $0 <= rep.end }, "rep \(k + 1) (\(rep.start)–\(rep.end) s): \(speedUps)")
        }
        // Only in the reps: the warm-up is on target and the jogs have none.
        for at in corrective.map({ $0.time.seconds(since: t0) }) {
            #expect(reps.contains { at >= $0.start && at <= $0.end }, "correction at \(at) s outside the reps")
        }
        for (a, b) in zip(corrective, corrective.dropFirst()) {
            #expect(b.time.seconds(since: a.time) >= CoachConfiguration().correctionGapSeconds)
        }
        #expect(cues.filter { $0.kind == .slowDown }.isEmpty)
    }
}
