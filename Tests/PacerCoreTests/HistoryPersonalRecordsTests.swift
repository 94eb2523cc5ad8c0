import Testing
@testable import PacerCore

/// A run at piecewise-constant speeds, sampled every `period` seconds: exact cumulative distance and
/// moving time at every sample (a stop is a leg at speed 0).
private func samples(
    _ legs: [(seconds: Double, speed: Double)], period: Double = 1,
    start: Timestamp = Timestamp(iso8601: "2026-05-10T07:30:00Z")!
) -> [EffortSample] {
    let total = legs.reduce(0) { $0 + $1.seconds }
    var result: [EffortSample] = []
    var k = 0
    while Double(k) * period <= total + 1e-9 {
        let t = Double(k) * period
        var distance = 0.0, moving = 0.0, legStart = 0.0
        for leg in legs {
            let inLeg = min(max(t - legStart, 0), leg.seconds)
            distance += inLeg * leg.speed
            if leg.speed > 0 { moving += inLeg }
            legStart += leg.seconds
        }
        result.append(EffortSample(time: start.adding(seconds: t), distance: distance, movingTime: moving))
        k += 1
    }
    return result
}

private let origin = Timestamp(iso8601: "2026-05-10T07:30:00Z")!

@Suite(.timeLimit(.minutes(10))) struct HistoryPersonalRecordsTests {
    @Test func findsTheFastKilometreBetweenSplitMarks() throws {
        // Slow 600 m (240 s), fast 1200 m at 5 m/s (240 s), slow 1200 m (480 s). The 1 km split marks
        // are at 1000 and 2000 m, so no split is all fast: the best split takes 240 s (1000 → 2000:
        // 160 s fast + 80 s slow). The best kilometre anywhere is 200 s, inside the fast stretch.
        let run = samples([(240, 2.5), (240, 5), (480, 2.5)])
        let best = try #require(PersonalRecords.bestEffort(in: run, for: .oneKilometre))
        #expect(abs(best.duration - 200) < 1e-9)
        #expect(best.start >= origin.adding(seconds: 240))
        #expect(best.end <= origin.adding(seconds: 480))
        #expect(abs(best.end.seconds(since: best.start) - 200) <= 0.001)
        #expect(abs(best.pacePerKm - 200) < 1e-9)
    }

    @Test func interpolatesExactlyOnConstantSpeed() throws {
        // 3.7 m/s sampled every 0.7 s: neither end of any target lands on a sample.
        let speed = 3.7
        let run = samples([(12_000, speed)], period: 0.7)
        let efforts = PersonalRecords.bestEfforts(in: run, for: [.oneKilometre, .fiveKilometres, .tenKilometres,
                                                                 RecordDistance(meters: 1609.344)])
        for effort in efforts {
            let e = try #require(effort)
            let expected = e.distance.meters / speed
            #expect(abs(e.duration - expected) < 1e-6, "\(e.distance)")
            #expect(abs(e.movingTime - expected) < 1e-6, "\(e.distance)")
            #expect(abs(e.end.seconds(since: e.start) - expected) <= 0.001, "\(e.distance)")
        }
    }

    @Test func aRunOfExactlyTheDistanceIsItsOwnBest() throws {
        let run = samples([(250, 4)])  // 1000 m exactly
        let best = try #require(PersonalRecords.bestEffort(in: run, for: .oneKilometre))
        #expect(best.duration == 250)
        #expect(best.start == origin)
        #expect(best.end == origin.adding(seconds: 250))
    }

    @Test func shorterRunsGiveNil() {
        let run = samples([(1249, 4)])  // 4996 m
        let efforts = PersonalRecords.bestEfforts(in: run)
        #expect(efforts.count == RecordDistance.standard.count)
        #expect(efforts[0] != nil)
        #expect(efforts[1...].allSatisfy { $0 == nil })
        #expect(PersonalRecords.bestEfforts(in: []).allSatisfy { $0 == nil })
        #expect(PersonalRecords.bestEfforts(in: Array(run.prefix(1))).allSatisfy { $0 == nil })
        for meters in [0, -1000, Double.nan, .infinity] {
            #expect(PersonalRecords.bestEffort(in: run, for: RecordDistance(meters: meters)) == nil)
        }
    }

    @Test func aStopInsideTheStretchCountsAsElapsedTime() throws {
        // 500 m, a 60 s stop, 500 m: the only kilometre includes the stop. A record is what a
        // stopwatch shows, so 310 s, of which 250 s moving.
        let run = samples([(125, 4), (60, 0), (125, 4)])
        let best = try #require(PersonalRecords.bestEffort(in: run, for: .oneKilometre))
        #expect(abs(best.duration - 310) < 1e-9)
        #expect(abs(best.movingTime - 250) < 1e-9)
    }

    @Test func stopsAtEitherEndAreNotChargedToTheStretch() throws {
        // Standing 30 s before starting, then 1000 m at 4 m/s, then a 100 s stop, then 100 m:
        // the best kilometre starts when the runner left and ends when they arrived.
        let run = samples([(30, 0), (250, 4), (100, 0), (25, 4)])
        let best = try #require(PersonalRecords.bestEffort(in: run, for: .oneKilometre))
        #expect(best.duration == 250)
        #expect(best.start == origin.adding(seconds: 30))
        #expect(best.end == origin.adding(seconds: 280))
    }

    @Test func matchesADenseBruteForceOnARandomRun() throws {
        // Random speeds (including stops) every second; compare with the best of every start
        // distance on a 0.25 m grid, where the time at a distance is the last instant there for a
        // start and the first for an end. The sweep must never be beaten and must be within the
        // grid's resolution of it.
        var random = SeededRandom(seed: 42)
        var legs: [(seconds: Double, speed: Double)] = []
        for _ in 0..<120 {
            let stop = random.uniform() < 0.1
            legs.append((Double(1 + Int(random.uniform() * 20)), stop ? 0 : 2 + random.uniform() * 3.5))
        }
        let run = samples(legs)
        let target = 1_000.0
        let best = try #require(PersonalRecords.bestEffort(in: run, for: RecordDistance(meters: target)))

        func time(at x: Double, latest: Bool) -> Double? {
            // Linear scan is fine at this size.
            for k in 0..<(run.count - 1) where run[k].distance <= x && x <= run[k + 1].distance {
                let (a, b) = (run[k], run[k + 1])
                if a.distance == b.distance {
                    if !latest { return a.time.seconds(since: origin) }
                    continue
                }
                if latest && x == b.distance { continue }
                let f = (x - a.distance) / (b.distance - a.distance)
                return a.time.seconds(since: origin) + f * b.time.seconds(since: a.time)
            }
            return latest && x == run.last!.distance ? run.last!.time.seconds(since: origin) : nil
        }
        var gridBest = Double.infinity
        var x = 0.0
        while x + target <= run.last!.distance {
            if let s = time(at: x, latest: true), let e = time(at: x + target, latest: false) {
                gridBest = min(gridBest, e - s)
            }
            x += 0.25
        }
        #expect(best.duration <= gridBest + 1e-9)
        // The grid is within 0.125 m of the best start, and elapsed time changes by at most
        // 1/2 − 1/5.5 s per metre of start between stops: 0.04 s, with margin.
        #expect(gridBest - best.duration < 0.1)
    }

    @Test func distanceThatGoesBackwardsIsReadAsItsRunningMaximum() throws {
        var run = samples([(500, 4)])
        run[100].distance -= 50  // a corrupt row: read as 396 m, the maximum so far
        run[200].distance = .nan  // skipped
        let best = try #require(PersonalRecords.bestEffort(in: run, for: .oneKilometre))
        // Read as a 1 s stop at 396 m and 8 m in the next second, which the sweep may use: one
        // second better than the truth at worst, never a nonsense duration.
        #expect(best.duration >= 249 && best.duration <= 250)
        #expect(abs(best.end.seconds(since: best.start) - best.duration) <= 0.001)
    }

    @Test func foldingKeepsTheBestAndItsRun() {
        func effort(_ d: RecordDistance, _ seconds: Double, at offset: Double) -> BestEffort {
            BestEffort(distance: d, duration: seconds, start: origin.adding(seconds: offset),
                       end: origin.adding(seconds: offset + seconds), movingTime: seconds)
        }
        var records = PersonalRecords()
        #expect(records.add(runID: 7, efforts: [effort(.oneKilometre, 240, at: 0), effort(.fiveKilometres, 1300, at: 0), nil])
                == [.oneKilometre, .fiveKilometres])
        #expect(records.add(runID: 9, efforts: [effort(.oneKilometre, 230, at: 86_400), nil]) == [.oneKilometre])
        #expect(records.add(runID: 11, efforts: [effort(.oneKilometre, 235, at: 2 * 86_400),
                                                 effort(.fiveKilometres, 1290, at: 2 * 86_400)]) == [.fiveKilometres])
        // A tie goes to the earlier effort, whichever is folded first.
        #expect(records.add(runID: 3, efforts: [effort(.oneKilometre, 230, at: 3 * 86_400)]) == [])

        #expect(records[.oneKilometre]?.runID == 9)
        #expect(records[.oneKilometre]?.effort.duration == 230)
        #expect(records[.fiveKilometres]?.runID == 11)
        #expect(records[RecordDistance(meters: 5000)]?.runID == 11)  // identity is the distance
        #expect(records[.marathon] == nil)
        #expect(records.sorted.map(\.runID) == [9, 11])

        let all = [
            PersonalRecord(runID: 7, effort: effort(.oneKilometre, 240, at: 0)),
            PersonalRecord(runID: 9, effort: effort(.oneKilometre, 230, at: 86_400)),
            PersonalRecord(runID: 3, effort: effort(.oneKilometre, 230, at: 3 * 86_400)),
            PersonalRecord(runID: 5, effort: effort(.oneKilometre, 230, at: 86_400)),
        ]
        let forward = PersonalRecords(all)
        #expect(forward == PersonalRecords(all.reversed()))
        #expect(forward[.oneKilometre]?.runID == 5)  // same time, same start: lower id
    }

    @Test func bestEffortsFeedTheFold() {
        let slow = samples([(1500, 3.5)])  // 5250 m
        let fast = samples([(300, 4.2)])   // 1260 m
        var records = PersonalRecords()
        records.add(runID: 1, efforts: PersonalRecords.bestEfforts(in: slow))
        let improved = records.add(runID: 2, efforts: PersonalRecords.bestEfforts(in: fast))
        #expect(improved == [.oneKilometre])
        #expect(records[.oneKilometre]?.runID == 2)
        #expect(records[.fiveKilometres]?.runID == 1)
        #expect(records[.tenKilometres] == nil)
    }

    @Test func standardDistancesAndNames() {
        #expect(RecordDistance.standard.map(\.meters) == [1_000, 5_000, 10_000, 21_097.5, 42_195])
        #expect(RecordDistance(meters: 21_097.5).name == "Half marathon")
        #expect(RecordDistance(meters: 3_000).name == "3 km")
        #expect(RecordDistance(meters: 400).name == "400 m")
        #expect(RecordDistance(meters: 1609.344).name == "1609.344 m")
        #expect(RecordDistance(meters: 1609.344, name: "Mile") == RecordDistance(meters: 1609.344))
    }

    @Test func effortSampleFromTrackSample() {
        let t = TrackSample(time: origin, coordinate: Coordinate(latitude: 45, longitude: 9), speed: 3,
                            distance: 12, moving: true, movingTime: 4)
        #expect(EffortSample(t) == EffortSample(time: origin, distance: 12, movingTime: 4))
    }
}

