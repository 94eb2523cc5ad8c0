import Testing
@testable import PacerCore

/// Runs a WorkoutCoach the way Coach does: started at the first sample, then every sample
/// (the first included) ingested.
func coached(_ workout: Workout, _ samples: [TrackSample], configuration: CoachConfiguration = CoachConfiguration(),
             heartRate: ((TrackSample) -> Int?)? = nil) -> (cues: [Cue], coach: WorkoutCoach) {
    var coach = WorkoutCoach(workout: workout, configuration: configuration)
    var cues = coach.start(at: samples[0].time, distance: samples[0].distance)
    for sample in samples {
        cues += coach.ingest(sample)
        if let bpm = heartRate?(sample) { cues += coach.ingest(heartRate: bpm, at: sample.time.adding(seconds: 0.5)) }
    }
    return (cues, coach)
}

/// One long step with a pace target of 4:00–4:30 per km: 3.704–4.167 m/s; with the default 3 %
/// tolerance (0.118 m/s) too slow means under 3.586 m/s and too fast over 4.285 m/s.
func paceWorkout(_ end: WorkoutStep.End = .time(seconds: 3600)) -> Workout {
    Workout(name: "steady", items: [.step(WorkoutStep(kind: .run, end: end, target: .pace(fastest: 240, slowest: 270)))])
}

let lowSpeed = 1000.0 / 270, highSpeed = 1000.0 / 240
let speedTolerance = 0.03 * (lowSpeed + highSpeed) / 2
let inRange = 3.9

// MARK: - Steps

