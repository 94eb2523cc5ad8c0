import Foundation
import PacerCore
import Testing
@testable import PacerConfig

/// The repository's root, found from this file (Tests/PacerConfigTests/…) as the config tests do.
let repositoryRoot = "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
let workoutsDirectory = repositoryRoot + "/config/workouts"

@Suite(.timeLimit(.minutes(10))) struct WorkoutFileTests {
    @Test func parsesTheFormatInOrder() throws {
        let workout = try WorkoutFile.parse("""
            name = "6 x 400 m on the track"   # a comment
            [[step]]
            type = "warmup"
            distance_m = 1200
            [[step]]
            type = "repeat"
            times = 6
            steps = 2
            [[step]]
            type = "run"
            distance_m = 400
            pace = "3:10 - 3:30"
            [[step]]
            type = "recover"
            distance_m = 200
            [[step]]
            type = "cooldown"
            lap = true
            hr_zone = 2
            """, file: "w.toml")
        #expect(workout == Workout(name: "6 x 400 m on the track", items: [
            .step(WorkoutStep(kind: .warmup, end: .distance(meters: 1200))),
            .repeated(times: 6, steps: [
                WorkoutStep(kind: .run, end: .distance(meters: 400), target: .pace(fastest: 190, slowest: 210)),
                WorkoutStep(kind: .recover, end: .distance(meters: 200)),
            ]),
            .step(WorkoutStep(kind: .cooldown, end: .lapButton, target: .heartRateZone(2))),
        ]))
    }

    @Test func unitsAreConvertedToMetresSecondsAndSecondsPerKilometre() throws {
        let workout = try WorkoutFile.parse("""
            name = "units"
            [[step]]
            type = "run"
            distance_mi = 1
            pace_per_mi = "5:05-5:35"
            [[step]]
            type = "run"
            distance_km = 2.5
            hr_bpm = [150, 165]
            [[step]]
            type = "rest"
            time_min = 1.5
            [[step]]
            type = "recover"
            time_s = 45
            pace = "6:00–7:30"
            """, file: "w.toml")
        let steps = workout.plan.map(\.step)
        #expect(steps.map(\.kind) == [.run, .run, .rest, .recover])
        #expect(steps[0].end == .distance(meters: 1609.344))
        guard case .pace(let fastest, let slowest) = steps[0].target else { Issue.record("no pace"); return }
        #expect(abs(fastest - 305 / 1.609344) < 1e-9)
        #expect(abs(slowest - 335 / 1.609344) < 1e-9)
        #expect(steps[1].end == .distance(meters: 2500))
        #expect(steps[1].target == .heartRate(low: 150, high: 165))
        #expect(steps[2].end == .time(seconds: 90))
        #expect(steps[2].target == nil)
        #expect(steps[3].end == .time(seconds: 45))
        #expect(steps[3].target == .pace(fastest: 360, slowest: 450))  // an en dash is accepted
    }

    @Test func repeatsMayFollowEachOther() throws {
        let workout = try WorkoutFile.parse("""
            name = "ladders"
            [[step]]
            type = "repeat"
            times = 2
            steps = 1
            [[step]]
            type = "run"
            time_s = 60
            [[step]]
            type = "repeat"
            times = 3
            steps = 1
            [[step]]
            type = "recover"
            time_s = 30
            """, file: "w.toml")
        #expect(workout.items == [
            .repeated(times: 2, steps: [WorkoutStep(kind: .run, end: .time(seconds: 60))]),
            .repeated(times: 3, steps: [WorkoutStep(kind: .recover, end: .time(seconds: 30))]),
        ])
        #expect(workout.plan.count == 5)
    }

    struct BadWorkout: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var key: String?
        var problem: String
        var testDescription: String { problem }
    }

    @Test(arguments: [
        // Keys.
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ndistance = 400\n", line: 4, key: "step[1].distance", problem: "unknown key"),
        BadWorkout(text: "title = \"w\"\n", line: 1, key: "title", problem: "unknown key"),
        BadWorkout(text: "[workout]\nname = \"w\"\n", line: 2, key: "workout.name", problem: "unknown key"),
        BadWorkout(text: "[[step]]\ntype = \"run\"\ntime_s = 60\nname = \"w\"\n", line: 4, key: "step[1].name", problem: "name belongs at the top"),
        BadWorkout(text: "[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 1, key: "name", problem: "missing"),
        BadWorkout(text: "name = \"\"\n[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 1, key: "name", problem: "empty string"),
        BadWorkout(text: "name = \"w\"\n", line: 1, key: "step", problem: "no steps"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\ntime_s = 90\n", line: 5, key: "step[1].time_s", problem: "set twice"),
        // Tables.
        BadWorkout(text: "name = \"w\"\n[[steps]]\n", line: 2, key: nil, problem: "unknown table \"[[steps]]\" (expected [[step]])"),
        BadWorkout(text: "name = \"w\"\n[[step]\n", line: 2, key: nil, problem: "malformed table header"),
        BadWorkout(text: "name = \"w\"\n[step]\n[[step]]\n", line: 3, key: nil, problem: "already a [section]"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\n[step]\n", line: 5, key: nil, problem: "already a [[table]]"),
        // Type.
        BadWorkout(text: "name = \"w\"\n[[step]]\ntime_s = 60\n", line: 2, key: "step[1].type", problem: "missing: every step needs a type"),
        BadWorkout(text: "name = \"w\"\n[[step]]\n[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 2, key: "step[1].type", problem: "missing"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"interval\"\n", line: 3, key: "step[1].type",
                   problem: "expected one of warmup, run, recover, rest, cooldown or repeat, got \"interval\""),
        // End conditions.
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\npace = \"3:10-3:30\"\n", line: 2, key: "step[1]", problem: "no end condition: set one of"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ndistance_m = 400\ntime_s = 60\n", line: 5, key: "step[1].time_s",
                   problem: "a step has one end condition, and distance_m is already set at line 4"),
        BadWorkout(text: "name = \"w\"\n[[step]]\nlap = true\ntype = \"run\"\ndistance_km = 1\n", line: 5, key: "step[1].distance_km", problem: "lap is already set at line 3"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\nlap = false\n", line: 4, key: "step[1].lap", problem: "expected true"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ndistance_m = 0\n", line: 4, key: "step[1].distance_m", problem: "from 10 to 100000, got 0"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ndistance_m = \"400\"\n", line: 4, key: "step[1].distance_m", problem: "got a string"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = -60\n", line: 4, key: "step[1].time_s", problem: "got -60"),
        // Targets.
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = \"3.10-3.30\"\n", line: 5, key: "step[1].pace",
                   problem: "expected a pace range like \"3:10-3:30\" (fastest-slowest, minutes:seconds per kilometre), got \"3.10-3.30\""),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = \"3:20\"\n", line: 5, key: "step[1].pace", problem: "expected a pace range"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = \"3:60-4:10\"\n", line: 5, key: "step[1].pace", problem: "expected a pace range"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = \"3:5-3:30\"\n", line: 5, key: "step[1].pace", problem: "expected a pace range"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = \"3:30-3:10\"\n", line: 5, key: "step[1].pace",
                   problem: "the faster pace comes first: \"3:10-3:30\", got \"3:30-3:10\""),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = \"3:20-3:20\"\n", line: 5, key: "step[1].pace", problem: "two different paces"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = \"0:30-0:40\"\n", line: 5, key: "step[1].pace",
                   problem: "expected paces from 1:00 to 30:00 per kilometre, got 0:30"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace_per_mi = \"1:00-1:20\"\n", line: 5, key: "step[1].pace_per_mi",
                   problem: "expected paces from 1:30 to 48:00 per mile, got 1:00"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = 320\n", line: 5, key: "step[1].pace", problem: "got a number"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\npace = \"3:10-3:30\"\nhr_zone = 4\n", line: 6, key: "step[1].hr_zone",
                   problem: "at most one target, and pace is already set at line 5"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\nhr_zone = 6\n", line: 5, key: "step[1].hr_zone", problem: "from 1 to 5, got 6"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\nhr_bpm = [165, 150]\n", line: 5, key: "step[1].hr_bpm",
                   problem: "lower heart rate first: [150, 165], got [165, 150]"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\nhr_bpm = [150]\n", line: 5, key: "step[1].hr_bpm", problem: "two numbers, [low, high], got 1"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\nhr_bpm = [150, 150]\n", line: 5, key: "step[1].hr_bpm", problem: "two different heart rates"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\nhr_bpm = [20, 150]\n", line: 5, key: "step[1].hr_bpm", problem: "20 is not one"),
        // Repeats.
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\ntimes = 2\nsteps = 3\n[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 5, key: "step[1].steps",
                   problem: "the repeat covers the next 3 [[step]] tables, but only 1 follow it"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\ntimes = 2\nsteps = 2\n[[step]]\ntype = \"repeat\"\ntimes = 2\nsteps = 1\n[[step]]\ntype = \"run\"\ntime_s = 60\n",
                   line: 7, key: "step[2].type", problem: "a repeat cannot contain another repeat: the repeat at line 3 covers step[2] to step[3]"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\ntimes = 0\nsteps = 1\n[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 4, key: "step[1].times",
                   problem: "from 1 to 100, got 0"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\ntimes = 2.5\nsteps = 1\n", line: 4, key: "step[1].times", problem: "got 2.5"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\ntimes = 2\nsteps = 0\n", line: 5, key: "step[1].steps", problem: "got 0"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\nsteps = 1\n[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 2, key: "step[1].times", problem: "missing: a repeat needs times"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\ntimes = 2\n[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 2, key: "step[1].steps", problem: "missing: a repeat needs steps"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\ntimes = 2\nsteps = 1\ndistance_m = 400\n[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 6,
                   key: "step[1].distance_m", problem: "a repeat has no end condition of its own"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"repeat\"\ntimes = 2\nsteps = 1\nhr_zone = 3\n[[step]]\ntype = \"run\"\ntime_s = 60\n", line: 6,
                   key: "step[1].hr_zone", problem: "a repeat has no target of its own"),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\ntime_s = 60\ntimes = 6\n", line: 5, key: "step[1].times", problem: "only a step with type = \"repeat\""),
        BadWorkout(text: "name = \"w\"\n[[step]]\ntype = \"run\"\nsteps = 2\ntime_s = 60\n", line: 4, key: "step[1].steps", problem: "only a step with type = \"repeat\""),
    ])
    func badWorkoutsAreLocated(_ bad: BadWorkout) {
        #expect {
            _ = try WorkoutFile.parse(bad.text, file: "workouts/w.toml")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.file == "workouts/w.toml" && error.line == bad.line && error.key == bad.key && error.description.contains(bad.problem)
        }
    }

    @Test func aTargetOnALapStepIsFine() throws {
        let workout = try WorkoutFile.parse("name = \"w\"\n[[step]]\ntype = \"run\"\nlap = true\npace_per_mi = \"6:00-6:30\"\n", file: "w.toml")
        #expect(workout.plan.first?.step.end == .lapButton)
        #expect(workout.plan.first?.step.target != nil)
    }

    // MARK: - The examples in config/workouts

    @Test func everyExampleParses() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: workoutsDirectory).filter { $0.hasSuffix(".toml") }.sorted()
        #expect(Set(files).isSuperset(of: ["easy-zone2.toml", "fartlek.toml", "track-6x400.toml"]))
        for name in files {
            let workout = try WorkoutFile.load(path: workoutsDirectory + "/" + name)
            #expect(!workout.name.isEmpty && !workout.plan.isEmpty, "\(name)")
        }
    }

    @Test func trackExamplePlan() throws {
        let workout = try WorkoutFile.load(path: workoutsDirectory + "/track-6x400.toml")
        #expect(workout.name == "6 x 400 m on the track")
        let plan = workout.plan
        #expect(plan.count == 14)
        #expect(plan.map(\.step.kind) == [.warmup] + Array(repeating: [WorkoutStep.Kind.run, .recover], count: 6).flatMap { $0 } + [.cooldown])
        #expect(plan.first?.repetition == nil && plan.last?.repetition == nil)
        let runs = plan.filter { $0.step.kind == .run }
        #expect(runs.map { $0.repetition?.round } == [1, 2, 3, 4, 5, 6])
        #expect(runs.allSatisfy { $0.repetition?.of == 6 })
        #expect(runs.allSatisfy { $0.step == WorkoutStep(kind: .run, end: .distance(meters: 400), target: .pace(fastest: 190, slowest: 210)) })
        #expect(plan[0].step.end == .distance(meters: 800))
        #expect(plan.map { meters($0.step.end) }.reduce(0, +) == 4600)
    }

    @Test func easyAndFartlekExamples() throws {
        let easy = try WorkoutFile.load(path: workoutsDirectory + "/easy-zone2.toml").plan.map(\.step)
        #expect(easy == [
            WorkoutStep(kind: .warmup, end: .time(seconds: 600), target: .heartRateZone(1)),
            WorkoutStep(kind: .run, end: .time(seconds: 1800), target: .heartRateZone(2)),
            WorkoutStep(kind: .cooldown, end: .time(seconds: 300), target: .heartRate(low: 100, high: 130)),
        ])
        let fartlek = try WorkoutFile.load(path: workoutsDirectory + "/fartlek.toml").plan
        #expect(fartlek.count == 1 + 16 + 3)
        #expect(fartlek.allSatisfy { if case .lapButton = $0.step.end { true } else if case .time = $0.step.end { true } else { false } })
        let lapSteps = fartlek.filter { $0.step.end == .lapButton }
        #expect(lapSteps.count == 1 && lapSteps[0].step.kind == .run && lapSteps[0].step.target == .pace(fastest: 240, slowest: 270))
        #expect(fartlek.contains { $0.step.kind == .rest })
    }

    /// The README's two error examples are what the parser says about the shipped file so changed.
    @Test func readmeErrorExamplesAreTrue() throws {
        let text = try String(contentsOfFile: workoutsDirectory + "/track-6x400.toml", encoding: .utf8)
        let readme = try String(contentsOfFile: workoutsDirectory + "/README.md", encoding: .utf8)
        let swapped = text.replacingOccurrences(of: "pace = \"3:10-3:30\"", with: "pace = \"3:30-3:10\"")
        let noDistance = text.replacingOccurrences(of: "type = \"run\"\ndistance_m = 400\n", with: "type = \"run\"\n")
        #expect(swapped != text && noDistance != text)
        for changed in [swapped, noDistance] {
            do {
                _ = try WorkoutFile.parse(changed, file: "track-6x400.toml")
                Issue.record("accepted a broken file")
            } catch {
                #expect(readme.contains(error.description), "README does not show \(error.description)")
            }
        }
    }

    /// The track example lines up with the synthetic route it was written for: every 5.0 m/s
    /// sample of ../shared/data/sim/track-intervals-1 falls in a run step and every run step is
    /// run at 5.0 m/s, by the route's true distance (a replay measures within 5 m of it).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: repositoryRoot + "/../shared/data/sim/track-intervals-1.truth.json"),
                   "needs ../shared/data beside the repository"))
    func trackExampleLinesUpWithTheSyntheticRoute() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/../shared/data/sim/track-intervals-1.truth.json"))
        let truth = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let samples = try #require(truth["samples"] as? [[String: Any]]).compactMap { sample -> (s: Double, speed: Double)? in
            guard let s = sample["s"] as? Double, let speed = sample["speed"] as? Double else { return nil }
            return (s, speed)
        }
        #expect(samples.count > 1000)
        let plan = try WorkoutFile.load(path: workoutsDirectory + "/track-6x400.toml").plan
        var runs: [ClosedRange<Double>] = []
        var start = 0.0
        for step in plan {
            let end = start + meters(step.step.end)
            // 5 m in from either end: the speed changes between two 1 s samples.
            let inside = samples.filter { $0.s > start + 5 && $0.s < end - 5 }
            #expect(!inside.isEmpty)
            for sample in inside where (abs(sample.speed - 5.0) < 0.01) != (step.step.kind == .run) {
                Issue.record("\(step.step.kind) step at \(sample.s) m is run at \(sample.speed) m/s")
            }
            if step.step.kind == .run { runs.append(start...end) }
            start = end
        }
        #expect(start == (truth["summary"] as? [String: Any])?["distance_m"] as? Double)
        let fast = samples.filter { abs($0.speed - 5.0) < 0.01 }
        #expect(fast.count == 6 * 80)  // six reps of 400 m at 5 m/s, one sample a second
        for sample in fast where !runs.contains(where: { $0.contains(sample.s) }) {
            Issue.record("a fast sample at \(sample.s) m is outside every run step")
        }
    }

    // MARK: - Loading

    @Test func loadNamesAMissingOrUnreadableFile() throws {
        #expect(throws: WorkoutLoadError.missing(path: "/nonexistent/w.toml")) { try WorkoutFile.load(path: "/nonexistent/w.toml") }
        #expect(WorkoutLoadError.missing(path: "/x/w.toml").description == "/x/w.toml: no such workout file")
        do {
            _ = try WorkoutFile.load(path: workoutsDirectory)  // a directory: open works, read does not
            Issue.record("loaded a directory")
        } catch {
            guard case .unreadable(let path, let reason) = error else { Issue.record("\(error)"); return }
            #expect(path == workoutsDirectory && reason.contains("directory"))
            #expect(error.description.hasPrefix("\(workoutsDirectory): cannot read workout ("))
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pacer-workout-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bad = directory.appendingPathComponent("bad.toml").path
        try "name = \"w\"\n[[step]]\ntype = \"run\"\n".write(toFile: bad, atomically: true, encoding: .utf8)
        #expect {
            try WorkoutFile.load(path: bad)
        } throws: { error in
            guard case .invalid(let inner) = error as? WorkoutLoadError else { return false }
            return inner.file == bad && inner.line == 2 && (error as! WorkoutLoadError).description.hasPrefix("\(bad):2: step[1]: no end condition")
        }
    }
}

private func meters(_ end: WorkoutStep.End) -> Double {
    if case .distance(let m) = end { return m }
    Issue.record("not a distance step: \(end)")
    return 0
}
