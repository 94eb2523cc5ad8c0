import Testing
@testable import PacerCore

/// A Coach fed synthetic 1 Hz samples (and heart rate half a second after each), collecting cues.
struct CoachDriver {
    var coach: Coach
    var runner = SampleRunner()
    var cues: [Cue] = []

    init(_ configuration: CoachConfiguration = CoachConfiguration(), workout: Workout? = nil) {
        coach = Coach(configuration: configuration, workout: workout)
    }

    /// `seconds` samples at `speed`, each followed by a heart-rate sample when `bpm` is given.
    @discardableResult
    mutating func run(_ speed: Double, _ seconds: Int, bpm: Int? = nil, contact: Bool? = true) -> [Cue] {
        var new: [Cue] = []
        for _ in 0..<seconds {
            let sample = runner.next(speed)
            new += coach.ingest([.sample(sample)])
            if let bpm { new += coach.ingest(HeartRateSample(time: sample.time.adding(seconds: 0.5), bpm: bpm, contact: contact)) }
        }
        cues += new
        return new
    }

    mutating func heartRate(_ bpm: Int, at t: Double, contact: Bool? = true) -> [Cue] {
        let new = coach.ingest(HeartRateSample(time: SampleRunner.at(t), bpm: bpm, contact: contact))
        cues += new
        return new
    }

    mutating func advance(to t: Double) -> [Cue] {
        let new = coach.advance(to: SampleRunner.at(t))
        cues += new
        return new
    }
}

func metricSummary(_ config: (inout CoachConfiguration) -> Void) -> CoachConfiguration {
    var c = CoachConfiguration()
    config(&c)
    return c
}

// MARK: - Run state