@Suite(.timeLimit(.minutes(10))) struct WorkoutStepTests {
    @Test func trackWorkoutAnnouncesEveryStepInOrderAtItsDistance() {
        // 4 m/s exactly: every boundary falls on a sample (800 m at 200 s, then every 400/200 m).
        var runner = SampleRunner()
        let (cues, coach) = coached(WorkoutPlanTests.track, runner.samples(hold(4, 1201)))
        let steps = cues.of(.step)
        var expected = ["Warm-up: 800 metres at 5 minutes 30 per kilometre."]
        for k in 1...6 {
            expected += ["Interval \(k) of 6: 400 metres at 3 minutes 20 per kilometre.", "Recovery \(k) of 6: 200 metres."]
        }
        expected += ["Cool-down: 200 metres.", "Workout complete."]
        #expect(steps.texts == expected)
        var boundaries = [0.0, 800]
        for _ in 1...6 { boundaries += [boundaries.last! + 400, boundaries.last! + 600] }
        boundaries += [4600]
        #expect(steps.times == boundaries.map { $0 / 4 })
        #expect(coach.isComplete)
        #expect(coach.currentStep == nil)
        #expect(coach.stepIndex == 14)
        for cue in cues { #expect(isSpeakable(cue.text), "\(cue.text)") }
    }

    @Test func currentStepFollowsThePlan() {
        var coach = WorkoutCoach(workout: WorkoutPlanTests.track, configuration: CoachConfiguration())
        #expect(!coach.isComplete)
        #expect(coach.currentStep == WorkoutPlanTests.track.plan[0])
        var runner = SampleRunner()
        _ = coach.start(at: SampleRunner.t0, distance: 0)
        for sample in runner.samples(hold(4, 226)) { _ = coach.ingest(sample) }  // 900 m: in interval 1
        #expect(coach.stepIndex == 1)
        #expect(coach.currentStep == PlannedStep(step: WorkoutPlanTests.run, repetition: (1, 6)))
        #expect(!coach.isComplete)
    }

    @Test func startIsAnnouncedOnce() {
        var coach = WorkoutCoach(workout: WorkoutPlanTests.track, configuration: CoachConfiguration())
        let first = coach.start(at: SampleRunner.at(5), distance: 12)
        #expect(first == [Cue(time: SampleRunner.at(5), kind: .step, text: "Warm-up: 800 metres at 5 minutes 30 per kilometre.")])
        #expect(coach.start(at: SampleRunner.at(6), distance: 13).isEmpty)
    }

    @Test func theFirstSampleStartsTheWorkoutWhenNotStartedExplicitly() {
        var coach = WorkoutCoach(workout: WorkoutPlanTests.track, configuration: CoachConfiguration())
        var runner = SampleRunner()
        let cues = coach.ingest(runner.next(3))
        #expect(cues.texts == ["Warm-up: 800 metres at 5 minutes 30 per kilometre."])
        #expect(coach.ingest(runner.next(3)).isEmpty)
    }

    @Test func theWarmUpCountsFromWhereTheRunStarted() {
        // The run starts with 30 m already on the clock (the tracker's distance is the run's).
        var coach = WorkoutCoach(workout: WorkoutPlanTests.track, configuration: CoachConfiguration())
        _ = coach.start(at: SampleRunner.t0, distance: 30)
        var cues: [Cue] = []
        for s in 1...300 {
            let sample = TrackSample(time: SampleRunner.at(Double(s)), coordinate: Coordinate(latitude: 45, longitude: 9),
                                     speed: 4, distance: 30 + 4 * Double(s), moving: true, movingTime: Double(s))
            cues += coach.ingest(sample)
        }
        #expect(cues.of(.step).times.first == 200)  // 830 m: 800 m after the start
    }

    @Test func timeStepsEndWhileStandingStill() {
        // A rest is clock time: it ends even though the runner never moves.
        let workout = Workout(name: "rest", items: [
            .step(WorkoutStep(kind: .rest, end: .time(seconds: 60))),
            .step(WorkoutStep(kind: .run, end: .time(seconds: 120), target: .pace(fastest: 240, slowest: 270))),
        ])
        var runner = SampleRunner()
        let (cues, coach) = coached(workout, runner.samples(hold(0, 200)))
        #expect(cues.map(\.kind) == [.step, .step, .step])
        #expect(cues.texts == ["Rest: 1 minute.", "Run: 2 minutes at 4 minutes 15 per kilometre.", "Workout complete."])
        #expect(cues.times == [0, 60, 180])
        #expect(coach.isComplete)
    }

    @Test func lapStepsEndOnlyAtTheLapButton() {
        let workout = Workout(name: "surge", items: [
            .step(WorkoutStep(kind: .warmup, end: .distance(meters: 100))),
            .step(WorkoutStep(kind: .run, end: .lapButton, target: .pace(fastest: 240, slowest: 300))),
            .step(WorkoutStep(kind: .cooldown, end: .time(seconds: 30))),
        ])
        var coach = WorkoutCoach(workout: workout, configuration: CoachConfiguration())
        #expect(coach.lap(at: SampleRunner.t0, distance: 0).isEmpty)  // not started
        var runner = SampleRunner()
        var cues = coach.start(at: SampleRunner.t0, distance: 0)
        for _ in 0...10 { cues += coach.ingest(runner.next(4)) }
        // The lap button does not end a step that ends by distance.
        #expect(coach.lap(at: SampleRunner.at(10), distance: 40).isEmpty)
        #expect(coach.stepIndex == 0)
        for _ in 11...200 { cues += coach.ingest(runner.next(4)) }  // a lap step never ends by itself
        #expect(coach.stepIndex == 1)
        #expect(cues.of(.step).texts == ["Warm-up: 100 metres.", "Run: until you press lap at 4 minutes 30 per kilometre."])
        #expect(cues.of(.step).times == [0, 25])
        let lapped = coach.lap(at: SampleRunner.at(200.4), distance: 801.6)
        #expect(lapped == [Cue(time: SampleRunner.at(200.4), kind: .step, text: "Cool-down: 30 seconds.")])
        #expect(coach.stepIndex == 2)
        #expect(coach.lap(at: SampleRunner.at(201), distance: 804).isEmpty)  // the cool-down ends by time
        var rest: [Cue] = []
        for _ in 201...240 { rest += coach.ingest(runner.next(4)) }
        #expect(rest == [Cue(time: SampleRunner.at(231), kind: .step, text: "Workout complete.")])  // 30 s after 200.4
        #expect(coach.isComplete)
    }

    @Test func announcementsForEveryKindAndTarget() {
        let coach = WorkoutCoach(workout: Workout(name: "", items: []), configuration: CoachConfiguration())
        func say(_ kind: WorkoutStep.Kind, _ end: WorkoutStep.End, _ target: WorkoutStep.Target?, _ rep: (Int, Int)? = nil) -> String {
            coach.announcement(PlannedStep(step: WorkoutStep(kind: kind, end: end, target: target), repetition: rep))
        }
        #expect(say(.run, .time(seconds: 60), .pace(fastest: 230, slowest: 260), (3, 8)) == "Interval 3 of 8: 1 minute at 4 minutes 5 per kilometre.")
        #expect(say(.run, .distance(meters: 1000), .pace(fastest: 230, slowest: 250)) == "Run: 1 kilometre at 4 minutes per kilometre.")
        #expect(say(.recover, .time(seconds: 90), nil, (3, 8)) == "Recovery 3 of 8: 1 minute 30 seconds.")
        #expect(say(.recover, .time(seconds: 90), nil) == "Recovery: 1 minute 30 seconds.")
        #expect(say(.rest, .time(seconds: 120), nil, (1, 2)) == "Rest 1 of 2: 2 minutes.")
        #expect(say(.warmup, .time(seconds: 600), .heartRateZone(1)) == "Warm-up: 10 minutes in heart rate zone 1.")
        #expect(say(.warmup, .time(seconds: 600), nil, (1, 2)) == "Warm-up: 10 minutes.")  // only runs, recoveries and rests count rounds
        #expect(say(.run, .time(seconds: 1800), .heartRateZone(2)) == "Run: 30 minutes in heart rate zone 2.")
        #expect(say(.cooldown, .time(seconds: 300), .heartRate(low: 100, high: 130)) == "Cool-down: 5 minutes at heart rate 100 to 130.")
        #expect(say(.run, .lapButton, .pace(fastest: 240, slowest: 270)) == "Run: until you press lap at 4 minutes 15 per kilometre.")
        #expect(say(.run, .distance(meters: 1500), nil) == "Run: 1.5 kilometres.")

        var imperial = CoachConfiguration()
        imperial.units = .imperial
        let miles = WorkoutCoach(workout: Workout(name: "", items: []), configuration: imperial)
        #expect(miles.announcement(PlannedStep(step: WorkoutPlanTests.run, repetition: (1, 6)))
            == "Interval 1 of 6: 0.2 miles at 5 minutes 22 per mile.")
        #expect(miles.announcement(PlannedStep(step: WorkoutStep(kind: .run, end: .distance(meters: 1609.344),
                                                                 target: .pace(fastest: 180, slowest: 200)), repetition: nil))
            == "Run: 1 mile at 5 minutes 6 per mile.")
    }

    /// The runner's distance at 1 Hz overshoots each boundary by up to a second's running. A step
    /// that ends by distance must end where the plan says (its start plus its length, counted from
    /// the previous step's planned end), or the overshoots add up and the workout falls behind the
    /// track: here ten 100 m steps at 3.7 m/s would end 9 s (33 m) late.
    @Test func distanceStepsDoNotDriftByTheOvershootOfEachBoundary() {
        let hundred = WorkoutStep(kind: .run, end: .distance(meters: 100))
        let workout = Workout(name: "10 x 100", items: [.repeated(times: 10, steps: [hundred])])
        var runner = SampleRunner()
        let (cues, _) = coached(workout, runner.samples(hold(3.7, 300)))
        let expected = [0.0] + (1...10).map { k in (100 * Double(k) / 3.7).rounded(.up) }
        #expect(cues.of(.step).times == expected)
    }

    /// The same for time: with fixes every 1.5 s, ten 20 s steps must end at the first fix past
    /// 20, 40, 60... s, not 21 s after the fix that ended the previous one.
    @Test func timeStepsDoNotDriftBetweenFixes() {
        let twenty = WorkoutStep(kind: .run, end: .time(seconds: 20))
        let workout = Workout(name: "10 x 20 s", items: [.repeated(times: 10, steps: [twenty])])
        var runner = SampleRunner(period: 1.5)
        let (cues, _) = coached(workout, runner.samples(hold(3, 200)))
        let expected = [0.0] + (1...10).map { k in (20 * Double(k) / 1.5).rounded(.up) * 1.5 }
        #expect(cues.of(.step).times == expected)
    }
}

