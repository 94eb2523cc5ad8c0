import PacerCore
import Testing

/// The SOS rules, sample by sample, on a clock of whole seconds from t = 0.
@Suite(.timeLimit(.minutes(10))) struct VitalsWatcherTests {
    static func rules() -> SOSRules {
        var rules = SOSRules()
        rules.enabled = true
        rules.highBpm = 205
        rules.lowBpm = 35
        return rules
    }

    static func t(_ seconds: Double) -> Timestamp { Timestamp(milliseconds: 1_000_000 + Int64(seconds * 1000)) }

    /// RR intervals that go with the rate and vary a little, as a heart's do (identical ones
    /// are a strap repeating itself).
    static func sample(_ seconds: Double, _ bpm: Int, contact: Bool? = true, rr: [Double]? = nil) -> HeartRateSample {
        let intervals = rr ?? (bpm > 0 ? [(60_000 / Double(bpm)).rounded() + Double(Int(seconds) % 5)] : [])
        return HeartRateSample(time: t(seconds), bpm: bpm, rrIntervalsMs: intervals, contact: contact)
    }

    /// A fix at `seconds`: the body moving north at `speed` m/s (Doppler), from `latitude`.
    static func fix(_ seconds: Double, latitude: Double = 45, speed: Double) -> AlertPosition {
        AlertPosition(latitude: latitude, longitude: 9, time: t(seconds), accuracyMeters: 5, dopplerSpeed: speed)
    }

    /// Feeds 1 Hz samples from `start`; returns every event with the second it came at.
    static func feed(_ watcher: inout VitalsWatcher, from start: Double = 0, _ values: [Int]) -> [(Double, SafetyEvent)] {
        var out: [(Double, SafetyEvent)] = []
        for (i, bpm) in values.enumerated() {
            let s = start + Double(i)
            out += watcher.ingest(sample(s, bpm)).map { (s, $0) }
        }
        return out
    }

    static func alerts(_ events: [(Double, SafetyEvent)]) -> [(Double, VitalsAlert)] {
        events.compactMap { if case .alert(let a) = $0.1 { ($0.0, a) } else { nil } }
    }

    @Test func aSustainedHighIsConfirmedOnItsThirdSample() {
        var w = VitalsWatcher(rules: Self.rules())
        let events = Self.feed(&w, Array(repeating: 150, count: 10) + Array(repeating: 215, count: 10))
        let raised = Self.alerts(events)
        #expect(raised.count == 1)
        #expect(raised.first?.0 == 12)
        #expect(raised.first?.1.kind == .hrHigh)
        #expect(raised.first?.1.firstOutOfRange == Self.t(10))
        #expect(raised.first?.1.heartRate == 215)
        #expect(raised.first?.1.trend?.direction == .rising)
    }

    @Test func oneOrTwoArtefactsRaiseNothing() {
        var w = VitalsWatcher(rules: Self.rules())
        var values = Array(repeating: 140, count: 60)
        values[10] = 250
        values[20] = 20
        values[30] = 250
        values[31] = 250
        values[45] = 250
        values[47] = 250
        #expect(Self.alerts(Self.feed(&w, values)).isEmpty)
    }

    /// A value wavering on the threshold (34, 35, 34, 34…) is still a breach, timed from its
    /// first out-of-range sample.
    @Test func aWaveringBreachIsTimedFromItsFirstSample() {
        var w = VitalsWatcher(rules: Self.rules())
        let events = Self.feed(&w, [40, 38, 36, 35, 34, 35, 34, 34, 33, 32])
        let raised = Self.alerts(events)
        #expect(raised.count == 1)
        #expect(raised.first?.1.kind == .hrLow)
        #expect(raised.first?.1.firstOutOfRange == Self.t(4))
        #expect(raised.first.map { $0.0 - 4 }! <= 5)
    }

    /// Exactly at the threshold is in range: beyond means above high, below low.
    @Test func theThresholdItselfIsInRange() {
        var w = VitalsWatcher(rules: Self.rules())
        #expect(Self.alerts(Self.feed(&w, Array(repeating: 205, count: 20) + Array(repeating: 35, count: 20))).isEmpty)
    }

    /// Sparse samples (every 2 s) still confirm within 5 s of the first: two out-of-range samples
    /// 2 s apart are enough (issue 17: the lossy-link rule), so the second one confirms.
    @Test func sparseSamplesStillMeetTheDeadline() {
        var w = VitalsWatcher(rules: Self.rules())
        var raisedAt: Double?
        for s in stride(from: 0.0, through: 20, by: 2) {
            for event in w.ingest(Self.sample(s, s >= 10 ? 220 : 150)) {
                if case .alert = event { raisedAt = raisedAt ?? s }
            }
        }
        #expect(raisedAt == 12)
    }

    @Test func oneBreachIsOneAlertAndReArmsAfterItsTimeInRange() {
        var w = VitalsWatcher(rules: Self.rules())
        var values = Array(repeating: 150, count: 5) + Array(repeating: 215, count: 60)
        values += Array(repeating: 150, count: 20) + Array(repeating: 215, count: 5)   // back too soon: same alert
        values += Array(repeating: 150, count: 35) + Array(repeating: 215, count: 5)   // re-armed: a new one
        let events = Self.feed(&w, values)
        let raised = Self.alerts(events)
        #expect(raised.map(\.1.number) == [1, 2])
        #expect(raised.map(\.0) == [7, 127])
        let resolved = events.compactMap { if case .resolved(let n, let kind, _, _) = $0.1 { (n, kind, $0.0) } else { nil } }
        #expect(resolved.count == 1)
        #expect(resolved.first?.0 == 1)
        #expect(resolved.first?.2 == 120)   // in range from t = 90: 30 s later
    }

    @Test func aLowDuringAnOpenHighIsANewAlert() {
        var w = VitalsWatcher(rules: Self.rules())
        let raised = Self.alerts(Self.feed(&w, Array(repeating: 215, count: 10) + Array(repeating: 30, count: 10)))
        #expect(raised.map(\.1.kind) == [.hrHigh, .hrLow])
    }

    @Test func noContactAndZeroBpmAreFaultsNotLowHeartRate() {
        var w = VitalsWatcher(rules: Self.rules())
        var events: [(Double, SafetyEvent)] = []
        for s in 0..<30 { events += w.ingest(Self.sample(Double(s), 0, contact: s < 15 ? false : true)).map { (Double(s), $0) } }
        #expect(Self.alerts(events).isEmpty)
        let warnings = events.compactMap { if case .warning(let warning) = $0.1 { warning } else { nil } }
        #expect(warnings.map(\.fault) == [.noContact])
        #expect(warnings.first?.time == Self.t(5))
    }

    @Test func silenceIsWarnedOnceAndClearedWhenNotificationsReturn() {
        var w = VitalsWatcher(rules: Self.rules())
        _ = Self.feed(&w, [120, 121, 122])
        var events: [SafetyEvent] = []
        for s in 3...20 { events += w.advance(to: Self.t(Double(s))) }
        #expect(events == [.warning(SensorWarning(fault: .noData, time: Self.t(7), since: Self.t(2)))])
        let back = w.ingest(Self.sample(21, 120))
        #expect(back == [.warningCleared(SensorWarning(fault: .noData, time: Self.t(21), since: Self.t(2)))])
    }

    @Test func aFrozenValueWithoutBeatIntervalsIsStale() {
        var w = VitalsWatcher(rules: Self.rules())
        var events: [SafetyEvent] = []
        for s in 0..<70 { events += w.ingest(Self.sample(Double(s), 133, rr: [])) }
        // A strap that never sends RR intervals: three times `stale_s` (5 s).
        #expect(events == [.warning(SensorWarning(fault: .stale, time: Self.t(15), since: Self.t(0)))])
        // The same value with RR intervals is a heart, not a stuck strap.
        var live = VitalsWatcher(rules: Self.rules())
        var none: [SafetyEvent] = []
        for s in 0..<70 { none += live.ingest(Self.sample(Double(s), 133)) }
        #expect(none.isEmpty)
    }

    /// The body stops while the signal is lost (a valid rate, no fall): "Are you OK?" at once,
    /// and nobody answering for `collapseAskSeconds` raises `no_signal_no_motion`.
    static func stopsAndFallsSilent(_ w: inout VitalsWatcher, stopAt: Double = 10, until end: Double = 60) -> [(Double, SafetyEvent)] {
        var events: [(Double, SafetyEvent)] = []
        var latitude = 45.0
        for s in stride(from: 0.0, through: end, by: 1) {
            let speed = s < stopAt ? 3.0 : 0
            latitude += speed / 111_000
            w.observe(position: Self.fix(s, latitude: latitude, speed: speed))
            events += w.advance(to: Self.t(s)).map { (s, $0) }
            if s < 10 { events += w.ingest(Self.sample(s, 150)).map { (s, $0) } }
        }
        return events
    }

    @Test func noSignalAndNoMotionTogetherIsAnAlertAfterAnUnansweredQuestion() {
        var w = VitalsWatcher(rules: Self.rules())
        let events = Self.stopsAndFallsSilent(&w)   // last valid at 9, silent from 10, stopped at 10
        let asked = events.filter { if case .askAreYouOK = $0.1 { true } else { false } }
        #expect(asked.map(\.0) == [14], "silent 4.5 s after the last notification: asked at once")
        #expect(asked.first?.1 == .askAreYouOK(since: Self.t(10), at: Self.t(14), deadline: Self.t(24)))
        let raised = Self.alerts(events)
        #expect(raised.count == 1)
        #expect(raised.first?.1.kind == .noSignalNoMotion)
        #expect(raised.first?.1.firstOutOfRange == Self.t(10))
        #expect(raised.first?.0 == 24)
    }

    /// The button (or `pacerctl sos cancel`) answers the question: no alert, and no second
    /// question while the same silence lasts.
    @Test func anAnsweredQuestionRaisesNothing() {
        for useCancel in [false, true] {
            var w = VitalsWatcher(rules: Self.rules())
            var events = Self.stopsAndFallsSilent(&w, until: 16).map(\.1)
            #expect(w.pendingAskDeadline == Self.t(24))
            let answer = useCancel ? w.cancel(at: Self.t(17)) : w.answerAsk(at: Self.t(17))
            #expect(answer == [.askOver(at: Self.t(17), answered: true)])
            for s in 18...400 {
                w.observe(position: Self.fix(Double(s), speed: 0))
                events += w.advance(to: Self.t(Double(s)))
            }
            #expect(events.count { if case .alert = $0 { true } else { false } } == 0)
            #expect(events.count { if case .askAreYouOK = $0 { true } else { false } } == 1)
        }
    }

    /// The signal coming back withdraws the question.
    @Test func theSignalComingBackWithdrawsTheQuestion() {
        var w = VitalsWatcher(rules: Self.rules())
        _ = Self.stopsAndFallsSilent(&w, until: 16)
        let back = w.ingest(Self.sample(17, 90))
        #expect(back.contains(.askOver(at: Self.t(17), answered: false)))
        var later: [SafetyEvent] = []
        for s in 18...200 {
            w.observe(position: Self.fix(Double(s), speed: 0))
            later += w.ingest(Self.sample(Double(s), 90))
        }
        #expect(later.isEmpty)
    }

    /// A strap that went silent long before the runner stopped is a missing sensor, not a
    /// collapse: the runner kept moving meanwhile.
    @Test func aCollapseNeedsTheSignalAndTheMotionToStopTogether() {
        func raised(stopAt: Double) -> Int {
            var w = VitalsWatcher(rules: Self.rules())
            return Self.alerts(Self.stopsAndFallsSilent(&w, stopAt: stopAt, until: stopAt + 120)).count
        }
        #expect(raised(stopAt: 10) == 1)
        #expect(raised(stopAt: 35) == 1, "the stop 25 s after the signal: within the 30 s window")
        #expect(raised(stopAt: 300) == 0)
    }

    /// Standing from the first fix on, the strap falls silent with no evidence: the fallback asks
    /// after `noSignalNoMotionSeconds`, then raises when nobody answers.
    @Test func someoneStandingIsAskedAfterTheFallbackTime() {
        var w = VitalsWatcher(rules: Self.rules())
        var raised: [VitalsAlert] = []
        var asked: [Timestamp] = []
        for s in 0...250 {
            w.observe(position: Self.fix(Double(s), speed: 0))
            var events = w.advance(to: Self.t(Double(s)))
            if s < 100 { events += w.ingest(Self.sample(Double(s), 80)) }
            raised += events.compactMap { if case .alert(let a) = $0 { a } else { nil } }
            asked += events.compactMap { if case .askAreYouOK(_, let at, _) = $0 { at } else { nil } }
        }
        #expect(asked == [Self.t(160)], "silent from 100, asked 60 s later")
        #expect(raised.map(\.kind) == [.noSignalNoMotion])
        #expect(raised.first?.firstOutOfRange == Self.t(100))
        #expect(raised.first?.raisedAt == Self.t(170))
    }

    @Test func aValidHeartRateOrMovementPreventsACollapse() {
        var w = VitalsWatcher(rules: Self.rules())
        var events: [SafetyEvent] = []
        for s in 0..<200 {
            w.observe(position: Self.fix(Double(s), speed: 0))
            events += w.ingest(Self.sample(Double(s), 70))
        }
        #expect(events.isEmpty)
    }

    @Test func followUpsComeEveryPeriodWhileOpenAndStopWhenCancelled() {
        var rules = Self.rules()
        rules.followUpEverySeconds = 60
        rules.followUpForSeconds = 180
        var w = VitalsWatcher(rules: rules)
        w.observe(position: AlertPosition(latitude: 45, longitude: 9, time: Self.t(0), accuracyMeters: 5))
        let events = Self.feed(&w, Array(repeating: 220, count: 400))
        let followUps = events.compactMap { if case .followUp(_, _, let seq, _, _, let position) = $0.1 { ($0.0, seq, position) } else { nil } }
        #expect(followUps.map(\.0) == [62, 122, 182])
        #expect(followUps.map(\.1) == [1, 2, 3])
        #expect(followUps.allSatisfy { $0.2?.latitude == 45 })

        var cancelled = VitalsWatcher(rules: rules)
        _ = Self.feed(&cancelled, Array(repeating: 220, count: 10))
        #expect(cancelled.cancel(at: Self.t(10)).count == 1)
        let after = Self.feed(&cancelled, from: 10, Array(repeating: 220, count: 200))
        #expect(after.isEmpty, "a cancelled breach neither follows up nor raises again until re-armed")
        #expect(cancelled.openAlerts.isEmpty)
    }

    @Test func aManualAlertIsImmediateAndNotDoubled() {
        var w = VitalsWatcher(rules: Self.rules())
        let first = w.raiseManual(at: Self.t(3))
        #expect(first.count == 1)
        if case .alert(let alert) = first.first {
            #expect(alert.kind == .manual)
            #expect(alert.raisedAt == Self.t(3))
        }
        #expect(w.raiseManual(at: Self.t(4)).isEmpty)
        _ = w.cancel(at: Self.t(5))
        #expect(w.raiseManual(at: Self.t(6)).count == 1)
    }

    /// Monitoring off: no vital is judged, but a person asking for help is never refused.
    @Test func disabledWatchesNothingButAManualSOSStillGoesOut() {
        var rules = Self.rules()
        rules.enabled = false
        var w = VitalsWatcher(rules: rules)
        #expect(Self.feed(&w, Array(repeating: 230, count: 20)).isEmpty)
        #expect(w.advance(to: Self.t(100)).isEmpty)
        #expect(w.raiseManual(at: Self.t(101)).count == 1)
        #expect(w.advance(to: Self.t(161)).count == 1, "a follow-up with the position")
    }
}
