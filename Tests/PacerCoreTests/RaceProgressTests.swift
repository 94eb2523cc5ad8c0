import Testing
@testable import PacerCore

/// Synthetic courses in metres east/north of a point in Milan, and a runner along them.
struct RaceScenario {
    static let origin = Coordinate(latitude: 45.4779, longitude: 9.2241)
    static let t0 = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!

    /// The course's corners, metres east/north of `origin`.
    var corners: [(east: Double, north: Double)]

    var course: RaceCourse { try! RaceCourse(points: corners.map { WGS84.offsetting(Self.origin, east: $0.east, north: $0.north) }) }

    var length: Double {
        zip(corners, corners.dropFirst()).reduce(0) { $0 + hypot($1.1.east - $1.0.east, $1.1.north - $1.0.north) }
    }

    /// The point `s` metres along the corners (extended straight before the first and after the last).
    func point(at s: Double) -> (east: Double, north: Double) {
        var remaining = s
        for i in 0..<(corners.count - 1) {
            let a = corners[i], b = corners[i + 1]
            let len = hypot(b.east - a.east, b.north - a.north)
            if remaining <= len || i == corners.count - 2 || (i == 0 && remaining < 0) {
                let u = remaining / len
                return (a.east + u * (b.east - a.east), a.north + u * (b.north - a.north))
            }
            remaining -= len
        }
        fatalError()
    }

    func coordinate(at s: Double, east: Double = 0, north: Double = 0) -> Coordinate {
        let p = point(at: s)
        return WGS84.offsetting(Self.origin, east: p.east + east, north: p.north + north)
    }
}

private func hypot(_ x: Double, _ y: Double) -> Double { (x * x + y * y).squareRoot() }

/// A runner's truth: where along the course (s) and how fast at each second.
struct RaceRun {
    struct Epoch {
        var time: Timestamp
        var s: Double
        var speed: Double
    }

    var epochs: [Epoch] = []

    /// Stands at `s0` until `setOff` (seconds from t0), runs at `speed` to `stopAt` metres along,
    /// then stands until `end`; one epoch per `period` from `from`.
    static func simple(from: Double = 0, standAt s0: Double = 0, setOff: Double, speed: Double, stopAt: Double, end: Double,
                       period: Double = 1) -> RaceRun {
        var run = RaceRun()
        var t = from
        while t <= end + 1e-9 {
            let s = min(stopAt, s0 + max(0, t - setOff) * speed)
            let moving = t > setOff && s < stopAt
            run.epochs.append(Epoch(time: RaceScenario.t0.adding(seconds: t), s: s, speed: moving ? speed : 0))
            t += period
        }
        return run
    }
}

/// Feeds positions (with optional noise) and collects the events.
struct RaceFeed {
    var tracker: RaceProgressTracker
    var events: [RaceEvent] = []
    var placed: [(truth: Double, progress: Double)] = []

    init(_ scenario: RaceScenario, gun: Double? = 0, configure: (inout RaceConfiguration) -> Void = { _ in }) {
        var configuration = RaceConfiguration(gunTime: gun.map { RaceScenario.t0.adding(seconds: $0) })
        configure(&configuration)
        tracker = RaceProgressTracker(course: scenario.course, configuration: configuration)
    }

    mutating func feed(_ coordinate: Coordinate, speed: Double?, odometer: Double? = nil, at time: Timestamp, truth: Double) {
        let out = tracker.handle(.position(RacePosition(coordinate: coordinate, speed: speed, odometer: odometer)), now: time)
        events += out
        for case .progress(let p) in out { placed.append((truth, p.meters)) }
    }

    /// The whole run; `bias` shifts every position (east, north), `jitter` adds noise per epoch.
    mutating func run(_ run: RaceRun, on scenario: RaceScenario, bias: (Double, Double) = (0, 0), jitter: Double = 0,
                      seed: UInt64 = 1, skip: (Double) -> Bool = { _ in false }, odometerScale: Double? = nil) {
        var random = SeededRandom(seed: seed)
        var odometer = 0.0
        var previous: Double?
        for e in run.epochs {
            if let p = previous { odometer += abs(e.s - p) }
            previous = e.s
            let t = e.time.seconds(since: RaceScenario.t0)
            if skip(t) { continue }
            let c = scenario.coordinate(at: e.s, east: bias.0 + jitter * random.gaussian(), north: bias.1 + jitter * random.gaussian())
            feed(c, speed: e.speed, odometer: odometerScale.map { odometer * $0 }, at: e.time, truth: e.s)
        }
    }