// MARK: - Corrections

@Suite(.timeLimit(.minutes(10))) struct WorkoutCorrectionTests {
    @Test func tooSlowGetsOneSpeedUpAfterGraceAndOffTargetThenEveryTwiceTheGap() {
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(3.0, 121)))
        // Grace 15 s from the start, then 4 s off target: 19 s. The same correction again only
        // after 2 × 20 s.
        #expect(cues.corrective.times == [19, 59, 99])
        #expect(cues.corrective.allSatisfy { $0 == Cue(time: $0.time, kind: .speedUp, text: "Speed up.") })
        #expect(cues.corrective.allSatisfy { $0.priority == .workout })
    }

    @Test func tooFastGetsSlowDown() {
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(5.0, 121)))
        #expect(cues.corrective.times == [19, 59, 99])
        #expect(cues.corrective.allSatisfy { $0.kind == .slowDown && $0.text == "Slow down." })
    }

    @Test func inRangeSaysNothing() {
        for speed in [lowSpeed + 0.01, inRange, highSpeed - 0.01] {
            var runner = SampleRunner()
            let (cues, _) = coached(paceWorkout(), runner.samples(hold(speed, 600)))
            #expect(cues.corrective.isEmpty, "\(speed) m/s")
        }
    }

    @Test func backInRangeSoonIsOnTargetOnlyOnceTheGapHasPassed() {
        // Too slow until 24 s; in range from 25 s. The median is in range from 30 s, but the
        // last correction was at 19 s: "on target" at 39 s, then nothing more.
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(3.0, 25) + hold(inRange, 300)))
        #expect(cues.corrective.map(\.kind) == [.speedUp, .onTarget])
        #expect(cues.corrective.times == [19, 39])
        #expect(cues.of(.onTarget).first?.text == "On target.")
    }

    @Test func backInRangeLaterIsOnTargetAsSoonAsTheMedianIsBack() {
        // Too slow until 44 s: speed up at 19 s, not repeated at 39 s (same correction within
        // 2 × gap), on target when the median is back in range at 50 s.
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(3.0, 45) + hold(inRange, 300)))
        #expect(cues.corrective.map(\.kind) == [.speedUp, .onTarget])
        #expect(cues.corrective.times == [19, 50])
    }

    @Test func overshootingTheOtherWayIsToldAfterTheGap() {
        // Too slow, then too fast: the other correction needs only the 20 s gap.
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(3.0, 22) + hold(5.0, 90)))
        #expect(cues.corrective.map(\.kind) == [.speedUp, .slowDown, .slowDown])
        #expect(cues.corrective.times == [19, 39, 79])
    }

    @Test func noOnTargetWithoutACorrectionFirst() {
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(inRange, 50) + hold(highSpeed + 0.5 * speedTolerance, 50) + hold(inRange, 50)))
        #expect(cues.corrective.isEmpty)
    }

    @Test(arguments: Array(0..<120))
    func oneWildFixNeverTriggersAnything(at second: Int) {
        // A single 15 m/s glitch anywhere in a steady run, in range or just inside the tolerance.
        for base in [inRange, lowSpeed - 0.5 * speedTolerance, highSpeed + 0.5 * speedTolerance] {
            var speeds = hold(base, 120)
            speeds[second] = 15
            var runner = SampleRunner()
            let (cues, _) = coached(paceWorkout(), runner.samples(speeds))
            #expect(cues.corrective.isEmpty, "glitch at \(second) s over \(base) m/s")
        }
    }

    @Test func oneWildFixDoesNotCutACorrectionShort() {
        // A slow runner told to speed up is not "on target" because of one fast fix.
        var speeds = hold(3.0, 120)
        speeds[25] = 15
        speeds[45] = 15
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(speeds))
        #expect(cues.corrective.map(\.kind) == [.speedUp, .speedUp, .speedUp])
    }

    @Test func oscillatingAroundAnEdgeInsideTheToleranceIsQuiet() {
        var runner = SampleRunner()
        // In range and just below it, alternately (the median flips between them).
        var speeds: [Double] = []
        for i in 0..<600 { speeds.append(i % 2 == 0 ? lowSpeed + 0.02 : lowSpeed - 0.9 * speedTolerance) }
        #expect(coached(paceWorkout(), runner.samples(speeds)).cues.corrective.isEmpty)
        // Far too slow for 4 s in every 10: never most of the window.
        runner = SampleRunner()
        speeds = (0..<600).map { $0 % 10 < 4 ? 2.5 : inRange }
        #expect(coached(paceWorkout(), runner.samples(speeds)).cues.corrective.isEmpty)
        // Both edges: just below the range and just above it, every 5 s.
        runner = SampleRunner()
        speeds = (0..<600).map { ($0 / 5) % 2 == 0 ? lowSpeed - 0.9 * speedTolerance : highSpeed + 0.9 * speedTolerance }
        #expect(coached(paceWorkout(), runner.samples(speeds)).cues.corrective.isEmpty)
        // A random wander anywhere inside the band.
        var random = SeededRandom(seed: 7)
        runner = SampleRunner()
        speeds = (0..<900).map { _ in lowSpeed - 0.95 * speedTolerance + random.uniform() * (highSpeed - lowSpeed + 1.9 * speedTolerance) }
        #expect(coached(paceWorkout(), runner.samples(speeds)).cues.corrective.isEmpty)
    }

    @Test func hysteresisAfterACorrectionOnlyInsideTheRangeIsOnTarget() {
        // Told to speed up at 19 s, the runner then stays just under the range (inside the
        // tolerance): never "on target"; still off target, so the reminder comes every 2 × gap.
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(3.0, 25) + hold(lowSpeed - 0.5 * speedTolerance, 100)))
        #expect(cues.of(.onTarget).isEmpty)
        #expect(cues.corrective.times == [19, 59, 99])
    }

    @Test func offTargetForLessThanTheDelaySaysNothing() {
        // 5 s too slow never moves the median (6 of the window's 11 values are needed).
        var runner = SampleRunner()
        let speeds = hold(inRange, 40) + hold(3.0, 5) + hold(inRange, 60)
        #expect(coached(paceWorkout(), runner.samples(speeds)).cues.corrective.isEmpty)
        // 6 s too slow (40–45 s) does: the median is too slow from 45 s to 50 s, the cue comes
        // 4 s after it left the range, at 49 s, and "on target" once the gap has passed.
        runner = SampleRunner()
        let longer = hold(inRange, 40) + hold(3.0, 6) + hold(inRange, 60)
        let cues = coached(paceWorkout(), runner.samples(longer)).cues
        #expect(cues.corrective.map(\.kind) == [.speedUp, .onTarget])
        #expect(cues.corrective.times == [49, 69])
    }

    @Test func standingStillSaysNothing() {
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(0, 600)))
        #expect(cues.map(\.kind) == [.step])
        // A runner who is slow, stops at a crossing, then goes on slowly: the correction waits
        // the grace from moving off again, and nothing at all is said while standing.
        runner = SampleRunner()
        let (stopped, _) = coached(paceWorkout(), runner.samples(hold(3.0, 30) + hold(0, 60) + hold(3.0, 55)))
        #expect(stopped.corrective.times == [19, 109])  // moved off at 90 s: 90 + 15 + 4
        #expect(stopped.corrective.allSatisfy { $0.kind == .speedUp })
    }

    @Test func graceCountsFromMovingOffAtTheStartLine() {
        // The step starts while the runner waits 60 s at the line, then runs too slowly.
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(0, 60) + hold(3.0, 59)))
        #expect(cues.corrective.times == [79])
    }

    @Test func eachStepHasItsGraceAndForgetsThePreviousCorrection() {
        // Step 1 (200 m, too fast target) then step 2 (too slow target) at a steady 4 m/s.
        let workout = Workout(name: "", items: [
            .step(WorkoutStep(kind: .run, end: .distance(meters: 200), target: .pace(fastest: 180, slowest: 200))),
            .step(WorkoutStep(kind: .run, end: .time(seconds: 300), target: .pace(fastest: 300, slowest: 330))),
        ])
        var runner = SampleRunner()
        let (cues, _) = coached(workout, runner.samples(hold(4, 160)))
        // Step 1: speed up at 19 s; step 2 starts at 50 s: grace to 65 s, off target 4 s,
        // and the gap since 19 s has passed: slow down at 69 s. No "on target" between steps.
        #expect(cues.corrective.map(\.kind) == [.speedUp, .slowDown, .slowDown, .slowDown])
        #expect(cues.corrective.times == [19, 69, 109, 149])
    }

    @Test func theGapHoldsAcrossAStepChange() {
        // No grace, no delay: "speed up" at 2 s (the median needs 3 fixes) in a 10 s step; the
        // next step's runner is too fast from its first fix, but waits for the gap since 2 s.
        var config = CoachConfiguration()
        config.stepGraceSeconds = 0
        config.offTargetSeconds = 0
        let workout = Workout(name: "", items: [
            .step(WorkoutStep(kind: .run, end: .time(seconds: 10), target: .pace(fastest: 180, slowest: 200))),
            .step(WorkoutStep(kind: .run, end: .time(seconds: 300), target: .pace(fastest: 300, slowest: 330))),
        ])
        var runner = SampleRunner()
        let (cues, _) = coached(workout, runner.samples(hold(4, 30)), configuration: config)
        #expect(cues.corrective.map(\.kind) == [.speedUp, .slowDown])
        #expect(cues.corrective.times == [2, 22])
    }

    @Test func aStepWithoutTargetIsNeverCorrected() {
        let workout = Workout(name: "", items: [.step(WorkoutStep(kind: .run, end: .time(seconds: 600)))])
        var runner = SampleRunner()
        let speeds = hold(1.5, 200) + hold(7, 200) + hold(3, 200)
        #expect(coached(workout, runner.samples(speeds)).cues.corrective.isEmpty)
    }

    @Test func noCorrectionsAfterTheWorkoutIsComplete() {
        let workout = paceWorkout(.time(seconds: 30))
        var runner = SampleRunner()
        let (cues, coach) = coached(workout, runner.samples(hold(inRange, 40) + hold(1.5, 300)))
        #expect(coach.isComplete)
        #expect(cues.corrective.isEmpty)
        #expect(cues.of(.step).texts.last == "Workout complete.")
    }

    @Test func configurationIsHonoured() {
        var config = CoachConfiguration()
        config.stepGraceSeconds = 30
        config.offTargetSeconds = 10
        config.correctionGapSeconds = 15
        var runner = SampleRunner()
        let (cues, _) = coached(paceWorkout(), runner.samples(hold(3.0, 121)), configuration: config)
        #expect(cues.corrective.times == [40, 70, 100])
        // A wider tolerance makes 3.0 m/s acceptable-ish: inside the band, nothing is said.
        config = CoachConfiguration()
        config.paceTolerance = 0.2
        runner = SampleRunner()
        #expect(coached(paceWorkout(), runner.samples(hold(3.0, 121)), configuration: config).cues.corrective.isEmpty)
    }

    // MARK: Heart-rate targets

    func hrWorkout(_ target: WorkoutStep.Target) -> Workout {
        Workout(name: "hr", items: [.step(WorkoutStep(kind: .run, end: .time(seconds: 3600), target: target))])
    }

    @Test func heartRateZoneTooLowIsSpeedUpTooHighIsSlowDown() {
        // Zone 2 of 184 is 110–128 bpm; 3 bpm tolerance. Heart rate half a second after each fix.
        var runner = SampleRunner()
        let low = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(3, 121)), heartRate: { _ in 100 }).cues
        #expect(low.corrective.times == [19.5, 59.5, 99.5])
        #expect(low.corrective.allSatisfy { $0.kind == .speedUp })
        runner = SampleRunner()
        let high = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(3, 121)), heartRate: { _ in 140 }).cues
        #expect(high.corrective.times == [19.5, 59.5, 99.5])
        #expect(high.corrective.allSatisfy { $0.kind == .slowDown })
        for bpm in [110, 120, 128, 107, 131] {
            runner = SampleRunner()
            let fine = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(3, 121)), heartRate: { _ in bpm }).cues
            #expect(fine.corrective.isEmpty, "\(bpm) bpm")
        }
        for bpm in [106, 132] {
            runner = SampleRunner()
            let off = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(3, 121)), heartRate: { _ in bpm }).cues
            #expect(off.corrective.count == 3, "\(bpm) bpm")
        }
    }

    @Test func heartRateZoneFollowsTheConfiguredMaximum() {
        var config = CoachConfiguration()
        config.maxHeartRate = 200  // zone 2: 120–139
        var runner = SampleRunner()
        let cues = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(3, 50)), configuration: config,
                           heartRate: { _ in 112 }).cues
        #expect(cues.corrective.map(\.kind) == [.speedUp])
    }

    @Test func heartRateRangeInclusiveWithTolerance() {
        for (bpm, kind) in [(146, CueKind.speedUp), (147, nil), (150, nil), (165, nil), (168, nil), (169, .slowDown)] {
            var runner = SampleRunner()
            let cues = coached(hrWorkout(.heartRate(low: 150, high: 165)), runner.samples(hold(3, 50)), heartRate: { _ in bpm }).cues
            #expect(cues.corrective.map(\.kind) == (kind.map { [$0] } ?? []), "\(bpm) bpm")
        }
    }

    @Test func heartRateBackInRangeIsOnTarget() {
        var runner = SampleRunner()
        let cues = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(3, 121)),
                           heartRate: { $0.time.t < 25 ? 100 : 120 }).cues
        #expect(cues.corrective.map(\.kind) == [.speedUp, .onTarget])
        #expect(cues.corrective.times == [19.5, 39.5])
    }

    @Test func oneWildHeartRateNeverTriggersAnything() {
        for second in stride(from: 0.0, to: 120, by: 1) {
            var runner = SampleRunner()
            let cues = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(3, 121)),
                               heartRate: { $0.time.t == second ? 220 : 120 }).cues
            #expect(cues.corrective.isEmpty, "glitch at \(second) s")
        }
    }

    @Test func heartRateIsNotJudgedOnAPaceStepNorPaceOnAHeartRateStep() {
        var runner = SampleRunner()
        let pace = coached(paceWorkout(), runner.samples(hold(inRange, 121)), heartRate: { _ in 200 }).cues
        #expect(pace.corrective.isEmpty)
        runner = SampleRunner()
        let hr = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(7, 121)), heartRate: { _ in 120 }).cues
        #expect(hr.corrective.isEmpty)
    }

    @Test func heartRateBeforeTheStartIsIgnored() {
        var coach = WorkoutCoach(workout: hrWorkout(.heartRateZone(2)), configuration: CoachConfiguration())
        for s in 0..<60 { #expect(coach.ingest(heartRate: 60, at: SampleRunner.at(Double(s))).isEmpty) }
    }

    @Test func standingStillWithALowHeartRateSaysNothing() {
        // At a crossing the heart rate drops below the zone: that is not a reason to say "speed up".
        var runner = SampleRunner()
        let cues = coached(hrWorkout(.heartRateZone(2)), runner.samples(hold(3, 30) + hold(0, 120)),
                           heartRate: { $0.time.t < 30 ? 120 : 95 }).cues
        #expect(cues.corrective.isEmpty)
    }

    @Test func isDeterministic() {
        var random = SeededRandom(seed: 99)
        let speeds = (0..<900).map { _ in 2 + 3 * random.uniform() }
        var a = SampleRunner(), b = SampleRunner()
        #expect(coached(WorkoutPlanTests.track, a.samples(speeds)).cues == coached(WorkoutPlanTests.track, b.samples(speeds)).cues)
    }
}