@Suite(.timeLimit(.minutes(10))) struct CoachRunStateTests {
    @Test func startedAtTheFirstSampleOnce() {
        var driver = CoachDriver()
        let first = driver.run(0, 1)
        #expect(first == [Cue(time: SampleRunner.t0, kind: .runState, text: "Run started.")])
        #expect(first[0].priority == .workout)
        #expect(driver.run(0, 300).isEmpty)  // standing: nothing else
    }

    @Test func startedWithTheWorkoutsFirstStep() {
        var driver = CoachDriver(workout: WorkoutPlanTests.track)
        #expect(driver.run(0, 1).texts == ["Run started.", "Warm-up: 800 metres at 5 minutes 30 per kilometre."])
    }

    @Test func stoppedWithDistanceTimeAndPace() {
        var driver = CoachDriver()
        driver.run(4, 100)
        let summary = RunSummary(distance: 5000, movingTime: 1500, elapsedTime: 1600, averagePacePerKm: 300, maxSpeed: 4)
        let stop = driver.coach.stop(summary: summary)
        #expect(stop == [Cue(time: SampleRunner.at(99), kind: .runState,
                             text: "Run stopped. 5 kilometres in 25 minutes. Average pace 5 minutes per kilometre.")])
        var other = CoachDriver()
        other.run(0, 3)
        let none = other.coach.stop(summary: RunSummary(distance: 0, movingTime: 0, elapsedTime: 2, averagePacePerKm: nil, maxSpeed: 0))
        #expect(none.texts == ["Run stopped. 0 metres in 0 seconds."])
        let long = RunSummary(distance: 10_240, movingTime: 3723, elapsedTime: 3800, averagePacePerKm: 363.6, maxSpeed: 4)
        var third = CoachDriver()
        third.run(3, 2)
        #expect(third.coach.stop(summary: long).texts
            == ["Run stopped. 10.2 kilometres in 1 hour 2 minutes. Average pace 6 minutes 4 seconds per kilometre."])
    }

    @Test func stopAtTheLatestInputsTime() {
        var driver = CoachDriver()
        driver.run(3, 10)
        _ = driver.heartRate(140, at: 12.5)
        let stop = driver.coach.stop(summary: RunSummary(distance: 30, movingTime: 9, elapsedTime: 12.5, averagePacePerKm: nil, maxSpeed: 3))
        #expect(stop.map(\.time) == [SampleRunner.at(12.5)])
    }

    @Test func stopBeforeAnyInputSaysNothing() {
        var coach = Coach()
        #expect(coach.stop(summary: RunSummary(distance: 0, movingTime: 0, elapsedTime: 0, averagePacePerKm: nil, maxSpeed: 0)).isEmpty)
        var runner = SampleRunner()
        #expect(coach.ingest([.sample(runner.next(3))]).isEmpty)
    }

    @Test func pauseAndResume() {
        var coach = Coach()
        #expect(coach.apply(.pause).isEmpty)  // nothing has happened yet: no time to say it at
        var runner = SampleRunner()
        for _ in 0..<10 { _ = coach.ingest([.sample(runner.next(3))]) }
        #expect(coach.apply(.pause) == [Cue(time: SampleRunner.at(9), kind: .runState, text: "Run paused.")])
        _ = coach.advance(to: SampleRunner.at(30))
        #expect(coach.apply(.resume) == [Cue(time: SampleRunner.at(30), kind: .runState, text: "Run resumed.")])
        #expect(coach.apply(.lap).isEmpty)
    }

    @Test func nothingAfterStop() {
        var driver = CoachDriver(metricSummary { $0.summaryEverySeconds = 60 }, workout: WorkoutPlanTests.track)
        driver.run(3, 30, bpm: 140)
        let stop = driver.coach.stop(summary: RunSummary(distance: 87, movingTime: 29, elapsedTime: 29, averagePacePerKm: nil, maxSpeed: 3))
        #expect(stop.count == 1)
        var after: [Cue] = []
        after += driver.run(6, 600, bpm: 200)           // summaries, splits, corrections, steps
        after += driver.run(0, 10)
        after += driver.advance(to: 2000)               // heart rate lost, time summary
        after += driver.heartRate(150, at: 2001)        // heart rate back
        after += driver.coach.ingest([.gpsLost(time: SampleRunner.at(2002)), .gpsRegained(time: SampleRunner.at(2010), outageSeconds: 8)])
        after += driver.coach.ingest([.split(Split(index: 1, distance: 1000, time: 250, endTime: SampleRunner.at(2011)))])
        after += driver.coach.ingest([.lap(Lap(index: 1, distance: 400, time: 90, startTime: SampleRunner.at(1900), endTime: SampleRunner.at(2012)))])
        after += driver.coach.apply(.pause) + driver.coach.apply(.resume)
        after += driver.coach.stop(summary: RunSummary(distance: 1, movingTime: 1, elapsedTime: 1, averagePacePerKm: nil, maxSpeed: 1))
        #expect(after.isEmpty)
    }

    /// The daemon may still report a battery or a refused write (closing the run's last batch)
    /// once the run has stopped; the coach, whose run is over, says nothing of them.
    @Test func batteryAndStorageAfterStop() {
        var driver = CoachDriver()
        driver.run(3, 10)
        _ = driver.coach.stop(summary: RunSummary(distance: 27, movingTime: 9, elapsedTime: 9, averagePacePerKm: nil, maxSpeed: 3))
        #expect(driver.coach.strapBattery(5, at: SampleRunner.at(20)).isEmpty)
        #expect(driver.coach.deviceBattery(5, at: SampleRunner.at(20)).isEmpty)
        #expect(driver.coach.storage(full: true, at: SampleRunner.at(20)).isEmpty)
    }
}

// MARK: - Summaries and splits

