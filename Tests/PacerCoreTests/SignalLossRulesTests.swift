import PacerCore
import Testing

/// Issue 17's rules: the heart that stops (`hr_signal_lost`), honest resolution, lossy links and
/// the faults that say the watcher is blind. Injected time, no sleeping.
@Suite(.timeLimit(.minutes(10))) struct SignalLossRulesTests {
    typealias V = VitalsWatcherTests

    static func lost(_ s: Double) -> HeartRateSample { V.sample(s, 0, contact: false, rr: []) }

    /// Feeds `values` at 1 Hz from `start`; nil is "no notification" (time still advances).
    /// `speed` is the body's (Doppler fixes northwards); nil there: no fix, the body unseen.
    static func play(_ w: inout VitalsWatcher, from start: Double = 0, _ values: [Int?],
                     speed: (Double) -> Double? = { _ in nil }) -> [(Double, SafetyEvent)] {
        var out: [(Double, SafetyEvent)] = []
        for (i, value) in values.enumerated() {
            let s = start + Double(i)
            if let v = speed(s) { w.observe(position: V.fix(s, latitude: 45 + s * v / 111_000, speed: v)) }
            let events = value.map { $0 == 0 ? w.ingest(lost(s)) : w.ingest(V.sample(s, $0)) } ?? w.advance(to: V.t(s))
            out += events.map { (s, $0) }
        }
        return out
    }

    /// Running at 3 m/s until `stop`, then lying still.
    static func stops(at stop: Double) -> (Double) -> Double? { { $0 < stop ? 3 : 0 } }
    static func running(_: Double) -> Double? { 3 }

    static let fall = Array(repeating: 150, count: 20) + [150, 118, 88, 60, 40]

    @Test func aSteepFallThenNoContactIsASignalLostAlert() {
        var w = VitalsWatcher(rules: V.rules())
        let events = Self.play(&w, Self.fall + Array(repeating: 0, count: 20), speed: Self.stops(at: 25))
        let raised = V.alerts(events)
        #expect(raised.map(\.1.kind) == [.hrSignalLost])
        #expect(raised.first?.1.firstOutOfRange == V.t(25), "the first invalid sample")
        #expect(raised.first?.0 == 27, "lost for 2 s")
        #expect(raised.first?.1.heartRate == 40)
    }

    @Test func aSteepFallThenSilenceIsASignalLostAlertFromTheMissingSample() {
        var w = VitalsWatcher(rules: V.rules())
        let events = Self.play(&w, Self.fall.map { Optional($0) } + Array(repeating: nil, count: 20), speed: Self.stops(at: 25))
        let raised = V.alerts(events)
        #expect(raised.map(\.1.kind) == [.hrSignalLost])
        #expect(raised.first?.1.firstOutOfRange == V.t(25), "the notification due after the last one (t = 24)")
        #expect(raised.first?.0 == 29, "silent for 4.5 s: noticed on the first tick after t = 28.5")
    }

    /// A strap taken off without a fall, or after an isolated artefact, is a warning only.
    @Test func aStrapTakenOffIsAWarningNotAnAlert() {
        for before in [Array(repeating: 150, count: 25), Array(repeating: 150, count: 22) + [20, 150, 150],
                       Array(repeating: 150, count: 22) + [250, 150, 150], Array(repeating: 150, count: 24) + [20]] {
            var w = VitalsWatcher(rules: V.rules())
            let events = Self.play(&w, before + Array(repeating: 0, count: 30), speed: Self.running)
            #expect(V.alerts(events).isEmpty, "\(before.suffix(4))")
            #expect(events.contains { if case .warning(let warning) = $0.1 { warning.fault == .noContact } else { false } })
        }
    }

    /// A fall of 25 bpm from 150 is no fall of a third, nor is one that ended more than 40 s
    /// before the loss evidence: with the body unseen (no fix), neither asks.
    @Test func aSmallOrOldFallIsNotEvidence() {
        func asked(_ values: [Int]) -> Bool {
            var w = VitalsWatcher(rules: V.rules())
            return Self.play(&w, values).contains { if case .askAreYouOK = $0.1 { true } else { false } }
        }
        #expect(!asked(Array(repeating: 150, count: 20) + [150, 140, 130, 125, 125] + Array(repeating: 0, count: 10)))
        #expect(!asked(Self.fall + Array(repeating: 40, count: 45) + Array(repeating: 0, count: 10)))
        #expect(asked(Self.fall + Array(repeating: 40, count: 12) + Array(repeating: 0, count: 10)), "12 s before: evidence")
    }

    /// A confirmed breach right before the loss is evidence; a cancelled one is not.
    @Test func aConfirmedBreachThenLossIsEvidenceUnlessCancelled() {
        var w = VitalsWatcher(rules: V.rules())
        let events = Self.play(&w, Array(repeating: 150, count: 10) + Array(repeating: 220, count: 10) + Array(repeating: 0, count: 10),
                               speed: Self.stops(at: 20))
        #expect(V.alerts(events).map(\.1.kind) == [.hrHigh, .hrSignalLost])

        var cancelled = VitalsWatcher(rules: V.rules())
        var all = Self.play(&cancelled, Array(repeating: 150, count: 10) + Array(repeating: 220, count: 10), speed: Self.stops(at: 20))
        _ = cancelled.cancel(at: V.t(19.5))
        all += Self.play(&cancelled, from: 20, Array(repeating: 0, count: 8), speed: Self.stops(at: 20))
        // No evidence now: the body stopping with the signal is asked about first.
        #expect(V.alerts(all).map(\.1.kind) == [.hrHigh])
        #expect(all.contains { if case .askAreYouOK = $0.1 { true } else { false } })
    }

    /// A low heart rate confirmed minutes ago is an open alert already; the strap going quiet
    /// then adds no alert (its follow-ups tell of the silence).
    @Test func aBreachConfirmedLongBeforeTheLossIsNotEvidence() {
        var w = VitalsWatcher(rules: V.rules())
        let events = Self.play(&w, Array(repeating: 150, count: 10) + Array(repeating: 28, count: 120) + Array(repeating: nil, count: 20))
        #expect(V.alerts(events).map(\.1.kind) == [.hrLow])
    }

    /// A stale strap's readings are never evidence of a fall: frozen on 150, then live at 110,
    /// then lost. Counted, the frozen 150s would make a 40 bpm fall.
    @Test func staleReadingsAreNeverEvidence() {
        var w = VitalsWatcher(rules: V.rules())
        var events: [SafetyEvent] = []
        for s in 0..<70 { events += w.ingest(V.sample(Double(s), 150, rr: [])) }
        for s in 70..<74 { events += w.ingest(V.sample(Double(s), 110)) }
        for s in 74..<84 { events += w.ingest(Self.lost(Double(s))) }
        #expect(events.contains(.warning(SensorWarning(fault: .stale, time: V.t(15), since: V.t(0)))))
        #expect(!events.contains { if case .askAreYouOK = $0 { true } else { false } })
        #expect(events.count { if case .alert = $0 { true } else { false } } == 0)
    }

    /// "Back in range" is [low, high]: 30 bpm does not resolve a high alert.
    @Test func aHighAlertIsNotResolvedByALowHeartRate() {
        var w = VitalsWatcher(rules: V.rules())
        let events = Self.play(&w, Array(repeating: 215, count: 10) + Array(repeating: 30, count: 60))
        #expect(!events.contains { if case .resolved(_, .hrHigh, _, _) = $0.1 { true } else { false } })
        #expect(V.alerts(events).map(\.1.kind) == [.hrHigh, .hrLow])
        #expect(w.openAlerts.map(\.kind) == [.hrHigh, .hrLow])
        let back = Self.play(&w, from: 70, Array(repeating: 100, count: 31))
        let resolved = back.compactMap { if case .resolved(_, let kind, _, _) = $0.1 { kind } else { nil } }
        #expect(Set(resolved) == [.hrHigh, .hrLow])
    }

    /// A lost signal resolves when the runner moves again with a valid signal, not on a valid
    /// reading alone.
    @Test func aLostSignalResolvesOnlyWhenTheRunnerMovesAgain() {
        var w = VitalsWatcher(rules: V.rules())
        var events = Self.play(&w, Self.fall + Array(repeating: 0, count: 10), speed: Self.stops(at: 25))
        #expect(V.alerts(events).map(\.1.kind) == [.hrSignalLost])
        events += Self.play(&w, from: 35, Array(repeating: 80, count: 60), speed: { _ in 0 })
        #expect(!events.contains { if case .resolved = $0.1 { true } else { false } })
        let moving = Self.play(&w, from: 95, [120, 120, 120], speed: Self.running)
        #expect(moving.contains { if case .resolved(_, .hrSignalLost, _, _) = $0.1 { true } else { false } })
        #expect(w.openAlerts.isEmpty)
    }

    /// Readings above 250 bpm are no heart rate and no breach, but never ignored: an abnormal
    /// signal, said while the runner keeps moving.
    @Test func readingsAbove250AreAbnormalNotIgnored() {
        var w = VitalsWatcher(rules: V.rules())
        let events = Self.play(&w, Self.fall + Array(repeating: 255, count: 20), speed: Self.running)
        #expect(V.alerts(events).isEmpty)
        #expect(events.contains { if case .warning(let warning) = $0.1 { warning.fault == .abnormal && warning.reason == .implausible } else { false } })
        #expect(!HeartRateSample(time: V.t(0), bpm: 251).isValid)
        #expect(HeartRateSample(time: V.t(0), bpm: 250).isValid)
    }

    /// After the strap was lost and heard again, a breach needs fresh history: readings from
    /// before the loss never help confirm it.
    @Test func afterAReconnectABreachNeedsFreshHistory() {
        var w = VitalsWatcher(rules: V.rules())
        var events = Self.play(&w, Array(repeating: 150, count: 10) + [215, 215])
        events += Self.play(&w, from: 12, [0, 0, 0])
        events += Self.play(&w, from: 15, [215, 215, 215, 215])
        let raised = V.alerts(events)
        #expect(raised.map(\.1.kind) == [.hrHigh])
        #expect(raised.first?.0 == 17, "two fresh samples 2 s apart")
        #expect(raised.first?.1.firstOutOfRange == V.t(15))
    }

    /// A deterministic lossy, jittery link (0.6–1.4 s apart, 1 in 10 lost): every breach
    /// confirms within the 4.5 s budget, and isolated artefacts never do.
    @Test func aLossyJitteryLinkStillConfirmsInTime() throws {
        var rng = SeededRandom(seed: 17)
        var worst = 0.0
        for _ in 0..<300 {
            var w = VitalsWatcher(rules: V.rules())
            var t = 0.0
            var firstOut: Double?
            var raisedAt: Double?
            var lastArtefact = -10.0
            while t < 60, raisedAt == nil {
                t += 0.6 + 0.8 * rng.uniform()
                if rng.uniform() < 0.1 { continue }
                let beyond = t >= 30
                if beyond, firstOut == nil { firstOut = t }
                // Isolated artefacts, as in the spike scenario: at most one in 10 s.
                let artefact = !beyond && t - lastArtefact > 10 && rng.uniform() < 0.1
                if artefact { lastArtefact = t }
                let bpm = beyond ? 215 : (artefact ? 250 : 150)
                for event in w.ingest(V.sample(t, bpm)) { if case .alert = event { raisedAt = t } }
            }
            let late = try #require(raisedAt.flatMap { r in firstOut.map { r - $0 } })
            #expect(late >= 0)
            worst = max(worst, late)
        }
        #expect(worst <= SOSRules.confirmationBudgetSeconds, "worst confirmation \(worst) s")
    }

    /// Contact that flickers every other second never gives a breach the samples it needs:
    /// hr_insufficient says so. A normal 1 Hz strap, or one every 2 s, does not.
    @Test func flickeringContactIsInsufficientCoverage() {
        func faults(_ pattern: (Int) -> Int?) -> [SensorFault] {
            var w = VitalsWatcher(rules: V.rules())
            var events: [SafetyEvent] = []
            for s in 0..<60 {
                // Intervals that vary from reading to reading, as a heart's do.
                if let bpm = pattern(s) { events += bpm == 0 ? w.ingest(Self.lost(Double(s))) : w.ingest(V.sample(Double(s), bpm, rr: [400 + Double(s % 13)])) }
                else { events += w.advance(to: V.t(Double(s))) }
            }
            return events.compactMap { if case .warning(let warning) = $0 { warning.fault } else { nil } }
        }
        // One valid reading in five seconds cannot confirm within the budget. (A flicker every
        // third notification no longer wipes the history, so it can.)
        #expect(faults { $0 % 5 == 0 ? 150 : 0 } == [.insufficient])
        #expect(faults { $0 % 3 == 2 ? 0 : 150 } == [])
        #expect(faults { _ in 150 } == [])
        #expect(faults { $0 % 2 == 0 ? 150 : nil } == [])
    }

    /// SOS on and no strap heard since monitoring started: a warning after the grace period.
    @Test func noStrapSinceStartIsWarned() {
        var w = VitalsWatcher(rules: V.rules())
        w.start(at: V.t(0))
        var events: [SafetyEvent] = []
        for s in 0...40 { events += w.advance(to: V.t(Double(s))) }
        #expect(events == [.warning(SensorWarning(fault: .noStrap, time: V.t(30), since: V.t(0)))])
        #expect(w.ingest(V.sample(41, 80)) == [.warningCleared(SensorWarning(fault: .noStrap, time: V.t(41), since: V.t(0)))])
    }

    /// Stale readings are no signal for man down: a strap frozen on one value while the runner
    /// lies still is asked about.
    @Test func staleReadingsAreNoSignalForManDown() {
        var w = VitalsWatcher(rules: V.rules())
        var events: [SafetyEvent] = []
        for s in 0..<200 {
            w.observe(position: V.fix(Double(s), latitude: 45 + Double(min(s, 10)) * 3 / 111_000, speed: s < 10 ? 3 : 0))
            events += w.ingest(s < 10 ? V.sample(Double(s), 120) : V.sample(Double(s), 120, rr: []))
        }
        #expect(events.contains { if case .askAreYouOK = $0 { true } else { false } })
        #expect(events.contains { if case .alert(let alert) = $0 { alert.kind == .noSignalNoMotion } else { false } })
    }

    /// After a restart the open alert is adopted: the breach going on raises nothing new,
    /// follow-ups continue their sequence, and it resolves once back in range.
    @Test func anAdoptedAlertFollowsUpResolvesAndIsNotRaisedTwice() {
        var w = VitalsWatcher(rules: V.rules())
        w.adopt(kind: .hrHigh, number: 7, firstOutOfRange: V.t(-100), raisedAt: V.t(-98), followUps: 2, at: V.t(0))
        #expect(w.openAlerts.map(\.number) == [7])
        var events = Self.play(&w, Array(repeating: 215, count: 70))
        #expect(V.alerts(events).isEmpty, "the same breach is not raised again")
        let followUps = events.compactMap { if case .followUp(let number, _, let sequence, _, _, _) = $0.1 { (number, sequence, $0.0) } else { nil } }
        #expect(followUps.map(\.0) == [7])
        #expect(followUps.map(\.1) == [3])
        #expect(followUps.map(\.2) == [60])
        events = Self.play(&w, from: 70, Array(repeating: 120, count: 31))
        #expect(events.contains { if case .resolved(7, .hrHigh, _, _) = $0.1 { true } else { false } })
        // A later alert is numbered above the adopted one.
        let next = V.alerts(Self.play(&w, from: 101, Array(repeating: 20, count: 5)))
        #expect(next.map(\.1.number) == [8])
    }

    @Test func theConfigRuleKnowsWhichWindowsCanConfirm() {
        #expect(SOSRules.confirmationFits(windowSeconds: 4, samples: 3))
        #expect(SOSRules.confirmationFits(windowSeconds: 4, samples: 5))
        #expect(!SOSRules.confirmationFits(windowSeconds: 2, samples: 5))
        #expect(!SOSRules.confirmationFits(windowSeconds: 1, samples: 3))
    }
}