// MARK: - Property: corrections never chatter

@Suite(.timeLimit(.minutes(10))) struct WorkoutCorrectionPropertyTests {
    /// A random run: legs of random speed and length, with stops, single wild fixes and
    /// single dropped-to-zero fixes.
    static func profile(_ random: inout SeededRandom, seconds: Int) -> [(speed: Double, moving: Bool)] {
        var out: [(Double, Bool)] = []
        while out.count < seconds {
            let r = random.uniform()
            if r < 0.08 {
                out += Array(repeating: (0, false), count: 3 + Int(random.uniform() * 40))  // a stop
            } else if r < 0.14 {
                out.append((15, true))  // a wild fix
            } else if r < 0.18 {
                out.append((0.2, true))  // a fix that barely moved
            } else {
                let speed = 1.5 + random.uniform() * 5
                let length = 2 + Int(random.uniform() * 60)
                for _ in 0..<length { out.append((max(0.5, speed + random.gaussian() * 0.3), true)) }
            }
        }
        return Array(out.prefix(seconds))
    }

    static let workout = Workout(name: "mixed", items: [
        .step(WorkoutStep(kind: .warmup, end: .time(seconds: 240), target: .pace(fastest: 300, slowest: 360))),
        .repeated(times: 4, steps: [
            WorkoutStep(kind: .run, end: .distance(meters: 400), target: .pace(fastest: 190, slowest: 210)),
            WorkoutStep(kind: .recover, end: .time(seconds: 60), target: .pace(fastest: 330, slowest: 450)),
        ]),
        .step(WorkoutStep(kind: .run, end: .lapButton, target: .pace(fastest: 240, slowest: 270))),
    ])

    static func configurations() -> [CoachConfiguration] {
        var tight = CoachConfiguration()
        tight.stepGraceSeconds = 0
        tight.offTargetSeconds = 0
        tight.correctionGapSeconds = 5
        tight.correctionWindowSeconds = 3
        tight.paceTolerance = 0
        var slow = CoachConfiguration()
        slow.correctionGapSeconds = 45
        slow.correctionWindowSeconds = 20
        return [CoachConfiguration(), tight, slow]
    }

    @Test(arguments: Array(0..<3))
    func correctiveCuesAreNeverCloserThanTheGap(configurationIndex: Int) {
        let config = Self.configurations()[configurationIndex]
        let gap = config.correctionGapSeconds
        var random = SeededRandom(seed: 20_260_510 + UInt64(configurationIndex))
        var total = 0
        for run in 0..<150 {
            let profile = Self.profile(&random, seconds: 1200)
            var runner = SampleRunner()
            let samples = profile.map { runner.next($0.speed, moving: $0.moving) }
            var coach = WorkoutCoach(workout: Self.workout, configuration: config)
            var cues = coach.start(at: samples[0].time, distance: 0)
            for (i, sample) in samples.enumerated() {
                cues += coach.ingest(sample)
                if i % 97 == 96 { cues += coach.lap(at: sample.time.adding(seconds: 0.5), distance: sample.distance) }
            }
            let corrective = cues.corrective
            total += corrective.count
            for (a, b) in zip(corrective, corrective.dropFirst()) {
                #expect(b.time.seconds(since: a.time) >= gap, "run \(run): \(a.kind) at \(a.time.t) then \(b.kind) at \(b.time.t)")
            }
            // The same correction twice in one off-target episode (no step, stop or "on target"
            // between them) needs twice the gap.
            for (a, b) in zip(corrective, corrective.dropFirst()) where a.kind == b.kind && a.kind != .onTarget {
                let reset = cues.contains { $0.kind == .step && $0.time > a.time && $0.time <= b.time }
                    || samples.contains { !$0.moving && $0.time > a.time && $0.time <= b.time }
                if !reset {
                    #expect(b.time.seconds(since: a.time) >= 2 * gap, "run \(run): \(a.kind) at \(a.time.t) and \(b.time.t)")
                }
            }
            // Never within the grace of a step's start or of moving off, never while standing.
            for cue in corrective {
                let stepStart = cues.last { $0.kind == .step && $0.time <= cue.time }!.time
                #expect(cue.time.seconds(since: stepStart) >= config.stepGraceSeconds, "run \(run): \(cue.kind) at \(cue.time.t)")
                let sample = samples.last { $0.time <= cue.time }!
                #expect(sample.moving, "run \(run): \(cue.kind) at \(cue.time.t) while standing")
                if let stop = samples.last(where: { !$0.moving && $0.time < cue.time }) {
                    #expect(cue.time.seconds(since: stop.time) > config.stepGraceSeconds, "run \(run): \(cue.kind) at \(cue.time.t) after a stop")
                }
            }
        }
        #expect(total > 300, "the profiles should provoke plenty of corrections (\(total))")
    }
}