@Suite(.timeLimit(.minutes(10))) struct CoachSummaryTests {
    @Test func everyKilometreWithTheDefaultItems() {
        var driver = CoachDriver()
        driver.run(4, 1101)
        let summaries = driver.cues.of(.summary)
        #expect(summaries.times == [250, 500, 750, 1000])
        #expect(summaries.texts == [
            "1 kilometre. Time 4 minutes 10 seconds. Average pace 4 minutes 10 seconds per kilometre.",
            "2 kilometres. Time 8 minutes 20 seconds. Average pace 4 minutes 10 seconds per kilometre.",
            "3 kilometres. Time 12 minutes 30 seconds. Average pace 4 minutes 10 seconds per kilometre.",
            "4 kilometres. Time 16 minutes 40 seconds. Average pace 4 minutes 10 seconds per kilometre.",
        ])
        #expect(summaries.allSatisfy { $0.priority == .summary })
        for cue in driver.cues { #expect(isSpeakable(cue.text), "\(cue.text)") }
    }

    @Test func elapsedTimeFromTheStartAveragePaceOverMovingTime() {
        var driver = CoachDriver()
        driver.run(0, 60)
        driver.run(4, 251)
        // Moving from 59 s: 1 km at 309 s, 250 s of it moving.
        #expect(driver.cues.of(.summary).texts == ["1 kilometre. Time 5 minutes 9 seconds. Average pace 4 minutes 10 seconds per kilometre."])
        #expect(driver.cues.of(.summary).times == [309])
    }

    @Test func withHeartRate() {
        var driver = CoachDriver()
        driver.run(4, 260, bpm: 152)
        #expect(driver.cues.of(.summary).texts == [
            "1 kilometre. Time 4 minutes 10 seconds. Average pace 4 minutes 10 seconds per kilometre. Heart rate 152.",
        ])
    }

    @Test func everyNMinutes() {
        var driver = CoachDriver(metricSummary { $0.summaryEveryMeters = nil; $0.summaryEverySeconds = 300 })
        driver.run(4, 1000)
        let summaries = driver.cues.of(.summary)
        #expect(summaries.times == [300, 600, 900])
        #expect(summaries.texts == [
            "1.2 kilometres. Time 5 minutes. Average pace 4 minutes 10 seconds per kilometre.",
            "2.4 kilometres. Time 10 minutes. Average pace 4 minutes 10 seconds per kilometre.",
            "3.6 kilometres. Time 15 minutes. Average pace 4 minutes 10 seconds per kilometre.",
        ])
    }

    @Test func timeSummariesAreNoticedWithoutFixes() {
        // GPS gone after 200 s: the daemon's tick still brings the 5-minute summary, with the
        // last known distance.
        var driver = CoachDriver(metricSummary { $0.summaryEveryMeters = nil; $0.summaryEverySeconds = 300 })
        driver.run(4, 201)
        #expect(driver.advance(to: 299.5).isEmpty)
        let due = driver.advance(to: 300)
        #expect(due == [Cue(time: SampleRunner.at(300), kind: .summary,
                            text: "800 metres. Time 5 minutes. Average pace 4 minutes 10 seconds per kilometre.")])
        #expect(driver.advance(to: 599).isEmpty)
        #expect(driver.advance(to: 650).count == 1)  // one, however late the tick
        #expect(driver.advance(to: 899).isEmpty)
    }

    @Test func aDistanceJumpGivesOneSummaryAndKeepsTheGrid() {
        // A bridged outage: 950 m to 2150 m in one step. One summary, the next at 3 km.
        var coach = Coach()
        func sample(_ t: Double, _ d: Double) -> [TrackerEvent] {
            [.sample(TrackSample(time: SampleRunner.at(t), coordinate: Coordinate(latitude: 45, longitude: 9), speed: 4,
                                 distance: d, moving: true, movingTime: t))]
        }
        var cues = coach.ingest(sample(0, 0)) + coach.ingest(sample(240, 950)) + coach.ingest(sample(540, 2150))
        #expect(cues.of(.summary).count == 1)
        cues += coach.ingest(sample(700, 2990)) + coach.ingest(sample(702, 3001))
        #expect(cues.of(.summary).times == [540, 702])
    }

    @Test func itemsInTheConfiguredOrder() {
        var driver = CoachDriver(metricSummary {
            $0.summaryItems = [.heartRate, .heartRateZone, .currentPace, .distance, .averagePace, .elapsedTime]
        })
        driver.run(4, 251, bpm: 150)
        #expect(driver.cues.of(.summary).texts == [
            "Heart rate 150. Zone 4. Current pace 4 minutes 10 seconds per kilometre. 1 kilometre. "
                + "Average pace 4 minutes 10 seconds per kilometre. Time 4 minutes 10 seconds.",
        ])
    }

    @Test func whatIsUnknownIsLeftOut() {
        // Every item asked for; standing with no strap and no split: only distance and time.
        var driver = CoachDriver(metricSummary {
            $0.summaryEveryMeters = nil
            $0.summaryEverySeconds = 60
            $0.summaryItems = CoachConfiguration.SummaryItem.allCases
        })
        driver.run(0, 61)
        #expect(driver.cues.of(.summary).texts == ["0 metres. Time 1 minute."])
        // Under 100 m there is no average pace worth saying; walking at 1 m/s there is.
        driver.run(1, 60)
        #expect(driver.cues.of(.summary).texts.last == "60 metres. Time 2 minutes. Current pace 16 minutes 40 seconds per kilometre.")
    }

    @Test func imperialSummariesEveryMile() {
        var driver = CoachDriver(metricSummary { $0.units = .imperial; $0.summaryEveryMeters = 1609.344 })
        driver.run(4, 810)
        // 1612 m at 403 s: the first fix past the mile.
        #expect(driver.cues.of(.summary).texts == [
            "1 mile. Time 6 minutes 43 seconds. Average pace 6 minutes 42 seconds per mile.",
            "2 miles. Time 13 minutes 25 seconds. Average pace 6 minutes 42 seconds per mile.",
        ])
    }

    /// Summary items that are all unknown at that moment (no strap, no split yet) leave nothing
    /// to say: that is no cue, not a cue with an empty sentence.
    @Test func aSummaryWithNothingToSayIsNotAnEmptyCue() {
        var driver = CoachDriver(metricSummary { $0.summaryItems = [.heartRate, .splitPace] })
        driver.run(4, 260)
        #expect(driver.cues.allSatisfy { !$0.text.isEmpty }, "\(driver.cues.map(\.text))")
        #expect(driver.cues.of(.summary).isEmpty)
    }

    @Test func noHeartRateWhenTheStrapWentQuietOrBelowTheZones() {
        let config = metricSummary {
            $0.summaryEveryMeters = nil
            $0.summaryEverySeconds = 60
            $0.summaryItems = [.distance, .heartRate, .heartRateZone]
        }
        var quiet = CoachDriver(config)
        quiet.run(2, 10, bpm: 120)
        quiet.run(2, 51)
        #expect(quiet.cues.of(.summary).texts == ["120 metres."])
        var low = CoachDriver(config)
        low.run(1, 61, bpm: 80)  // zone 0 for a maximum of 184: a heart rate, but no zone
        #expect(low.cues.of(.summary).texts == ["60 metres. Heart rate 80."])
        var fresh = CoachDriver(config)
        fresh.run(2, 56, bpm: 120)
        fresh.run(2, 5)  // the last reading is 4.5 s old at 60 s: still current
        #expect(fresh.cues.of(.summary).texts == ["120 metres. Heart rate 120. Zone 2."])
    }

    @Test func splitPaceIsTheSplitJustCompleted() throws {
        // Kilometre 1 at 4 m/s (4:10), kilometre 2 at 3.125 m/s (5:20). The tracker reports the
        // split after the sample that completes it; the summary at that kilometre must still
        // say the split it completes, not the one before.
        let fixes = SyntheticRun(legs: [.init(seconds: 250, speed: 4), .init(seconds: 330, speed: 3.125)],
                                 jitter: 0, biasSigma: 0, dopplerSigma: 0).build().fixes
        var tracker = RunTracker()
        var coach = Coach(configuration: metricSummary { $0.summaryItems = [.distance, .splitPace] })
        var cues: [Cue] = []
        var splits: [Split] = []
        for fix in fixes {
            let events = tracker.ingest(fix)
            splits += events.splits
            cues += coach.ingest(events)
        }
        try #require(splits.count == 2)
        let phrases = SpokenPhrases(units: .metric)
        #expect(cues.of(.summary).texts == [
            "1 kilometre. Last split \(phrases.pace(secondsPerKm: splits[0].pacePerKm!)).",
            "2 kilometres. Last split \(phrases.pace(secondsPerKm: splits[1].pacePerKm!)).",
        ])
    }

    @Test func aSummaryAndASplitAtTheSameKilometreAreSaidOnce() {
        // The default: a summary every kilometre, splits every kilometre. Real tracker.
        let fixes = SyntheticRun(legs: [.init(seconds: 830, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0).build().fixes
        var tracker = RunTracker()
        var coach = Coach()
        var cues: [Cue] = []
        for fix in fixes { cues += coach.ingest(tracker.ingest(fix)) }
        #expect(cues.of(.summary).count == 3)
        #expect(cues.of(.split).isEmpty)
    }

    @Test func splitsBetweenSummariesAreSpoken() throws {
        let fixes = SyntheticRun(legs: [.init(seconds: 830, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0).build().fixes
        var tracker = RunTracker()
        var coach = Coach(configuration: metricSummary { $0.summaryEveryMeters = 2000 })
        var cues: [Cue] = []
        var splits: [Split] = []
        for fix in fixes {
            let events = tracker.ingest(fix)
            splits += events.splits
            cues += coach.ingest(events)
        }
        try #require(splits.count == 3)
        let phrases = SpokenPhrases(units: .metric)
        #expect(cues.of(.summary).count == 1)
        #expect(cues.of(.split) == [
            Cue(time: splits[0].endTime, kind: .split, text: "Kilometre 1 in \(phrases.duration(splits[0].time))."),
            Cue(time: splits[2].endTime, kind: .split, text: "Kilometre 3 in \(phrases.duration(splits[2].time))."),
        ])
        #expect(cues.of(.split).first?.text == "Kilometre 1 in 4 minutes 10 seconds.")
        #expect(cues.of(.split).first?.priority == .summary)
    }

    @Test func splitCuesCanBeTurnedOff() {
        let fixes = SyntheticRun(legs: [.init(seconds: 830, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0).build().fixes
        var tracker = RunTracker()
        var coach = Coach(configuration: metricSummary { $0.summaryEveryMeters = nil; $0.splitCues = false })
        var cues: [Cue] = []
        for fix in fixes { cues += coach.ingest(tracker.ingest(fix)) }
        #expect(cues.map(\.kind) == [.runState])
    }

    @Test func milesAndOddSplits() {
        var trackerConfig = TrackerConfiguration()
        trackerConfig.splitDistanceMeters = 1609.344
        let fixes = SyntheticRun(legs: [.init(seconds: 830, speed: 4)], jitter: 0, biasSigma: 0, dopplerSigma: 0).build().fixes
        var tracker = RunTracker(configuration: trackerConfig)
        var coach = Coach(configuration: metricSummary { $0.units = .imperial; $0.summaryEveryMeters = nil })
        var cues: [Cue] = []
        for fix in fixes { cues += coach.ingest(tracker.ingest(fix)) }
        #expect(cues.of(.split).texts.count == 2)
        #expect(cues.of(.split).texts.allSatisfy { $0.hasPrefix("Mile ") })
        #expect(cues.of(.split).texts.first == "Mile 1 in 6 minutes 42 seconds.")  // 1609 m at 4 m/s

        trackerConfig.splitDistanceMeters = 500
        var halfK = RunTracker(configuration: trackerConfig)
        var metric = Coach(configuration: metricSummary { $0.summaryEveryMeters = nil })
        var more: [Cue] = []
        for fix in fixes.prefix(300) { more += metric.ingest(halfK.ingest(fix)) }
        #expect(more.of(.split).texts == ["Split 1 in 2 minutes 5 seconds.", "Split 2 in 2 minutes 5 seconds."])
    }

    /// A summary every kilometre and every 5 minutes: at 4:10 per km both fall due at 250 s.
    /// The same summary must not be said twice in a row.
    @Test func aDistanceAndATimeSummaryDueTogetherAreSaidOnce() {
        var driver = CoachDriver(metricSummary { $0.summaryEverySeconds = 250 })
        driver.run(4, 260)
        #expect(driver.cues.of(.summary).count == 1)
        #expect(driver.cues.of(.summary).times == [250])
    }
}

// MARK: - GPS, heart rate, batteries, storage

@Suite(.timeLimit(.minutes(10))) struct CoachSafetyTests {
    @Test func gpsLostAndBackFromTheTrackersEvents() {
        var coach = Coach()
        var runner = SampleRunner()
        _ = coach.ingest([.sample(runner.next(3))])
        #expect(coach.ingest([.gpsLost(time: SampleRunner.at(30))])
            == [Cue(time: SampleRunner.at(30), kind: .gpsLost, text: "GPS signal lost.")])
        #expect(coach.ingest([.gpsRegained(time: SampleRunner.at(45), outageSeconds: 15)])
            == [Cue(time: SampleRunner.at(45), kind: .gpsBack, text: "GPS signal back.")])
        #expect(CueKind.gpsLost.priority == .safety)
    }

    @Test func gpsLostAndBackThroughTheTracker() {
        var run = SyntheticRun(legs: [.init(seconds: 200, speed: 3)], jitter: 0, biasSigma: 0, dopplerSigma: 0)
        run.outage = 60..<90
        var tracker = RunTracker()
        var coach = Coach()
        var cues: [Cue] = []
        // The daemon's one-second tick between fixes: the outage is noticed without them.
        var last: Timestamp?
        for fix in run.build().fixes {
            if let previous = last {
                var tick = previous.adding(seconds: 1)
                while tick < fix.time! {
                    cues += coach.ingest(tracker.advance(to: tick))
                    tick = tick.adding(seconds: 1)
                }
            }
            cues += coach.ingest(tracker.ingest(fix))
            last = fix.time
        }
        #expect(cues.filter { $0.priority == .safety }.map(\.kind) == [.gpsLost, .gpsBack])
        #expect(cues.of(.gpsLost).times == [65])  // last fix at 59 s, lost after 5 s
        #expect(cues.of(.gpsBack).times == [90])
    }

    @Test func heartRateLostStrictlyAfterFiveSecondsOnceThenBack() {
        var driver = CoachDriver()
        driver.run(3, 1)
        for s in 0...10 { #expect(driver.heartRate(140, at: Double(s)).isEmpty) }
        #expect(driver.advance(to: 14).isEmpty)
        #expect(driver.advance(to: 15).isEmpty)  // exactly 5 s: not yet
        #expect(driver.advance(to: 15.001) == [Cue(time: SampleRunner.at(15.001), kind: .hrLost, text: "Heart rate lost. Check the strap.")])
        #expect(driver.advance(to: 16).isEmpty)
        #expect(driver.advance(to: 60).isEmpty)
        // Back once it has come steadily for 10 s, not at the first valid sample.
        for s in 61...70 { #expect(driver.heartRate(150, at: Double(s)).isEmpty) }
        #expect(driver.heartRate(150, at: 71) == [Cue(time: SampleRunner.at(71), kind: .hrBack, text: "Heart rate back, 150.")])
        #expect(driver.heartRate(151, at: 72).isEmpty)
        // A second episode is told again.
        #expect(driver.advance(to: 77.5).map(\.kind) == [.hrLost])
        #expect(driver.cues.filter { $0.priority == .safety }.allSatisfy { $0.kind == .hrLost || $0.kind == .hrBack })
    }

    @Test func heartRateLossIsNoticedOnAnyInputsTime() {
        // Fixes every second, heart rate only for the first 10 s: lost at the fix at 16 s.
        var driver = CoachDriver()
        driver.run(3, 11, bpm: 140)   // last heart rate at 10.5 s
        driver.run(3, 20)
        #expect(driver.cues.of(.hrLost).times == [16])
        #expect(driver.cues.of(.hrLost).count == 1)
    }

    @Test func samplesWithoutContactCountAsLost() {
        var driver = CoachDriver()
        driver.run(3, 1)
        for s in 0...10 { _ = driver.heartRate(140, at: Double(s)) }
        var lost: [Cue] = []
        for s in 11...40 { lost += driver.heartRate(0, at: Double(s), contact: false) }
        #expect(lost.map(\.kind) == [.hrLost])
        #expect(lost.times == [16])
        // A strap that keeps sending a number without contact, or zero with contact unsupported.
        for s in 41...50 { lost += driver.heartRate(90, at: Double(s), contact: false) }
        for s in 51...60 { lost += driver.heartRate(0, at: Double(s), contact: nil) }
        #expect(lost.count == 1)
        #expect(driver.heartRate(0, at: 61, contact: true).isEmpty)
        for s in 62..<72 { #expect(driver.heartRate(138, at: Double(s), contact: nil).isEmpty) }
        #expect(driver.heartRate(138, at: 72, contact: nil).texts == ["Heart rate back, 138."])
    }

    /// A contact that flickers (valid for a few seconds, then nothing for more than 5 s, again
    /// and again) is told as lost once, and back only once it holds.
    @Test func aFlickeringStrapIsToldLostOnceAndBackWhenItHolds() {
        var driver = CoachDriver()
        driver.run(3, 1)
        for s in 0...10 { _ = driver.heartRate(140, at: Double(s)) }
        var t = 10.0
        for _ in 0..<10 {
            t += 7  // a gap longer than the lost limit
            _ = driver.advance(to: t)
            for _ in 0..<3 { t += 1; _ = driver.heartRate(141, at: t) }
        }
        #expect(driver.cues.of(.hrLost).count == 1)
        #expect(driver.cues.of(.hrBack).isEmpty)
        for _ in 0..<12 { t += 1; _ = driver.heartRate(142, at: t) }
        #expect(driver.cues.of(.hrBack).count == 1)
    }

    @Test func noLossBeforeTheStrapEverDelivered() {
        var driver = CoachDriver()
        driver.run(3, 60)
        for s in 0..<60 { _ = driver.heartRate(0, at: Double(s) + 0.5, contact: false) }
        _ = driver.advance(to: 120)
        #expect(driver.cues.filter { $0.kind == .hrLost || $0.kind == .hrBack }.isEmpty)
    }

    @Test func heartRateLostAfterIsConfigurable() {
        var driver = CoachDriver(metricSummary { $0.heartRateLostAfterSeconds = 10 })
        driver.run(3, 1)
        _ = driver.heartRate(140, at: 0)
        #expect(driver.advance(to: 10).isEmpty)
        #expect(driver.advance(to: 10.5).map(\.kind) == [.hrLost])
    }

    @Test func strapBatteryLowOnceUntilItRecovers() {
        var coach = Coach()
        let t = SampleRunner.at(1)
        #expect(coach.strapBattery(80, at: t).isEmpty)
        #expect(coach.strapBattery(16, at: t).isEmpty)
        #expect(coach.strapBattery(15, at: t) == [Cue(time: t, kind: .batteryLow, text: "Heart rate strap battery low, 15 percent.")])
        #expect(coach.strapBattery(14, at: t).isEmpty)
        #expect(coach.strapBattery(5, at: t).isEmpty)
        #expect(coach.strapBattery(100, at: t).isEmpty)  // a new battery
        #expect(coach.strapBattery(12, at: t).texts == ["Heart rate strap battery low, 12 percent."])
        #expect(CueKind.batteryLow.priority == .safety)
    }

    @Test func deviceBatteryIsSeparateFromTheStraps() {
        var config = CoachConfiguration()
        config.lowBatteryPercent = 20
        var coach = Coach(configuration: config)
        let t = SampleRunner.at(1)
        #expect(coach.strapBattery(18, at: t).texts == ["Heart rate strap battery low, 18 percent."])
        #expect(coach.deviceBattery(21, at: t).isEmpty)
        #expect(coach.deviceBattery(20, at: t) == [Cue(time: t, kind: .batteryLow, text: "Battery low, 20 percent.")])
        #expect(coach.deviceBattery(19, at: t).isEmpty)
        #expect(coach.strapBattery(17, at: t).isEmpty)
        #expect(coach.deviceBattery(90, at: t).isEmpty)
        #expect(coach.deviceBattery(10, at: t).texts == ["Battery low, 10 percent."])
    }

    /// A fuel gauge read every 30 s wobbles by a percent around the threshold under load; "once
    /// until it recovers" should not mean once per wobble.
    @Test func aBatteryWobblingAroundTheThresholdIsToldOnce() {
        var coach = Coach()
        var cues: [Cue] = []
        for (i, percent) in [16, 15, 16, 15, 16, 15, 14, 15, 14].enumerated() {
            cues += coach.deviceBattery(percent, at: SampleRunner.at(Double(30 * i)))
        }
        #expect(cues.count == 1)
        // Charged well above the threshold, then low again: a new episode, told again.
        cues += coach.deviceBattery(25, at: SampleRunner.at(400))
        cues += coach.deviceBattery(12, at: SampleRunner.at(430))
        #expect(cues.count == 2)
    }

    @Test func storageFullOncePerEpisode() {
        var coach = Coach()
        let t = SampleRunner.at(1)
        #expect(coach.storage(full: false, at: t).isEmpty)
        #expect(coach.storage(full: true, at: t) == [Cue(time: t, kind: .storageFull, text: "Storage full. This run is not being saved.")])
        for _ in 0..<10 { #expect(coach.storage(full: true, at: t).isEmpty) }  // retried every second
        #expect(coach.storage(full: false, at: t).isEmpty)
        #expect(coach.storage(full: true, at: t).map(\.kind) == [.storageFull])
        #expect(CueKind.storageFull.priority == .safety)
    }

    @Test func heartRateForTheWorkoutOnlyOnceTheRunStarted() {
        let workout = Workout(name: "hr", items: [.step(WorkoutStep(kind: .run, end: .time(seconds: 3600), target: .heartRateZone(2)))])
        var driver = CoachDriver(workout: workout)
        for s in -60 ..< 0 { _ = driver.heartRate(90, at: Double(s)) }  // waiting for a fix
        #expect(driver.cues.isEmpty)
        driver.run(3, 60, bpm: 90)
        #expect(driver.cues.texts.prefix(2) == ["Run started.", "Run: 1 hour in heart rate zone 2."])
        #expect(driver.cues.of(.speedUp).times == [19.5, 59.5])
    }

    @Test func lapEventsEndALapStep() {
        let workout = Workout(name: "lap", items: [
            .step(WorkoutStep(kind: .run, end: .lapButton)),
            .step(WorkoutStep(kind: .cooldown, end: .time(seconds: 60))),
        ])
        var driver = CoachDriver(workout: workout)
        driver.run(3, 30)
        let lap = Lap(index: 1, distance: 87, time: 29, startTime: SampleRunner.t0, endTime: SampleRunner.at(29.5))
        #expect(driver.coach.ingest([.lap(lap)]) == [Cue(time: SampleRunner.at(29.5), kind: .step, text: "Cool-down: 1 minute.")])
        #expect(driver.coach.workout?.stepIndex == 1)
    }
}

// MARK: - Readiness

@Suite(.timeLimit(.minutes(10))) struct CoachReadinessTests {
    let t = SampleRunner.at(0)

    @Test func everythingKnown() {
        let cue = Coach.readiness(at: t, gps: "GPS 3D fix", heartRate: .live(bpm: 72, rrIntervalsMs: [], age: 0.3),
                                  batteryPercent: 80, runsWaiting: 3)
        #expect(cue == Cue(time: t, kind: .readiness, text: "GPS 3D fix. Heart rate 72. Battery 80 percent. 3 runs waiting for upload."))
        #expect(cue.priority == .summary)
    }

    @Test func eachHeartRateState() {
        func say(_ reading: HeartRateReading) -> String {
            Coach.readiness(at: t, gps: "GPS no fix.", heartRate: reading, batteryPercent: nil, runsWaiting: nil).text
        }
        #expect(say(.disconnected).hasPrefix("GPS no fix. No heart rate strap."))
        #expect(say(.noContact(age: 1)).hasPrefix("GPS no fix. Heart rate strap has no skin contact."))
        #expect(say(.noData).hasPrefix("GPS no fix. No heart rate yet."))
        #expect(say(.stale(lastBpm: 120, age: 9)).hasPrefix("GPS no fix. No heart rate"))
        #expect(!say(.stale(lastBpm: 120, age: 9)).contains("120"))
    }

    @Test func uploadsCounted() {
        func say(_ waiting: Int) -> String {
            Coach.readiness(at: t, gps: "GPS 2D fix", heartRate: .noData, batteryPercent: 15, runsWaiting: waiting).text
        }
        #expect(say(0) == "GPS 2D fix. No heart rate yet. Battery 15 percent. All runs uploaded.")
        #expect(say(1) == "GPS 2D fix. No heart rate yet. Battery 15 percent. 1 run waiting for upload.")
        #expect(say(2) == "GPS 2D fix. No heart rate yet. Battery 15 percent. 2 runs waiting for upload.")
    }

    /// GPS and heart rate are always said, unknown or not; battery and uploads only when known
    /// (a Pi often has no battery gauge, and saying so before every run is noise).
    @Test func gpsAndHeartRateAreAlwaysSaidBatteryAndUploadsWhenKnown() {
        let text = Coach.readiness(at: t, gps: "GPS no fix", heartRate: .disconnected, batteryPercent: nil, runsWaiting: nil).text
        #expect(text == "GPS no fix. No heart rate strap.")
    }
}
