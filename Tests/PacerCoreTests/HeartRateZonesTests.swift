import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct HeartRateZonesTests {
    /// The table in config/workouts/README.md (maximum 184 bpm).
    @Test func readmeTableForAMaximumOf184() {
        let zones = HeartRateZones(maxHeartRate: 184)
        #expect(zones.range(ofZone: 1) == 92...109)
        #expect(zones.range(ofZone: 2) == 110...128)
        #expect(zones.range(ofZone: 3) == 129...146)
        #expect(zones.range(ofZone: 4) == 147...165)
        #expect(zones.range(ofZone: 5) == 166...184)
    }

    @Test func roundMaximum() {
        let zones = HeartRateZones(maxHeartRate: 200)
        #expect((1...5).map { zones.range(ofZone: $0) } == [100...119, 120...139, 140...159, 160...179, 180...200])
    }

    /// Whatever the maximum, the zones tile the range from 50 % to the maximum without gap or
    /// overlap, and `zone(of:)` agrees with `range(ofZone:)`.
    @Test func zonesTileWithoutGapsAndAgreeWithZoneOf() {
        for max in 100...230 {
            let zones = HeartRateZones(maxHeartRate: max)
            let ranges = (1...5).map { zones.range(ofZone: $0) }
            #expect(ranges[4].upperBound == max)
            for z in 1..<5 { #expect(ranges[z].lowerBound == ranges[z - 1].upperBound + 1, "max \(max) zone \(z + 1)") }
            for bpm in 30...250 {
                let expected = ranges.firstIndex { $0.contains(bpm) }.map { $0 + 1 } ?? (bpm > max ? 5 : 0)
                #expect(zones.zone(of: bpm) == expected, "max \(max) bpm \(bpm)")
            }
        }
    }

    @Test func zoneOfAtTheEdges() {
        let zones = HeartRateZones(maxHeartRate: 184)
        #expect(zones.zone(of: 91) == 0)
        #expect(zones.zone(of: 92) == 1)
        #expect(zones.zone(of: 109) == 1)
        #expect(zones.zone(of: 110) == 2)
        #expect(zones.zone(of: 165) == 4)
        #expect(zones.zone(of: 166) == 5)
        #expect(zones.zone(of: 184) == 5)
        #expect(zones.zone(of: 200) == 5)  // above the maximum is still zone 5
        #expect(zones.zone(of: 0) == 0)
    }

    @Test func outOfRangeZoneNumbersAreClamped() {
        let zones = HeartRateZones(maxHeartRate: 184)
        #expect(zones.range(ofZone: 0) == zones.range(ofZone: 1))
        #expect(zones.range(ofZone: -2) == zones.range(ofZone: 1))
        #expect(zones.range(ofZone: 6) == zones.range(ofZone: 5))
    }
}

@Suite(.timeLimit(.minutes(10))) struct WorkoutPlanTests {
    static let run = WorkoutStep(kind: .run, end: .distance(meters: 400), target: .pace(fastest: 190, slowest: 210))
    static let jog = WorkoutStep(kind: .recover, end: .distance(meters: 200))
    static let warmup = WorkoutStep(kind: .warmup, end: .distance(meters: 800), target: .pace(fastest: 300, slowest: 360))
    static let cooldown = WorkoutStep(kind: .cooldown, end: .distance(meters: 200))

    /// config/workouts/track-6x400.toml as the parser gives it.
    static let track = Workout(name: "6 x 400 m on the track", items: [
        .step(warmup), .repeated(times: 6, steps: [run, jog]), .step(cooldown),
    ])

    @Test func repeatsAreUnrolledInOrderWithTheirRound() {
        let plan = Self.track.plan
        #expect(plan.count == 14)
        #expect(plan.first == PlannedStep(step: Self.warmup, repetition: nil))
        #expect(plan.last == PlannedStep(step: Self.cooldown, repetition: nil))
        for round in 1...6 {
            #expect(plan[2 * round - 1] == PlannedStep(step: Self.run, repetition: (round, 6)))
            #expect(plan[2 * round] == PlannedStep(step: Self.jog, repetition: (round, 6)))
        }
    }

    @Test func severalRepeatsAndPlainSteps() {
        let fast = WorkoutStep(kind: .run, end: .time(seconds: 60))
        let easy = WorkoutStep(kind: .recover, end: .time(seconds: 90))
        let surge = WorkoutStep(kind: .run, end: .lapButton)
        let workout = Workout(name: "w", items: [
            .repeated(times: 2, steps: [fast, easy]), .step(surge), .repeated(times: 3, steps: [fast]),
        ])
        let plan = workout.plan
        #expect(plan.map(\.step) == [fast, easy, fast, easy, surge, fast, fast, fast])
        #expect(plan.map { $0.repetition?.round } == [1, 1, 2, 2, nil, 1, 2, 3])
        #expect(plan.map { $0.repetition?.of } == [2, 2, 2, 2, nil, 3, 3, 3])
    }

    @Test func plannedStepEqualityLooksAtTheRound() {
        #expect(PlannedStep(step: Self.run, repetition: (1, 6)) != PlannedStep(step: Self.run, repetition: (2, 6)))
        #expect(PlannedStep(step: Self.run, repetition: (1, 6)) != PlannedStep(step: Self.run, repetition: (1, 5)))
        #expect(PlannedStep(step: Self.run, repetition: (1, 6)) != PlannedStep(step: Self.run, repetition: nil))
        #expect(PlannedStep(step: Self.run, repetition: nil) == PlannedStep(step: Self.run, repetition: nil))
    }

    @Test func emptyWorkoutHasAnEmptyPlan() {
        #expect(Workout(name: "none", items: []).plan.isEmpty)
        #expect(Workout(name: "empty repeat", items: [.repeated(times: 3, steps: [])]).plan.isEmpty)
    }
}

@Suite(.timeLimit(.minutes(10))) struct CueKindTests {
    /// The raw values are public vocabulary (pacerctl replay --json, the README).
    @Test func rawValuesAndLanes() {
        #expect(CueKind.allCases.map(\.rawValue) == [
            "summary", "split", "step", "speed_up", "slow_down", "on_target", "gps_lost", "gps_back",
            "hr_lost", "hr_back", "battery_low", "storage_full", "run_state", "readiness", "sos", "sos_answer", "message", "notice",
            "race_to_go", "off_course", "back_on_course", "race_finish", "race_place",
        ])
        for kind in [CueKind.gpsLost, .gpsBack, .hrLost, .hrBack, .batteryLow, .storageFull, .offCourse, .backOnCourse] {
            #expect(kind.priority == .safety)
            #expect(kind.priority.isSparedByMute)
        }
        for kind in [CueKind.step, .speedUp, .slowDown, .onTarget, .runState, .notice] { #expect(kind.priority == .workout) }
        // A cloud notice is offered one at a time and must be said once: it never goes stale.
        #expect(CueKind.notice.lifetimeSeconds == .infinity)
        for kind in [CueKind.summary, .split, .readiness] { #expect(kind.priority == .summary) }
        #expect(CueKind.sos.priority == .sos && CueKind.sos.priority.isSparedByMute)
        // A monitor's answer to an alert is said at SOS priority, muted or not, however late.
        #expect(CueKind.sosAnswer.priority == .sos && CueKind.sosAnswer.lifetimeSeconds == .infinity)
        #expect(!CuePriority.workout.isSparedByMute && !CuePriority.summary.isSparedByMute)
        #expect(CuePriority.allCases.sorted() == [.summary, .workout, .safety, .sos])
        // A correction is only worth saying at once; a safety message is still news later.
        #expect(CueKind.speedUp.lifetimeSeconds < CueKind.summary.lifetimeSeconds)
        #expect(CueKind.gpsLost.lifetimeSeconds > CueKind.step.lifetimeSeconds)
    }
}
