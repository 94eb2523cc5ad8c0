import Testing
@testable import PacerCore

/// Distance, speed and moving time on synthetic runs with known truth.
@Suite(.timeLimit(.minutes(10))) struct TrackingAccuracyTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func steadyRunWithDoppler(seed: UInt64) {
        let run = SyntheticRun(legs: [.init(seconds: 600, speed: 3.2)], seed: seed).build()
        var tracker = RunTracker()
        let events = tracker.run(run.fixes)
        #expect(abs(tracker.summary.distance - run.trueDistance) / run.trueDistance < 0.005)
        // Smoothed speed: almost always within ±5 % once settled.
        let settled = events.samples.dropFirst(15)
        let within = settled.filter { abs($0.speed - 3.2) <= 0.16 }.count
        #expect(Double(within) / Double(settled.count) >= 0.97)
    }

    @Test func rawFixToFixSumWouldOverstate() {
        // The reason the filter exists: jitter makes the naive sum long.
        let run = SyntheticRun(legs: [.init(seconds: 600, speed: 3.0)], jitter: 0.8, seed: 4).build()
        var naive = 0.0
        for (a, b) in zip(run.fixes, run.fixes.dropFirst()) {
            naive += WGS84.distance(
                Coordinate(latitude: a.latitude!, longitude: a.longitude!),
                Coordinate(latitude: b.latitude!, longitude: b.longitude!))
        }
        var tracker = RunTracker()
        _ = tracker.run(run.fixes)
        #expect(naive > run.trueDistance * 1.02)
        #expect(abs(tracker.summary.distance - run.trueDistance) / run.trueDistance < 0.005)
    }

    @Test func withoutDopplerPositionsStillGiveTheDistance() {
        let run = SyntheticRun(legs: [.init(seconds: 900, speed: 3.0)], reportsDoppler: false, seed: 5).build()
        var tracker = RunTracker()
        _ = tracker.run(run.fixes)
        #expect(abs(tracker.summary.distance - run.trueDistance) / run.trueDistance < 0.02)
    }

    @Test(arguments: [true, false])
    func standingStillAccruesNothing(doppler: Bool) {
        // 10 minutes standing: jitter and bias wander, Doppler noise around zero.
        let run = SyntheticRun(legs: [.init(seconds: 600, speed: 0)], dopplerSigma: 0.05,
                               reportsDoppler: doppler, seed: 6).build()
        var tracker = RunTracker()
        let events = tracker.run(run.fixes)
        #expect(tracker.summary.distance <= 5)
        #expect(tracker.summary.movingTime <= 10)
        #expect(events.samples.allSatisfy { !$0.moving || $0.speed > 0 })
    }

    @Test func autoPauseKeepsMovingTime() {
        let run = SyntheticRun(legs: [
            .init(seconds: 120, speed: 3), .init(seconds: 45, speed: 0), .init(seconds: 120, speed: 3),
        ], seed: 8).build()
        var tracker = RunTracker()
        let events = tracker.run(run.fixes)
        #expect(abs(tracker.summary.movingTime - run.trueMovingTime) <= 3)
        #expect(abs(tracker.summary.elapsedTime - 285) < 1.01)
        let motion = events.compactMap { if case .motion(let m, _) = $0 { m } else { nil } }
        #expect(motion == [true, false, true])
        #expect(abs(tracker.summary.distance - run.trueDistance) / run.trueDistance < 0.01)
        #expect(events.samples.filter { !$0.moving }.allSatisfy { $0.speed == 0 })
    }

    @Test(arguments: [2.5, 2.0])
    func slowerSampling(period: Double) {
        let run = SyntheticRun(legs: [.init(seconds: 900, speed: 1.5)], period: period, seed: 9).build()
        var tracker = RunTracker()
        _ = tracker.run(run.fixes)
        #expect(abs(tracker.summary.distance - run.trueDistance) / run.trueDistance < 0.005)
    }

    @Test func irregularSampling() {
        let run = SyntheticRun(legs: [.init(seconds: 900, speed: 3.0)], seed: 10, irregular: true).build()
        var tracker = RunTracker()
        let events = tracker.run(run.fixes)
        #expect(tracker.counts.bridgedGaps == 0)
        #expect(abs(tracker.summary.distance - run.trueDistance) / run.trueDistance < 0.005)
        #expect(events.samples.count == run.fixes.count)
    }

    @Test func tunnelIsBridgedAndReported() {
        // 30 s without a fix at constant speed on a straight road.
        let run = SyntheticRun(legs: [.init(seconds: 300, speed: 3.0)], seed: 11, outage: 100..<130).build()
        var tracker = RunTracker()
        let events = tracker.run(run.fixes)
        #expect(tracker.counts.bridgedGaps == 1)
        #expect(abs(tracker.summary.distance - run.trueDistance) / run.trueDistance < 0.01)
        #expect(abs(tracker.summary.movingTime - 300) < 2)
        let lost = events.compactMap { if case .gpsLost(let t) = $0 { t } else { nil } }
        let regained = events.compactMap { if case .gpsRegained(_, let s) = $0 { s } else { nil } }
        #expect(lost.count == 1 && regained == [31])
    }

    @Test func multipathExcursionDoesNotAddDistanceOrDragThePosition() {
        // A 25 m excursion that rises and falls over 5 epochs, with Doppler unaffected.
        var fixes = SyntheticRun(legs: [.init(seconds: 200, speed: 3.0)], jitter: 0.3, seed: 12).build().fixes
        var clean = RunTracker()
        let cleanSamples = clean.run(fixes).samples
        for (k, offset) in [8.0, 18.0, 25.0, 15.0, 6.0].enumerated() {
            let i = 100 + k
            let moved = WGS84.offsetting(Coordinate(latitude: fixes[i].latitude!, longitude: fixes[i].longitude!),
                                         east: -offset * 0.8, north: offset * 0.6)
            fixes[i].latitude = moved.latitude
            fixes[i].longitude = moved.longitude
        }
        var tracker = RunTracker()
        let samples = tracker.run(fixes).samples
        #expect(abs(tracker.summary.distance - clean.summary.distance) < 0.5)
        let worst = zip(samples, cleanSamples).map { WGS84.distance($0.coordinate, $1.coordinate) }.max()!
        #expect(worst < 10)
    }

    @Test func multipathWithoutDopplerCostsLittleDistance() {
        var fixes = SyntheticRun(legs: [.init(seconds: 300, speed: 3.0)], jitter: 0.3, reportsDoppler: false, seed: 13)
            .build().fixes
        var clean = RunTracker()
        _ = clean.run(fixes)
        for (k, offset) in [10.0, 22.0, 30.0, 20.0, 8.0].enumerated() {
            let i = 150 + k
            let moved = WGS84.offsetting(Coordinate(latitude: fixes[i].latitude!, longitude: fixes[i].longitude!),
                                         east: offset, north: 0)
            fixes[i].latitude = moved.latitude
            fixes[i].longitude = moved.longitude
        }
        var tracker = RunTracker()
        _ = tracker.run(fixes)
        // A raw sum would add ~2 × 30 m; the filter keeps it to a few metres.
        #expect(abs(tracker.summary.distance - clean.summary.distance) < 10)
    }

    @Test func firstFixAfterAnOutageWithHugeEphIsHarmless() {
        var fixes = SyntheticRun(legs: [.init(seconds: 200, speed: 3.0)], seed: 14, outage: 80..<95).build().fixes
        let firstAfter = fixes.firstIndex { $0.time!.seconds(since: fixes[0].time!) >= 95 }!
        fixes[firstAfter].eph = 1900
        var tracker = RunTracker()
        _ = tracker.run(fixes)
        #expect(abs(tracker.summary.distance - 600) < 6)
    }

    @Test func outputIsCausal() {
        // Feeding a prefix yields exactly the samples the full run had at that point.
        let fixes = SyntheticRun(legs: [.init(seconds: 60, speed: 3), .init(seconds: 60, speed: 4.5)], seed: 15)
            .build().fixes
        var full = RunTracker()
        let all = full.run(fixes).samples
        var partial = RunTracker()
        var prefix: [TrackSample] = []
        for f in fixes.prefix(70) { prefix += partial.ingest(f).samples }
        #expect(Array(all.prefix(70)) == prefix)
    }
}
