import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct SplitAndTimelineTests {
    @Test func splitsEveryKilometreWithInterpolatedTimes() {
        // 4 m/s with a perfect receiver: a split every 250 s, and a final partial split.
        let run = SyntheticRun(legs: [.init(seconds: 1100, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0, seed: 1)
            .build()
        var tracker = RunTracker()
        let splits = tracker.run(run.fixes).splits
        #expect(splits.map(\.index) == [1, 2, 3, 4, 5])
        for split in splits.prefix(4) {
            #expect(split.distance == 1000)
            #expect(abs(split.time - 250) < 1.01)
            #expect(abs(split.pacePerKm! - 250) < 1.01)
        }
        #expect(abs(splits[4].distance - 400) < 5)
    }

    @Test func configurableSplitDistance() {
        var config = TrackerConfiguration()
        config.splitDistanceMeters = 1609.344
        let run = SyntheticRun(legs: [.init(seconds: 900, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0).build()
        var tracker = RunTracker(configuration: config)
        let splits = tracker.run(run.fixes).splits
        #expect(splits.count == 3)
        #expect(splits[0].distance == 1609.344)
    }

    @Test func lapsCloseAtTheButtonAndAtTheEnd() {
        let fixes = SyntheticRun(legs: [.init(seconds: 200, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0)
            .build().fixes
        var tracker = RunTracker()
        var laps: [Lap] = []
        for (i, f) in fixes.enumerated() {
            _ = tracker.ingest(f)
            if i == 100 { laps += tracker.markLap().compactMap { if case .lap(let l) = $0 { l } else { nil } } }
        }
        laps += tracker.finish().compactMap { if case .lap(let l) = $0 { l } else { nil } }
        #expect(laps.map(\.index) == [1, 2])
        #expect(abs(laps[0].distance - 400) < 3)
        #expect(abs(laps[1].distance - 400) < 3)
    }

    @Test func heartRateAfterTheLastFixExtendsTheTimeline() {
        var tracker = RunTracker()
        _ = tracker.ingest(fix("2026-05-10T07:30:00.000Z"))
        _ = tracker.ingest(fix("2026-05-10T07:30:01.000Z"))
        _ = tracker.ingest(HeartRateSample(time: Timestamp(iso8601: "2026-05-10T07:30:02Z")!, bpm: 120, contact: true))
        _ = tracker.ingest(HeartRateSample(time: Timestamp(iso8601: "2026-05-10T07:30:03Z")!, bpm: 0, contact: false))
        _ = tracker.ingest(HeartRateSample(time: Timestamp(iso8601: "2026-05-10T07:30:09Z")!, bpm: 130, contact: true))
        let summary = tracker.summary
        #expect(summary.elapsedTime == 9)
        #expect(summary.heartRateAverage == 125)
        #expect(summary.heartRateMax == 130)
    }

    @Test func gpsLossIsNoticedFromOtherInputsTime() {
        var tracker = RunTracker()
        _ = tracker.ingest(fix("2026-05-10T07:30:00.000Z"))
        let early = tracker.advance(to: Timestamp(iso8601: "2026-05-10T07:30:04Z")!)
        let late = tracker.ingest(HeartRateSample(time: Timestamp(iso8601: "2026-05-10T07:30:06Z")!, bpm: 100))
        let again = tracker.advance(to: Timestamp(iso8601: "2026-05-10T07:30:07Z")!)
        #expect(early.isEmpty)
        #expect(late == [.gpsLost(time: Timestamp(iso8601: "2026-05-10T07:30:06Z")!)])
        #expect(again.isEmpty)
    }
}

@Suite(.timeLimit(.minutes(10))) struct FinalSplitTests {
    @Test func aFewMetresAfterTheLastBoundaryAreNotASplit() {
        // 1003 m: one split, not a second one of 3 m with a meaningless pace.
        let run = SyntheticRun(legs: [.init(seconds: 250.75, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0)
            .build()
        var tracker = RunTracker()
        let splits = tracker.run(run.fixes).splits
        #expect(splits.count == 1)
    }
}
