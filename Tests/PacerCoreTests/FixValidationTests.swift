import Testing
@testable import PacerCore

/// How the tracker treats fixes it must not use, and time it must not trust.
@Suite(.timeLimit(.minutes(10))) struct FixValidationTests {
    @Test func duplicatesOfAnEpochAreSkippedAndCounted() {
        var tracker = RunTracker()
        let events = tracker.run([
            fix("2026-05-10T07:30:00.000Z"), fix("2026-05-10T07:30:00.000Z"), fix("2026-05-10T07:30:01.000Z"),
            fix("2026-05-10T07:30:01.000Z"),
        ])
        #expect(events.samples.count == 2)
        #expect(tracker.counts.count(.duplicate) == 2)
    }

    @Test func outOfOrderFixesAreRejected() {
        var tracker = RunTracker()
        let events = tracker.run([
            fix("2026-05-10T07:30:00.000Z"), fix("2026-05-10T07:30:02.000Z"), fix("2026-05-10T07:30:01.000Z"),
            fix("2026-05-10T07:30:03.000Z"),
        ])
        #expect(events.samples.map(\.time.iso8601) == [
            "2026-05-10T07:30:00.000Z", "2026-05-10T07:30:02.000Z", "2026-05-10T07:30:03.000Z",
        ])
        #expect(tracker.counts.count(.outOfOrder) == 1)
    }

    @Test func fixesWithoutTimeAreSkippedWithOneClearWarning() {
        var tracker = RunTracker()
        var untimed = fix("2026-05-10T07:30:00.000Z")
        untimed.time = nil
        let events = tracker.run([untimed, untimed, untimed])
        #expect(events.samples.isEmpty)
        #expect(tracker.counts.count(.noTime) == 3)
        #expect(events.warnings.count == 1)
        #expect(events.warnings.first?.kind == "gps_no_time")
        #expect(events.warnings.first?.text.contains("no time") == true)
    }

    @Test func noFixModesAndNaNPositionsAreNotUsed() {
        var tracker = RunTracker()
        let events = tracker.run([
            fix("2026-05-10T07:30:00.000Z", lat: nil, lon: nil, mode: .noFix),
            // gpsd can send mode 3 with NaN lat/lon early on.
            fix("2026-05-10T07:30:01.000Z", lat: nil, lon: nil, mode: .threeD),
            fix("2026-05-10T07:30:02.000Z", lat: .nan, lon: 9.2),
            fix("2026-05-10T07:30:03.000Z", lat: 91, lon: 9.2),
            fix("2026-05-10T07:30:04.000Z", lat: 0, lon: 0),
            fix("2026-05-10T07:30:05.000Z"),
        ])
        #expect(events.samples.count == 1)
        #expect(tracker.counts.count(.noFix) == 1)
        #expect(tracker.counts.count(.invalidPosition) == 4)
    }

    @Test func statusZeroIsNotNoFix() {
        // gpsd 3.22 leaves status 0 when the TPV has no `status` key: the usual case.
        var tracker = RunTracker()
        let events = tracker.run([fix("2026-05-10T07:30:00.000Z", status: .unknown)])
        #expect(events.samples.count == 1)
    }

    @Test func simulatedFixesAreNeverRecorded() {
        var tracker = RunTracker()
        let events = tracker.run([
            fix("2026-05-10T07:30:00.000Z", status: .simulated), fix("2026-05-10T07:30:01.000Z", status: .simulated),
        ])
        #expect(events.samples.isEmpty)
        #expect(tracker.counts.count(.simulated) == 2)
        #expect(events.warnings.map(\.kind) == ["gps_simulated"])
    }

    @Test func aWeekRolloverJumpKeepsTheTimelineContinuous() {
        // A 1024-week jump mid-run: the run continues one period later, the jump is reported,
        // and neither the elapsed time nor the distance sees 19.6 years.
        var run = SyntheticRun(legs: [.init(seconds: 120, speed: 3)])
        var fixes = run.build().fixes
        let weeks1024: Int64 = 1024 * 7 * 86_400_000
        for i in 60..<fixes.count { fixes[i].time!.milliseconds += weeks1024 }
        var tracker = RunTracker()
        let events = tracker.run(fixes)
        #expect(tracker.counts.timeJumps == 1)
        #expect(events.warnings.map(\.kind) == ["gps_time_jump"])
        let times = events.samples.map(\.time.milliseconds)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 == 1000 })
        #expect(abs(tracker.summary.elapsedTime - 120) < 0.001)
        #expect(abs(tracker.summary.distance - 360) < 3)
        run.seed = 2
    }

    @Test func aBackwardJumpOfYearsIsRebasedNotRejectedForever() {
        // garmin17n through gpsd: one epoch dated 2024, the next 2005.
        var tracker = RunTracker()
        let events = tracker.run([
            fix("2024-10-30T12:00:00.000Z"), fix("2005-03-16T12:00:01.000Z"), fix("2005-03-16T12:00:02.000Z"),
        ])
        #expect(events.samples.count == 3)
        #expect(tracker.counts.timeJumps == 1)
    }
}