    var started: Timestamp? { events.lazy.compactMap { if case .started(let t) = $0 { t } else { nil } }.first }
    var result: RaceResult? { events.lazy.compactMap { if case .finished(let r) = $0 { r } else { nil } }.first }
    var maxError: Double { placed.map { abs($0.progress - $0.truth) }.max() ?? .infinity }
    /// The largest step backwards between two placed positions.
    var maxBackward: Double { zip(placed, placed.dropFirst()).map { $0.progress - $1.progress }.max() ?? 0 }
}

private func seconds(_ t: Timestamp?) -> Double { t?.seconds(since: RaceScenario.t0) ?? .infinity }

@Suite(.timeLimit(.minutes(10))) struct RaceCourseTests {
    @Test func cumulativeDistanceAndStages() throws {
        let scenario = RaceScenario(corners: [(0, 0), (0, 1000), (500, 1000)])
        let course = try RaceCourse(points: scenario.corners.map { WGS84.offsetting(RaceScenario.origin, east: $0.east, north: $0.north) },
                                    stages: [1])
        #expect(abs(course.length - 1500) < 0.1)
        #expect(abs(course.cumulativeDistance[1] - 1000) < 0.01)
        #expect(abs(course.stageDistances[0] - 1000) < 0.01)
    }

    @Test func refusalsNameTheLimit() {
        let a = RaceScenario.origin
        #expect(throws: RaceCourseError.tooFewPoints(1)) { try RaceCourse(points: [a]) }
        #expect(RaceCourseError.tooFewPoints(1).description.contains("at least 2 points"))
        let far = WGS84.offsetting(a, east: 0, north: 50_100)
        #expect(throws: RaceCourseError.self) { try RaceCourse(points: [a, far]) }
        do {
            _ = try RaceCourse(points: [a, far])
        } catch {
            #expect(error.description == "a course is at most 50 km long, this one is 50.10 km")
        }
        #expect((try? RaceCourse(points: [a, WGS84.offsetting(a, east: 0, north: 49_990)])) != nil)
        let many = (0...RaceCourse.maxPoints).map { WGS84.offsetting(a, east: 0, north: Double($0)) }
        #expect(throws: RaceCourseError.tooManyPoints(20_001, limit: 20_000)) { try RaceCourse(points: many) }
        #expect(RaceCourseError.tooManyPoints(20_001, limit: 20_000).description == "a course has at most 20000 points, this one has 20001")
        let line = (0..<20).map { WGS84.offsetting(a, east: 0, north: Double($0) * 100) }
        #expect(throws: RaceCourseError.tooManyStages(11, limit: 10)) { try RaceCourse(points: line, stages: Array(1...11)) }
        #expect(RaceCourseError.tooManyStages(11, limit: 10).description.contains("at most 10 stages"))
        #expect(throws: RaceCourseError.invalidStage(index: 19)) { try RaceCourse(points: line, stages: [19]) }
        #expect(throws: RaceCourseError.invalidStage(index: 3)) { try RaceCourse(points: line, stages: [5, 3]) }
        #expect(throws: RaceCourseError.zeroLength) { try RaceCourse(points: [a, a]) }
        #expect(throws: RaceCourseError.invalidPoint(index: 1)) { try RaceCourse(latitudes: [45, 91], longitudes: [9, 9]) }
        #expect(throws: RaceCourseError.mismatchedArrays(latitudes: 2, longitudes: 1)) { try RaceCourse(latitudes: [45, 45.1], longitudes: [9]) }
    }

    @Test func cuePointsForUsualDistances() {
        #expect(RaceCuePoints.marks(courseLength: 42_195, units: .metric)
            == [40_000, 35_000, 30_000, 25_000, 20_000, 15_000, 10_000, 5000, 4000, 3000, 2000, 1000, 500])
        #expect(RaceCuePoints.marks(courseLength: 10_000, units: .metric) == [5000, 4000, 3000, 2000, 1000, 500])
        #expect(RaceCuePoints.marks(courseLength: 5000, units: .metric) == [4000, 3000, 2000, 1000, 500])
        let mile = 1609.344
        #expect(RaceCuePoints.marks(courseLength: 42_195, units: .imperial)
            == [25, 20, 15, 10, 5, 4, 3, 2, 1, 0.5].map { $0 * mile })
        #expect(RaceCuePoints.marks(courseLength: 400, units: .metric).isEmpty)
    }
}

