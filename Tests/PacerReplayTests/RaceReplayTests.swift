import Foundation
import PacerCore
import Testing
@testable import PacerReplay

/// Race progress in replay: the sim routes' real gpsd 3.22 output through the device's own
/// pipeline (RunTracker's samples), on courses made from their truth. The targets of issue #34:
/// progress within 30 m of the truth for 95 % of fixes, no step back over 100 m, gun and net time
/// within 1 s. tools/bench-race prints the same figures as a table.
@Suite(.enabled(if: SharedData.isAvailable, "needs ../shared/data beside the repository"), .timeLimit(.minutes(10)))
struct RaceReplayTests {
    struct Truth: Decodable {
        struct Summary: Decodable { var start: String }
        struct Sample: Decodable {
            var t: Double
            var lat: Double
            var lon: Double
            var s: Double
            var speed: Double
        }
        var summary: Summary
        var samples: [Sample]
    }

    struct Measured {
        var fixes: Int
        var within30: Int
        var maxBackward: Double
        var startError: Double
        var finishError: Double
        var netError: Double
        var gunError: Double
        var offCourse: Int
        var report: ReplayReport
        var share: Double { Double(within30) / Double(fixes) }
    }

    /// The course is the truth's path (consecutive equal points dropped), the gun the truth's
    /// start. Truth progress is in the course's own metres (the cumulative distance of the
    /// truth point at that epoch): the chords between 1 Hz points are 0.2-0.5 % shorter than
    /// the route's `s` on bends. Truth start: when `s` leaves 0; finish: when it reaches the end
    /// (both at the speed of the epoch around them: the runner sets off and stops at once).
    static func measure(_ route: String) throws -> Measured {
        let data = try Data(contentsOf: URL(fileURLWithPath: SharedData.path("sim/\(route).truth.json")))
        let truth = try JSONDecoder().decode(Truth.self, from: data)
        var points: [Coordinate] = [], pointOf: [Int] = []
        for sample in truth.samples {
            let c = Coordinate(latitude: sample.lat, longitude: sample.lon)
            if points.last != c { points.append(c) }
            pointOf.append(points.count - 1)
        }
        let course = try RaceCourse(points: points)
        let t0 = Timestamp(iso8601: truth.summary.start)!
        let samples = truth.samples
        let set = samples.firstIndex { $0.s > 0 }!
        let truthStart = samples[set].t - samples[set].s / samples[set].speed
        let end = samples.lastIndex { $0.s < samples[samples.count - 1].s }!
        let truthFinish = samples[end].t + (samples[samples.count - 1].s - samples[end].s) / samples[end].speed

        let inputs = try ReplayLoader.load(gpsPath: SharedData.path("sim/\(route).gpsd.jsonl"), heartRatePath: nil)
        let race = RaceProgressTracker(course: course, configuration: RaceConfiguration(gunTime: t0))
        let report = Replay.run(inputs, configuration: TrackerConfiguration(), coach: Coach(), race: race)
        let progress = Dictionary(report.race!.progress.map { ($0.time, $0.meters) }, uniquingKeysWith: { a, _ in a })
        var within = 0
        for sample in report.samples {
            let i = Int(sample.time.seconds(since: t0).rounded())
            guard samples.indices.contains(i), let p = progress[sample.time] else { continue }
            if abs(p - course.cumulativeDistance[pointOf[i]]) <= 30 { within += 1 }
        }
        let placed = report.race!.progress.map(\.meters)
        let backward = zip(placed, placed.dropFirst()).map { $0 - $1 }.max() ?? 0
        let result = report.race?.result
        let start = result.map { $0.startTime.seconds(since: t0) } ?? .infinity
        let finish = result.map { $0.finishTime.seconds(since: t0) } ?? .infinity
        return Measured(
            fixes: report.samples.count, within30: within, maxBackward: backward,
            startError: start - truthStart, finishError: finish - truthFinish,
            netError: (finish - start) - (truthFinish - truthStart), gunError: (result?.gunSeconds ?? .infinity) - truthFinish,
            offCourse: report.race!.offCourseCount, report: report)
    }

