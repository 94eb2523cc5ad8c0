import PacerCore
import Speech
import Testing

/// The arbiter's rules, one by one, then all at once over a long random sequence.
@Suite(.timeLimit(.minutes(10))) struct SpeechArbiterTests {
    static func ns(_ seconds: Double) -> UInt64 { UInt64(seconds * 1e9) }

    /// One cue of each priority lane.
    static let lanes: [CuePriority: CueKind] = [.summary: .summary, .workout: .speedUp, .safety: .gpsLost, .sos: .sos]

    func spoken(_ actions: [ArbiterAction]) -> [CueKind] {
        actions.compactMap { if case .speak(let q) = $0 { q.kind } else { nil } }
    }

    @Test func idleSpeaksAtOnce() {
        var arbiter = SpeechArbiter()
        let actions = arbiter.offer(cue(.summary, "one"), at: Self.ns(1))
        #expect(actions.count == 1)
        guard case .speak(let q) = actions.first else { Issue.record("expected speak, got \(actions)"); return }
        #expect(q.cue.text == "one" && q.id == 1 && q.offeredNs == Self.ns(1))
        #expect(arbiter.speaking == q)
        #expect(arbiter.waiting.isEmpty)
    }

    @Test(arguments: CuePriority.allCases) func higherPriorityInterrupts(_ low: CuePriority) {
        for high in CuePriority.allCases where high > low {
            var arbiter = SpeechArbiter()
            let first = arbiter.offer(cue(Self.lanes[low]!, "low"), at: Self.ns(1))
            guard case .speak(let lowCue) = first.first else { Issue.record("\(first)"); return }
            let actions = arbiter.offer(cue(Self.lanes[high]!, "high"), at: Self.ns(2))
            guard actions.count == 2, case .interrupt(let cut) = actions[0], case .speak(let highCue) = actions[1] else {
                Issue.record("\(low) then \(high): \(actions)")
                continue
            }
            #expect(cut == lowCue)
            #expect(highCue.kind == Self.lanes[high]!)
            #expect(arbiter.speaking == highCue)
            // The interrupted cue is gone for good: not waiting, not resumed when the new one ends.
            #expect(arbiter.waiting.isEmpty)
            #expect(arbiter.finished(highCue.id, at: Self.ns(3)).isEmpty)
            #expect(arbiter.speaking == nil)
        }
    }

    @Test(arguments: CuePriority.allCases) func equalOrLowerPriorityWaits(_ current: CuePriority) {
        for offered in CuePriority.allCases where offered <= current {
            var arbiter = SpeechArbiter()
            _ = arbiter.offer(cue(Self.lanes[current]!, "current"), at: Self.ns(1))
            // A different kind of the same lane, so that it is not a replacement.
            let kind = offered == current ? CueKind.allCases.first { $0.priority == offered && $0 != Self.lanes[current]! } ?? Self.lanes[offered]! : Self.lanes[offered]!
            let actions = arbiter.offer(cue(kind, "later"), at: Self.ns(1.5))
            #expect(actions.isEmpty, "\(offered) while \(current) speaks: \(actions)")
            #expect(arbiter.speaking?.cue.text == "current")
            #expect(arbiter.waiting.map(\.cue.text) == ["later"])
        }
    }

    @Test func queueIsPriorityFirstThenFIFO() {
        var arbiter = SpeechArbiter()
        _ = arbiter.offer(cue(.sos, "sos speaking"), at: Self.ns(0))
        let offers: [(CueKind, String)] = [
            (.summary, "summary 1"), (.speedUp, "workout 1"), (.split, "summary 2"), (.gpsLost, "safety 1"),
            (.step, "workout 2"), (.sos, "sos 2"), (.hrLost, "safety 2"), (.readiness, "summary 3"),
        ]
        for (index, (kind, text)) in offers.enumerated() {
            #expect(arbiter.offer(cue(kind, text), at: Self.ns(0.1 * Double(index + 1))).isEmpty)
        }
        let expected = ["sos 2", "safety 1", "safety 2", "workout 1", "workout 2", "summary 1", "summary 2", "summary 3"]
        #expect(arbiter.waiting.map(\.cue.text) == expected)
        // Finishing each in turn speaks them in that order.
        var said: [String] = []
        var now = 1.0
        while let current = arbiter.speaking {
            now += 0.5
            for action in arbiter.finished(current.id, at: Self.ns(now)) {
                if case .speak(let q) = action { said.append(q.cue.text) }
            }
        }
        #expect(said == expected)
    }

    @Test func finishedOfAnInterruptedCueChangesNothing() {
        var arbiter = SpeechArbiter()
        guard case .speak(let summary) = arbiter.offer(cue(.summary, "s"), at: 0).first else { return }
        _ = arbiter.offer(cue(.split, "waits"), at: 1)
        let cut = arbiter.offer(cue(.sos, "help"), at: 2)
        guard case .speak(let sos) = cut.last else { Issue.record("\(cut)"); return }
        // The summary's sound ends after the SOS was chosen: the SOS stays current.
        #expect(arbiter.finished(summary.id, at: 3).isEmpty)
        #expect(arbiter.speaking == sos)
        #expect(arbiter.finished(999, at: 3).isEmpty)
        #expect(spoken(arbiter.finished(sos.id, at: Self.ns(4))) == [.split])
    }

    @Test func staleWaitingCuesAreDroppedNotReadLate() {
        // "speed up" lives 5 s, a summary 10 s, a lost GPS 30 s, SOS for ever.
        var arbiter = SpeechArbiter()
        guard case .speak(let sos) = arbiter.offer(cue(.sos, "sos"), at: 0).first else { return }
        _ = arbiter.offer(cue(.speedUp, "speed up"), at: Self.ns(1))
        _ = arbiter.offer(cue(.summary, "summary"), at: Self.ns(1))
        _ = arbiter.offer(cue(.gpsLost, "gps lost"), at: Self.ns(1))
        _ = arbiter.offer(cue(.sos, "sos 2"), at: Self.ns(1))
        // At 6.5 s "speed up" is 5.5 s old: stale. The rest are fresh.
        let actions = arbiter.finished(sos.id, at: Self.ns(6.5))
        #expect(actions.count == 2)
        #expect(actions.first == .drop(QueuedCue(id: 2, cue: cue(.speedUp, "speed up"), offeredNs: Self.ns(1)), reason: .stale))
        #expect(spoken(actions) == [.sos])
        // An hour later: summary (10 s) and gps lost (30 s) are stale; nothing left to say.
        let later = arbiter.finished(arbiter.speaking!.id, at: Self.ns(3600))
        #expect(later.map { if case .drop(let q, .stale) = $0 { q.cue.text } else { "?" } } == ["gps lost", "summary"])
        #expect(arbiter.speaking == nil && arbiter.waiting.isEmpty)
    }

    @Test func ageAtTheLifetimeIsStillFresh() {
        var arbiter = SpeechArbiter()
        guard case .speak(let first) = arbiter.offer(cue(.summary, "long one"), at: 0).first else { return }
        _ = arbiter.offer(cue(.split, "split"), at: Self.ns(1))
        // Exactly 10 s old: not older than its lifetime.
        #expect(spoken(arbiter.finished(first.id, at: Self.ns(11))) == [.split])
    }

    @Test func sosNeverGoesStale() {
        var arbiter = SpeechArbiter()
        guard case .speak(let first) = arbiter.offer(cue(.sos, "first"), at: 0).first else { return }
        _ = arbiter.offer(cue(.sos, "second"), at: Self.ns(1))
        #expect(spoken(arbiter.finished(first.id, at: Self.ns(86_400))) == [.sos])
    }

    @Test func expireReportsStaleCuesWhileSomethingLongIsSpoken() {
        var arbiter = SpeechArbiter()
        _ = arbiter.offer(cue(.storageFull, "long"), at: 0)
        _ = arbiter.offer(cue(.onTarget, "on target"), at: Self.ns(1))
        #expect(arbiter.expire(at: Self.ns(5)).isEmpty)
        let dropped = arbiter.expire(at: Self.ns(6.01))
        #expect(dropped.count == 1)
        if case .drop(let q, .stale) = dropped.first { #expect(q.kind == .onTarget) } else { Issue.record("\(dropped)") }
        #expect(arbiter.speaking?.cue.text == "long")
    }

    @Test func aNewerCueReplacesAWaitingOneOfTheSameKind() {
        var arbiter = SpeechArbiter()
        _ = arbiter.offer(cue(.sos, "speaking"), at: 0)
        _ = arbiter.offer(cue(.speedUp, "speed up 1"), at: 1)
        _ = arbiter.offer(cue(.slowDown, "slow down"), at: 2)
        let actions = arbiter.offer(cue(.speedUp, "speed up 2"), at: 3)
        #expect(actions == [.drop(QueuedCue(id: 2, cue: cue(.speedUp, "speed up 1"), offeredNs: 1), reason: .replaced)])
        // The replacement takes its place in the FIFO as the newest.
        #expect(arbiter.waiting.map(\.cue.text) == ["slow down", "speed up 2"])
    }

    @Test func theCueBeingSpokenIsNotReplaced() {
        var arbiter = SpeechArbiter()
        _ = arbiter.offer(cue(.summary, "first summary"), at: 0)
        #expect(arbiter.offer(cue(.summary, "second summary"), at: 1).isEmpty)
        #expect(arbiter.speaking?.cue.text == "first summary")
        #expect(arbiter.waiting.map(\.cue.text) == ["second summary"])
    }

    @Test func mutedDropsAllButSafetyAndSOS() {
        var arbiter = SpeechArbiter(muted: true)
        for kind in CueKind.allCases {
            let actions = arbiter.offer(cue(kind, kind.rawValue), at: 0)
            if kind.priority.isSparedByMute {
                #expect(!actions.contains { if case .drop(_, .muted) = $0 { true } else { false } }, "\(kind)")
            } else {
                #expect(actions.count == 1 && { if case .drop(let q, .muted) = actions[0] { q.kind == kind } else { false } }(), "\(kind): \(actions)")
            }
        }
        #expect(arbiter.isMuted)
        #expect(([arbiter.speaking] + arbiter.waiting).allSatisfy { $0!.priority >= .safety })
    }

    @Test func mutingDropsWaitingCuesAndInterruptsTheOneBeingSpoken() {
        var arbiter = SpeechArbiter()
        guard case .speak(let step) = arbiter.offer(cue(.step, "next step"), at: 0).first else { return }
        _ = arbiter.offer(cue(.speedUp, "speed up"), at: 1)
        _ = arbiter.offer(cue(.summary, "summary"), at: 2)
        let actions = arbiter.setMuted(true, at: 3)
        #expect(actions.count == 3)
        #expect(actions.contains(.interrupt(step)))
        #expect(actions.filter { if case .drop(_, .muted) = $0 { true } else { false } }.count == 2)
        #expect(arbiter.speaking == nil && arbiter.waiting.isEmpty)
        // Unmuted, cues are said again.
        #expect(arbiter.setMuted(false, at: 4).isEmpty)
        #expect(spoken(arbiter.offer(cue(.summary, "again"), at: 5)) == [.summary])
    }

    @Test func mutingLeavesSafetyBeingSpokenAndItsQueue() {
        var arbiter = SpeechArbiter()
        _ = arbiter.offer(cue(.gpsLost, "gps lost"), at: 0)
        _ = arbiter.offer(cue(.hrLost, "hr lost"), at: 1)
        _ = arbiter.offer(cue(.summary, "summary"), at: 2)
        let actions = arbiter.setMuted(true, at: 3)
        #expect(actions.count == 1)
        if case .drop(let q, .muted) = actions.first { #expect(q.kind == .summary) } else { Issue.record("\(actions)") }
        #expect(arbiter.speaking?.kind == .gpsLost)
        #expect(arbiter.waiting.map(\.kind) == [.hrLost])
    }

    @Test func stopAllInterruptsAndDropsEverything() {
        var arbiter = SpeechArbiter()
        guard case .speak(let first) = arbiter.offer(cue(.gpsLost, "a"), at: 0).first else { return }
        _ = arbiter.offer(cue(.summary, "b"), at: 1)
        _ = arbiter.offer(cue(.step, "c"), at: 2)
        let actions = arbiter.stopAll()
        #expect(actions.first == .interrupt(first))
        #expect(actions.dropFirst().map { if case .drop(let q, .stopped) = $0 { q.cue.text } else { "?" } } == ["c", "b"])
        #expect(arbiter.speaking == nil && arbiter.waiting.isEmpty)
        #expect(arbiter.stopAll().isEmpty)
    }

    /// Thousands of random offers, ends of sound, mutes and expiries. Whatever happens: at most
    /// one cue sounds at a time (a `.speak` only when nothing sounds or right after the
    /// `.interrupt` of what did), every cue gets exactly one fate, nothing is said twice, the
    /// queue stays in order, and what is said is never stale or muted.
    @Test func randomSequencesKeepEveryRule() {
        struct SplitMix64: RandomNumberGenerator {
            var state: UInt64
            mutating func next() -> UInt64 {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }
        var random = SplitMix64(state: 0x5EED_0F_5EEC)
        var arbiter = SpeechArbiter()
        var sounding: QueuedCue?
        var fates: [UInt64: String] = [:]
        var offered: UInt64 = 0
        var now: UInt64 = 0
        let kinds = CueKind.allCases

        func apply(_ actions: [ArbiterAction]) {
            for action in actions {
                switch action {
                case .speak(let q):
                    #expect(sounding == nil, "speak \(q.id) over \(sounding!.id)")
                    #expect(fates[q.id] == nil, "\(q.id) said twice")
                    #expect(!q.isStale(at: now), "\(q.id) read late")
                    #expect(!arbiter.isMuted || q.priority.isSparedByMute)
                    sounding = q
                    fates[q.id] = "speaking"
                case .interrupt(let q):
                    #expect(sounding == q, "interrupt of \(q.id), which is not sounding")
                    sounding = nil
                    fates[q.id] = "interrupted"
                case .drop(let q, let reason):
                    #expect(fates[q.id] == nil, "\(q.id) dropped after \(fates[q.id]!)")
                    fates[q.id] = "dropped \(reason)"
                }
            }
            #expect(arbiter.speaking == sounding)
            for (a, b) in zip(arbiter.waiting, arbiter.waiting.dropFirst()) {
                #expect(a.priority > b.priority || (a.priority == b.priority && a.id < b.id), "queue out of order")
            }
            #expect(arbiter.waiting.allSatisfy { $0.priority <= (sounding?.priority ?? .sos) })
            #expect(Set(arbiter.waiting.map(\.kind)).count == arbiter.waiting.count, "two of a kind waiting")
        }

        for _ in 0..<20_000 {
            now += UInt64.random(in: 0...2_000_000_000, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<55:
                offered += 1
                apply(arbiter.offer(cue(kinds.randomElement(using: &random)!, "\(offered)"), at: now))
            case 55..<90:
                if let current = sounding {
                    sounding = nil
                    fates[current.id] = "spoken"
                    apply(arbiter.finished(current.id, at: now))
                }
            case 90..<95:
                apply(arbiter.setMuted(Bool.random(using: &random), at: now))
            default:
                apply(arbiter.expire(at: now))
            }
        }
        apply(arbiter.stopAll())
        #expect(fates.count == Int(offered), "every cue has a fate")
        #expect(!fates.values.contains("speaking"))
        let tally = Dictionary(grouping: fates.values, by: { $0 }).mapValues(\.count)
        // The mix exercised every rule.
        for fate in ["spoken", "interrupted", "dropped stale", "dropped replaced", "dropped muted"] {
            #expect((tally[fate] ?? 0) > 0, "no cue was \(fate): \(tally)")
        }
    }
}