@Suite(.timeLimit(.minutes(10))) struct RaceProgressTests {
    static let straight = RaceScenario(corners: [(0, 0), (0, 2000)])

    /// Exact positions: the crossings are interpolated exactly, setting off between two fixes
    /// and running through the arrival.
    @Test func straightLineCrossingsAreExact() {
        var feed = RaceFeed(Self.straight, gun: 5)
        feed.run(.simple(setOff: 10.3, speed: 4, stopAt: 2040, end: 540), on: Self.straight)
        #expect(abs(seconds(feed.started) - 10.3) < 0.002)
        guard let result = feed.result else { Issue.record("no result"); return }
        #expect(abs(seconds(result.finishTime) - 510.3) < 0.002)
        #expect(abs(result.netSeconds - 500) < 0.002)
        #expect(abs(result.gunSeconds! - 505.3) < 0.002)
        #expect(feed.maxError < 0.01)
        // The cue points, once each, at the moment they were passed.
        let toGo = feed.events.compactMap { if case .toGo(let m, let t) = $0 { (m, seconds(t)) } else { nil } }
        #expect(toGo.map(\.0) == [1000, 500])
        #expect(abs(toGo[0].1 - 260.3) < 0.002 && abs(toGo[1].1 - 385.3) < 0.002)
        // Nothing after the result.
        if case .finished = feed.events.last {} else { Issue.record("last event \(String(describing: feed.events.last))") }
    }

    /// GPS puts a runner standing on a line a few metres off it; setting off from there and
    /// stopping there are the crossings, whichever side the bias is on.
    @Test(arguments: [-12.0, -5, -2, 0, 2, 5, 12])
    func standingAtTheLinesThroughTheBias(_ bias: Double) {
        var feed = RaceFeed(Self.straight, gun: 0)
        feed.run(.simple(setOff: 20.4, speed: 3.5, stopAt: 2000, end: 640), on: Self.straight, bias: (0, bias))
        #expect(abs(seconds(feed.started) - 20.4) < 0.01, "bias \(bias)")
        let finish = 20.4 + 2000 / 3.5
        #expect(abs(seconds(feed.result?.finishTime) - finish) < 0.01, "bias \(bias)")
        #expect(abs((feed.result?.netSeconds ?? 0) - 2000 / 3.5) < 0.02)
    }

    /// Milling about the line before the gun: across it and back, then standing within the
    /// tolerance; the start is setting off after the gun.
    @Test func millingBeforeTheGun() {
        var run = RaceRun()
        // Walk from 30 m behind to 20 m past at 1 m/s, back to 8 m behind, stand, set off at 130.5 s.
        var s = -30.0, t = 0.0
        func add(_ speed: Double) { run.epochs.append(.init(time: RaceScenario.t0.adding(seconds: t), s: s, speed: speed)); t += 1 }
        while s < 20 { add(1); s += 1 }
        while s > -8 { add(1); s -= 1 }
        while t < 130 { add(0) }
        add(0)  // t = 130: standing
        s = -8 + 0.5 * 4
        while s < 2100 { add(4); s += 4 }
        var feed = RaceFeed(Self.straight, gun: 120)
        feed.run(run, on: Self.straight)
        #expect(abs(seconds(feed.started) - 130.5) < 0.01)
        #expect(feed.result != nil)
    }

    /// Standing well behind the line (a mass start): the crossing of the line is the start.
    @Test func massStartCrossesTheLineLater() {
        var feed = RaceFeed(Self.straight, gun: 60)
        feed.run(.simple(standAt: -40, setOff: 62, speed: 2, stopAt: 2100, end: 1200), on: Self.straight)
        #expect(abs(seconds(feed.started) - 82) < 0.01)
    }

    /// Off before the gun (standing at the line): the start is the gun.
    @Test func noStartBeforeTheGun() {
        var feed = RaceFeed(Self.straight, gun: 30)
        feed.run(.simple(setOff: 28, speed: 4, stopAt: 2100, end: 600), on: Self.straight)
        #expect(seconds(feed.started) == 30)
        #expect(feed.result != nil && feed.result?.gunSeconds == feed.result?.netSeconds)
    }

    /// Without a gun the runner's own "start" stands in for it.
    @Test func runnerStartedIsTheGunWithoutOne() {
        var tracker = RaceProgressTracker(course: Self.straight.course)
        #expect(tracker.handle(.runnerStarted, now: RaceScenario.t0.adding(seconds: 3)).isEmpty)
        #expect(tracker.gunTime == RaceScenario.t0.adding(seconds: 3))
        var withGun = RaceProgressTracker(course: Self.straight.course, configuration: RaceConfiguration(gunTime: RaceScenario.t0))
        _ = withGun.handle(.runnerStarted, now: RaceScenario.t0.adding(seconds: 3))
        #expect(withGun.gunTime == RaceScenario.t0)
    }

    /// Go 1 km up a street and back down it: the two legs are the same line, the arrival is the
    /// start. Noisy positions never jump to the other leg, through the turn and at the end.
    @Test(arguments: [UInt64(1), 2, 3])
    func outAndBackOnTheSameStreet(_ seed: UInt64) {
        let scenario = RaceScenario(corners: [(0, 0), (0, 1000), (0, 0)])
        var feed = RaceFeed(scenario, gun: 0)
        feed.run(.simple(setOff: 10, speed: 3.8, stopAt: 2000, end: 560), on: scenario, bias: (2, -3), jitter: 2, seed: seed,
                 odometerScale: 1.02)
        #expect(feed.maxError < 12)
        #expect(feed.maxBackward < 12)
        #expect(abs(seconds(feed.started) - 10) < 1)
        #expect(abs(seconds(feed.result?.finishTime) - (10 + 2000 / 3.8)) < 1)
    }

    /// A fix on the other leg (the way back, on the other side of a 25 m wide road) while on the
    /// way out is placed on the way out, never 1.4 km further on.
    @Test func aFixOnTheOtherLegDoesNotJump() {
        let scenario = RaceScenario(corners: [(0, 0), (0, 1000), (25, 1000), (25, 0)])
        var feed = RaceFeed(scenario, gun: 0)
        let run = RaceRun.simple(setOff: 5, speed: 4, stopAt: 2025, end: 600)
        for e in run.epochs {
            let t = e.time.seconds(since: RaceScenario.t0)
            // At 300 m out, three fixes exactly where the way back passes (2025 - 300 = 1725 m).
            let s = (80...82).contains(t) ? 2025 - e.s : e.s
            feed.feed(scenario.coordinate(at: s), speed: e.speed, at: e.time, truth: e.s)
        }
        #expect(feed.maxError < 26)
        #expect(feed.maxBackward < 1)
        #expect(feed.result != nil)
    }

    /// Three laps of a 400 m loop (the arrival is the start line): noise, and outages of 30 s and
    /// of 150 s (longer than a lap: the runner's odometer tells which lap).
    @Test(arguments: [30.0, 150])
    func threeLapsWithAnOutage(_ outage: Double) {
        let lap: [(east: Double, north: Double)] = [(0, 0), (100, 0), (100, 100), (0, 100)]
        let scenario = RaceScenario(corners: Array(repeating: lap, count: 3).flatMap { $0 } + [(0, 0)])
        #expect(abs(scenario.length - 1200) < 1e-9)
        var feed = RaceFeed(scenario, gun: 0)
        feed.run(.simple(setOff: 5, speed: 4, stopAt: 1200, end: 330), on: scenario, bias: (-2, 1), jitter: 1.5, seed: 7,
                 skip: { $0 > 100 && $0 < 100 + outage }, odometerScale: 0.98)
        #expect(feed.maxError < 10)
        #expect(feed.maxBackward < 10)
        #expect(abs(seconds(feed.result?.finishTime) - 305) < 1)
    }

    /// More than 50 m off the course for 15 s: one warning, at the fix 15 s after the first one
    /// that far off, not repeated; back on course once within 40 m. A 14 s detour says nothing.
    @Test func offCourseAfterFifteenSecondsOnly() {
        var feed = RaceFeed(Self.straight, gun: 0)
        let run = RaceRun.simple(setOff: 0, speed: 3, stopAt: 2000, end: 700)
        for e in run.epochs {
            let t = e.time.seconds(since: RaceScenario.t0)
            let away = (100..<130).contains(t) ? 80.0 : (200..<214).contains(t) ? 70 : 0
            feed.feed(Self.straight.coordinate(at: e.s, east: away), speed: e.speed, at: e.time, truth: e.s)
        }
        let warnings = feed.events.compactMap { event -> (String, Double)? in
            switch event {
            case .offCourse(let t, let m): ("off \(Int(m.rounded()))", seconds(t))
            case .backOnCourse(let t): ("back", seconds(t))
            default: nil
            }
        }
        #expect(warnings.map(\.0) == ["off 80", "back"])
        #expect(warnings.map(\.1) == [115, 130])
        // Progress resumes where the runner rejoined.
        #expect(feed.maxError < 1)
        #expect(feed.result != nil)
    }

    @Test func stagesAreCrossedInOrder() throws {
        let points = [(0.0, 0.0), (0, 500), (0, 1200), (0, 2000)].map { WGS84.offsetting(RaceScenario.origin, east: $0.0, north: $0.1) }
        var tracker = RaceProgressTracker(course: try RaceCourse(points: points, stages: [1, 2]),
                                          configuration: RaceConfiguration(gunTime: RaceScenario.t0))
        var stages: [(Int, Double)] = []
        for e in RaceRun.simple(setOff: 0, speed: 4, stopAt: 2100, end: 600).epochs {
            let c = Self.straight.coordinate(at: e.s)
            for case .stage(let index, let t) in tracker.handle(.position(RacePosition(coordinate: c, speed: e.speed)), now: e.time) {
                stages.append((index, seconds(t)))
            }
        }
        #expect(stages.map(\.0) == [1, 2])
        #expect(abs(stages[0].1 - 125) < 0.01 && abs(stages[1].1 - 300) < 0.01)
    }

    /// A warm-up far from the start is never placed along the course, and says nothing.
    @Test func warmUpAwayFromTheStartIsNotPlaced() {
        let scenario = RaceScenario(corners: [(0, 0), (0, 1000), (300, 1000), (300, 0)])
        var tracker = RaceProgressTracker(course: scenario.course, configuration: RaceConfiguration(gunTime: RaceScenario.t0))
        // Along the last leg (1900 m along the course) for ten minutes before the gun.
        for i in 0..<600 {
            let c = scenario.coordinate(at: 1900 + Double(i % 50))
            #expect(tracker.handle(.position(RacePosition(coordinate: c, speed: 3)), now: RaceScenario.t0.adding(seconds: Double(i - 700))).isEmpty)
        }
        #expect(tracker.progress == nil && tracker.startTime == nil)
    }

    @Test func poorFixesAreNotPlaced() {
        var tracker = RaceProgressTracker(course: Self.straight.course)
        let position = RacePosition(coordinate: Self.straight.coordinate(at: 0), speed: 0, accuracy: 150)
        #expect(tracker.handle(.position(position), now: RaceScenario.t0).isEmpty)
    }

    @Test func samplesAreFedWithTheirSpeedAndOdometer() {
        let sample = TrackSample(time: RaceScenario.t0, coordinate: RaceScenario.origin, speed: 3, distance: 120, moving: false, movingTime: 40)
        #expect(RaceInput.sample(sample) == .position(RacePosition(coordinate: RaceScenario.origin, speed: 0, odometer: 120)))
    }

    /// The cloud may keep one tracker per runner: a copy carries on independently.
    @Test func aCopyCarriesOnAlone() {
        var feed = RaceFeed(Self.straight, gun: 0)
        feed.run(.simple(setOff: 0, speed: 4, stopAt: 1000, end: 100), on: Self.straight)
        var copy = feed.tracker
        _ = copy.handle(.position(RacePosition(coordinate: Self.straight.coordinate(at: 404), speed: 4)), now: RaceScenario.t0.adding(seconds: 101))
        #expect(abs(copy.progress! - 404) < 0.01)
        #expect(abs(feed.tracker.progress! - 400) < 0.01)
    }
}
