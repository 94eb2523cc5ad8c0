import Foundation
import PacerCore
import PacerTestSupport
import Testing

/// `pacerctl replay --workout` as a person runs it: the built binary, the repository's workout
/// files, the cues in `--json`. (In process, PacerReplayTests' CoachReplayOnTrackTests runs the
/// same replay with the workout built in code: that target does not depend on PacerConfig.)
@Suite(.timeLimit(.minutes(10))) struct ReplayWorkoutTests {
    static let track = PacerCtlTests.sharedData + "/sim/track-intervals-1.gpsd.jsonl"
    static let trackWorkout = PacerCtlTests.repositoryRoot + "/config/workouts/track-6x400.toml"

    struct Cue {
        var at: Double  // seconds from the first sample
        var kind: String
        var priority: String
        var text: String
    }

    func pacerctl(_ arguments: String...) async throws -> PacerCtlTests.Result {
        try await offPool { try PacerCtlTests.runBlocking(arguments) }
    }

    func temporary(_ content: String, _ suffix: String) -> String {
        let path = NSTemporaryDirectory() + "pacerctl-workout-\(UUID().uuidString)\(suffix)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(content.utf8))
        return path
    }

    /// The cues of a `--json` document, timed from its first sample.
    func cues(_ json: String) throws -> [Cue] {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let samples = try #require(document["samples"] as? [[String: Any]])
        let start = try #require(samples.first?["time"] as? String)
        let t0 = try #require(Timestamp(iso8601: start))
        var cues: [Cue] = []
        for cue in try #require(document["cues"] as? [[String: Any]]) {
            let iso = try #require(cue["time"] as? String)
            let time = try #require(Timestamp(iso8601: iso))
            let kind = try #require(cue["kind"] as? String)
            let priority = try #require(cue["priority"] as? String)
            let text = try #require(cue["text"] as? String)
            cues.append(Cue(at: time.seconds(since: t0), kind: kind, priority: priority, text: text))
        }
        return cues
    }

    /// The truth's reps (seconds from its first epoch): where the speed goes to 5.0 m/s and
    /// where it leaves it.
    func reps() throws -> [(start: Double, end: Double)] {
        let data = try Data(contentsOf: URL(fileURLWithPath: PacerCtlTests.sharedData + "/sim/track-intervals-1.truth.json"))
        let truth = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let samples = try #require(truth["samples"] as? [[String: Any]]).map {
            (($0["t"] as? NSNumber)?.doubleValue ?? .nan, ($0["speed"] as? NSNumber)?.doubleValue ?? .nan)
        }
        var reps: [(Double, Double)] = []
        for (a, b) in zip(samples, samples.dropFirst()) {
            if a.1 != 5, b.1 == 5 { reps.append((b.0, .nan)) }
            if a.1 == 5, b.1 != 5 { reps[reps.count - 1].1 = b.0 }
        }
        try #require(reps.count == 6)
        return reps
    }

    static let corrective: Set<String> = ["speed_up", "slow_down", "on_target"]

    @Test(.enabled(if: PacerCtlTests.hasSharedData))
    func theRepositorysTrackWorkoutOverTrackIntervals() async throws {
        let r = try await pacerctl("replay", "--gps", Self.track, "--workout", Self.trackWorkout, "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let cues = try cues(r.stdout)
        let reps = try reps()
        let intervals = cues.filter { $0.kind == "step" && $0.text.hasPrefix("Interval ") }
        #expect(intervals.map(\.text) == (1...6).map { "Interval \($0) of 6: 400 metres at 3 minutes 20 per kilometre." })
        #expect(intervals.allSatisfy { $0.priority == "workout" })
        try #require(intervals.count == 6)
        for (cue, rep) in zip(intervals, reps) {
            #expect(abs(cue.at - rep.start) <= 3, "\(cue.text) at \(cue.at) s; the rep starts at \(rep.start) s")
        }
        #expect(cues.filter { Self.corrective.contains($0.kind) }.isEmpty, "\(cues.filter { Self.corrective.contains($0.kind) }.map(\.at))")
        #expect(cues.first?.text == "Run started.")
        #expect(cues.dropFirst().first?.text == "Warm-up: 800 metres at 5 minutes 30 per kilometre.")
        #expect(cues.last?.text.hasPrefix("Run stopped. 4.6 kilometres in ") == true)
        // The default summary every kilometre, none of it shown as a clock.
        #expect(cues.filter { $0.kind == "summary" }.count == 4)
        for cue in cues { #expect(!cue.text.contains(/\d:\d/) && !cue.text.contains("/"), "\(cue.text)") }
    }

    @Test(.enabled(if: PacerCtlTests.hasSharedData))
    func aTargetTooFastForTheRunnerIsCorrectedInEveryRep() async throws {
        let original = try String(contentsOfFile: Self.trackWorkout, encoding: .utf8)
        try #require(original.contains(#"pace = "3:10-3:30""#))
        let workout = temporary(original.replacingOccurrences(of: #"pace = "3:10-3:30""#, with: #"pace = "2:55-3:05""#), ".toml")
        defer { try? FileManager.default.removeItem(atPath: workout) }
        let r = try await pacerctl("replay", "--gps", Self.track, "--workout", workout, "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let cues = try cues(r.stdout)
        let reps = try reps()
        #expect(cues.filter { $0.kind == "step" && $0.text.hasPrefix("Interval ") }.map(\.text)
            == (1...6).map { "Interval \($0) of 6: 400 metres at 3 minutes per kilometre." })
        let corrective = cues.filter { Self.corrective.contains($0.kind) }
        let speedUps = corrective.filter { $0.kind == "speed_up" }
        for (k, rep) in reps.enumerated() {
            #expect(speedUps.contains { $0.at >= rep.start && $0.at <= rep.end },
                    "rep \(k + 1) (\(rep.start)–\(rep.end) s) has no speed_up: \(speedUps.map(\.at))")
        }
        #expect(speedUps.allSatisfy { $0.text == "Speed up." && $0.priority == "workout" })
        for cue in corrective {
            #expect(reps.contains { cue.at >= $0.start && cue.at <= $0.end }, "\(cue.kind) at \(cue.at) s is outside the reps")
        }
        for (a, b) in zip(corrective, corrective.dropFirst()) {
            #expect(b.at - a.at >= 20, "\(a.kind) at \(a.at) s and \(b.kind) at \(b.at) s")
        }
    }

    @Test(.enabled(if: PacerCtlTests.hasSharedData))
    func voiceOffMeansNoCuesUnlessAWorkoutIsAskedFor() async throws {
        let config = temporary("[voice]\nenabled = false\n", ".toml")
        defer { try? FileManager.default.removeItem(atPath: config) }
        let silent = try await pacerctl("replay", "--gps", Self.track, "--config", config, "--json")
        #expect(silent.status == 0, "\(silent.stderr)")
        #expect(try cues(silent.stdout).isEmpty)
        let coached = try await pacerctl("replay", "--gps", Self.track, "--config", config, "--workout", Self.trackWorkout, "--json")
        #expect(coached.status == 0, "\(coached.stderr)")
        #expect(try cues(coached.stdout).filter { $0.kind == "step" }.count >= 14)
        // Voice on (the default): the coach runs without a workout too.
        let plain = try await pacerctl("replay", "--gps", Self.track, "--json")
        let plainCues = try cues(plain.stdout)
        #expect(plainCues.first?.text == "Run started.")
        #expect(plainCues.filter { $0.kind == "step" || Self.corrective.contains($0.kind) }.isEmpty)
    }

    @Test(.enabled(if: PacerCtlTests.hasSharedData))
    func theReadableOutputListsTheCues() async throws {
        let r = try await pacerctl("replay", "--gps", Self.track, "--workout", Self.trackWorkout)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("step: Interval 6 of 6: 400 metres at 3 minutes 20 per kilometre."))
    }

    @Test func aMissingOrBadWorkoutFileIsRefused() async throws {
        let missing = try await pacerctl("replay", "--gps", "/dev/null", "--workout", "/nonexistent/intervals.toml")
        #expect(missing.status == 66)
        #expect(missing.stderr.contains("/nonexistent/intervals.toml"))
        let bad = temporary("name = \"x\"\n\n[[step]]\ntype = \"run\"\ndistance_m = 400\npace = \"3:30-3:10\"\n", ".toml")
        defer { try? FileManager.default.removeItem(atPath: bad) }
        let invalid = try await pacerctl("replay", "--gps", "/dev/null", "--workout", bad)
        #expect(invalid.status == 65)
        #expect(invalid.stderr.contains("\(bad):6: step[1].pace"), "\(invalid.stderr)")
    }
}