    @Test(arguments: ["hairpins-1", "track-intervals-1", "city-10k-1", "trail-5k-1", "marathon-1"])
    func progressAndResultMeetTheTargets(_ route: String) throws {
        let m = try Self.measure(route)
        #expect(m.share >= 0.95, "\(route): \(m.within30) of \(m.fixes) fixes within 30 m")
        #expect(m.maxBackward <= 100, "\(route): progress stepped back \(m.maxBackward) m")
        #expect(abs(m.netError) <= 1, "\(route): net time off by \(m.netError) s (start \(m.startError), finish \(m.finishError))")
        #expect(abs(m.gunError) <= 1, "\(route): gun time off by \(m.gunError) s")
        // The runner stays on the course: never told otherwise.
        #expect(m.offCourse == 0, "\(route)")
        // What they hear: the cue points and the result, through the coach's vocabulary.
        let kinds = m.report.cues.map(\.kind)
        #expect(kinds.filter { $0 == .raceFinish }.count == 1, "\(route)")
        #expect(kinds.contains(.raceToGo), "\(route)")
    }

    /// The race's part of `pacerctl replay --course --json`.
    @Test func jsonReportCarriesTheRace() throws {
        let m = try Self.measure("hairpins-1")
        let json = try JSONSerialization.jsonObject(with: Data(m.report.json().utf8)) as! [String: Any]
        let race = json["race"] as! [String: Any]
        #expect(race["gun_time"] as? String == "2026-05-10T07:30:00.000Z")
        #expect((race["net_s"] as? Double).map { $0 > 800 } == true)
        #expect((race["progress"] as? [Any])?.count == m.report.race!.progress.count)
        let events = (race["events"] as! [[String: Any]]).map { $0["kind"] as! String }
        #expect(events.first == "started" && events.last == "finished")
        #expect(m.report.text().contains("Net time      "))
    }
}

/// COURSE.json for `pacerctl replay --course`.
@Suite(.timeLimit(.minutes(10))) struct RaceCourseFileTests {
    func parse(_ text: String) throws(ReplayError) -> RaceCourseFile {
        try RaceCourseFile.parse(Array(text.utf8), path: "c.json")
    }

    @Test func readsPointsStagesAndStartTime() throws {
        let file = try parse(#"{"points": [[45.4779, 9.2241], [45.4789, 9.2241], [45.4799, 9.2241]], "stages": [1], "start_time": "2026-05-10T07:30:00Z"}"#)
        #expect(file.course.pointCount == 3 && file.course.stages == [1])
        #expect(abs(file.course.length - 222.3) < 0.5)
        #expect(file.startTime == Timestamp(iso8601: "2026-05-10T07:30:00.000Z"))
        #expect(try parse(#"{"points": [[45.4779, 9.2241], [45.4789, 9.2241]]}"#).startTime == nil)
    }

    @Test func refusalsSayWhy() {
        func message(_ text: String) -> String {
            do {
                _ = try parse(text)
                return "accepted"
            } catch {
                #expect(error.exitStatus == 65)
                return error.message
            }
        }
        #expect(message("[1, 2]").hasPrefix("c.json: not a course (expected {\"points\""))
        #expect(message(#"{"points": [[45.4779, 9.2241, 3]]}"#) == "c.json: point 0 has 3 numbers, expected [latitude, longitude]")
        #expect(message(#"{"points": [[45.4779, 9.2241]]}"#) == "c.json: a course needs at least 2 points (a start and an arrival), this one has 1")
        #expect(message(#"{"points": [[45.0, 9.0], [45.5, 9.0]]}"#) == "c.json: a course is at most 50 km long, this one is 55.57 km")
        #expect(message(#"{"points": [[45.0, 9.0], [45.001, 9.0]], "start_time": "7:30"}"#)
            == "c.json: start_time \"7:30\" is not ISO-8601 UTC (like 2026-05-10T07:30:00Z)")
    }
}
