import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct PauseAndTimebaseTests {
    /// 600 s at 4 m/s with a perfect receiver; paused from fix 200 to fix 300.
    @Test func aPausedRunCountsNeitherDistanceNorMovingTime() {
        let fixes = SyntheticRun(legs: [.init(seconds: 600, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0, seed: 3).build().fixes
        var unpaused = RunTracker()
        for fix in fixes { _ = unpaused.ingest(fix) }
        var tracker = RunTracker()
        var samplesWhilePaused: [TrackSample] = []
        for (i, fix) in fixes.enumerated() {
            if i == 200 { #expect(tracker.apply(.pause).isEmpty) }
            if i == 300 { #expect(tracker.apply(.resume).isEmpty) }
            for case .sample(let s) in tracker.ingest(fix) where (201..<300).contains(i) { samplesWhilePaused.append(s) }
        }
        // 100 s of running are not counted: about 400 m and 100 s fewer.
        #expect(abs((unpaused.distance - tracker.distance) - 400) < 8)
        #expect(abs((unpaused.movingTime - tracker.movingTime) - 100) < 2.01)
        #expect(samplesWhilePaused.count == 99)
        #expect(samplesWhilePaused.allSatisfy { !$0.moving && $0.speed == 0 })
        #expect(Set(samplesWhilePaused.map(\.distance)).count == 1)
        // The position kept being tracked: the last sample is where the runner really is.
        #expect(WGS84.distance(tracker.lastSample!.coordinate, unpaused.lastSample!.coordinate) < 1)
    }

    @Test func lapControlClosesALap() {
        let fixes = SyntheticRun(legs: [.init(seconds: 120, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0, seed: 4).build().fixes
        var tracker = RunTracker()
        for fix in fixes.prefix(60) { _ = tracker.ingest(fix) }
        let events = tracker.apply(.lap)
        guard case .lap(let lap)? = events.first else {
            Issue.record("no lap: \(events)")
            return
        }
        #expect(lap.index == 1)
        #expect(abs(lap.distance - tracker.distance) < 0.001)
    }

    @Test func timebaseCarriesGPSTimeOnTheMonotonicClock() {
        var timebase = Timebase()
        #expect(timebase.time(atMonotonic: 5_000_000_000) == nil)
        let gps = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!
        timebase.synchronize(gps: gps, monotonicNs: 10_000_000_000)
        #expect(timebase.time(atMonotonic: 10_000_000_000) == gps)
        #expect(timebase.time(atMonotonic: 12_345_678_901) == gps.adding(seconds: 2.345))
        // A later fix re-anchors; the system clock is never consulted.
        let later = Timestamp(iso8601: "2026-05-10T07:30:03.000Z")!
        timebase.synchronize(gps: later, monotonicNs: 13_100_000_000)
        #expect(timebase.time(atMonotonic: 13_600_000_000) == later.adding(seconds: 0.5))
    }
}
