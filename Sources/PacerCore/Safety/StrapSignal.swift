/// Why a strap's signal is not a heart rate the SOS rules can trust. The raw values are a public
/// vocabulary (status, the journal, replay's warnings).
public enum AbnormalSignal: String, Sendable, Equatable, CaseIterable {
    /// The strap says it has no skin contact.
    case noContact = "no_contact"
    /// 0 bpm with contact (or a strap that cannot tell).
    case zero = "zero_bpm"
    /// No notification for `SOSRules.silenceSeconds(interval:)`.
    case silent
    /// The same value (and the same RR intervals, or none) over and over.
    case frozen
    /// Readings above 250 bpm.
    case implausible = "above_250"
    /// Readings that jump, or whose RR intervals disagree with them, as no rhythm does.
    case chaotic

    /// Readings like these before a collapse are strong evidence that the heart failed.
    var isArrhythmic: Bool { self == .implausible || self == .chaotic }
}

/// What one strap's signal is now.
public enum HeartSignal: Sendable, Equatable {
    /// Nothing heard from it yet.
    case absent
    /// A valid, coherent reading: a heart rate.
    case live(bpm: Int)
    /// Abnormal since the given time (the first abnormal reading, or the notification that was
    /// due and did not come).
    case abnormal(AbnormalSignal, since: Timestamp)
}

/// One strap's readings and what they say, for the SOS rules. Readings of different straps are
/// never mixed: a switch to a second strap starts a new `StrapSignal`.
struct StrapSignal: Sendable {
    /// A valid reading (1-250 bpm with contact not denied).
    struct Seen: Sendable {
        var sample: HeartRateSample
        /// Bumped whenever the signal was lost for a while in between: readings of an older
        /// stretch are not fresh history for a new breach.
        var stretch: Int
        /// Part of a frozen run: says nothing about the heart.
        var frozen: Bool
        /// A reading no rhythm produces (see `SOSRules.chaoticJumpBpm`).
        var incoherent: Bool
        var time: Timestamp { sample.time }
    }

    /// Valid readings of the last `horizonSeconds`.
    private(set) var recent: [Seen] = []
    private(set) var stretch = 0
    private(set) var lastNotification: Timestamp?
    private var notificationTimes: [Timestamp] = []
    /// Notifications of the last chaotic window, and which of them were incoherent (above 250
    /// bpm counts, though it is not a valid reading).
    private var window: [(time: Timestamp, incoherent: Bool, implausible: Bool)] = []
    private(set) var lastValid: HeartRateSample?
    /// The first of the current run of no-contact or 0 bpm notifications.
    private(set) var invalidSince: (time: Timestamp, reason: AbnormalSignal)?
    private var repeatedSince: Timestamp?
    private(set) var frozenSince: Timestamp?
    private(set) var chaoticSince: (time: Timestamp, reason: AbnormalSignal)?
    /// The newest end of a chaotic stretch, for the evidence window.
    private(set) var lastChaotic: Timestamp?
    /// This strap sends RR intervals: one without them now is repeating itself.
    private var sendsRR = false
    /// The newest valid reading that was not incoherent.
    private var lastCoherent: Int?
    /// The newest RR intervals this strap sent.
    private var lastIntervals: [Double] = []
    /// One filtered value every `levelEverySeconds`, for the wearer's own level.
    private var levels: [(time: Timestamp, bpm: Int)] = []

    static let horizonSeconds = 60.0

    /// The strap's usual interval between notifications (median of the last few), 1 s until known.
    var usualInterval: Double {
        guard notificationTimes.count >= 3 else { return 1 }
        let gaps = zip(notificationTimes.dropFirst(), notificationTimes).map { $0.seconds(since: $1) }.sorted()
        return min(max(gaps[gaps.count / 2], 0.1), SOSRules.maximumSilenceSeconds)
    }

    /// One notification. Returns whether the history before it stays fresh (false: the strap was
    /// off, or silent, long enough that this is a new stretch).
    mutating func ingest(_ sample: HeartRateSample, rules: SOSRules) -> Bool {
        let t = sample.time
        var keepsHistory = true
        if let last = lastNotification, t.seconds(since: last) >= rules.faultAfterSeconds { keepsHistory = false }
        lastNotification = t
        notificationTimes.append(t)
        if notificationTimes.count > 9 { notificationTimes.removeFirst(notificationTimes.count - 9) }

        if sample.isSignalLoss {
            if invalidSince == nil { invalidSince = (t, sample.contact == false ? .noContact : .zero) }
            repeatedSince = nil
            frozenSince = nil
            noteCoherence(at: t, incoherent: false, implausible: false)
            return true
        }
        if let lost = invalidSince {
            invalidSince = nil
            // One flickering notification keeps the history; a strap off long enough to count
            // as lost (it may sit elsewhere now) does not.
            if t.seconds(since: lost.time) >= SOSRules.lossConfirmSeconds { keepsHistory = false }
        }
        if !keepsHistory {
            stretch += 1
            repeatedSince = nil
            frozenSince = nil
        }
        guard sample.isValid else {
            // Above 250 bpm: no heart rate, but a reading no rhythm produces.
            noteCoherence(at: t, incoherent: true, implausible: true)
            return keepsHistory
        }
        let incoherent = isIncoherent(sample)
        if !incoherent { lastCoherent = sample.bpm }
        noteCoherence(at: t, incoherent: incoherent, implausible: false)
        if !sample.rrIntervalsMs.isEmpty { sendsRR = true }
        checkFrozen(sample, rules: rules)
        recent.append(Seen(sample: sample, stretch: stretch, frozen: frozenSince != nil, incoherent: incoherent))
        if frozenSince != nil {
            for i in recent.indices where recent[i].time >= frozenSince! { recent[i].frozen = true }
        }
        if let drop = recent.firstIndex(where: { t.seconds(since: $0.time) <= Self.horizonSeconds }), drop > 0 {
            recent.removeFirst(drop)
        }
        lastValid = sample
        if frozenSince == nil { noteLevel(at: t) }
        return keepsHistory
    }

    /// The signal at `now`: silent, no contact or 0 bpm for a while, frozen, chaotic, else live.
    func signal(at now: Timestamp) -> HeartSignal {
        guard let lastNotification else { return .absent }
        let interval = usualInterval
        if now.seconds(since: lastNotification) >= SOSRules.silenceSeconds(interval: interval) {
            // Silent from the notification that was due next; older trouble began earlier.
            let due = lastNotification.adding(seconds: interval)
            return .abnormal(.silent, since: min(due, earliestTrouble ?? due))
        }
        if let invalid = invalidSince, now.seconds(since: invalid.time) >= SOSRules.lossConfirmSeconds {
            return .abnormal(invalid.reason, since: min(invalid.time, earliestTrouble ?? invalid.time))
        }
        if let chaotic = chaoticSince { return .abnormal(chaotic.reason, since: chaotic.time) }
        if let frozenSince { return .abnormal(.frozen, since: frozenSince) }
        if let lastValid { return .live(bpm: lastValid.bpm) }
        return .absent
    }

    /// A frozen or chaotic stretch that the silence or the loss of contact followed.
    private var earliestTrouble: Timestamp? {
        [frozenSince, chaoticSince?.time].compactMap { $0 }.min()
    }

    /// Whether the readings before `time` showed a failing heart (frozen readings never do):
    /// - a chaotic or above-250 stretch within `evidenceWindowSeconds`;
    /// - a fall of `evidenceShare` of the rate on median-of-3 filtered values within
    ///   `evidenceWindowSeconds` (0.3: 62 to 43, 150 to 105; the recovery after a run is
    ///   some 15-25 % in that time);
    /// - a steep fall: `steepFallShare` within `steepFallSeconds` (50 to 40 in 4 s; no recovery is
    ///   that fast);
    /// - a rate settled near the low threshold (`lowLevelMarginBpm` above it, for the last
    ///   `lowLevelSeconds`) and `lowLevelShare` below the wearer's own level of the last minutes
    ///   (a bradycardia that settles just above `hr_low_bpm`; an athlete resting at 42 is at their
    ///   own level).
    func showsFailingHeart(before time: Timestamp, rules: SOSRules) -> Bool {
        let window = SOSRules.evidenceWindowSeconds
        if let lastChaotic, time.seconds(since: lastChaotic) <= window { return true }
        if chaoticSince != nil { return true }
        let filtered = filteredValues(before: time, within: window)
        var highest: (time: Timestamp, bpm: Int)?
        var peaks: [(time: Timestamp, bpm: Int)] = []
        for value in filtered {
            if let peak = highest, Double(peak.bpm - value.bpm) >= rules.evidenceShare * Double(peak.bpm) { return true }
            // The highest value of the last `steepFallSeconds`, for a steep fall.
            peaks.removeAll { value.time.seconds(since: $0.time) > SOSRules.steepFallSeconds }
            if let steep = peaks.map(\.bpm).max(), Double(steep - value.bpm) >= SOSRules.steepFallShare * Double(steep) { return true }
            peaks.append(value)
            if highest == nil || value.bpm > highest!.bpm { highest = value }
        }
        let settled = filtered.filter { time.seconds(since: $0.time) <= SOSRules.lowLevelSeconds }
        guard let reference = ownLevel, settled.count >= 3,
              settled.allSatisfy({ $0.bpm <= rules.lowBpm + SOSRules.lowLevelMarginBpm }),
              let newest = settled.last, Double(newest.bpm) <= (1 - SOSRules.lowLevelShare) * Double(reference)
        else { return false }
        return true
    }

    /// A smaller sign, enough to ask at once someone who stood still long before: the lowest of
    /// the last three readings before `time` `weakFallShare` below the highest filtered value of
    /// the `steepFallSeconds` before them (a standing heart that slows before it stops, read
    /// through a strap's averaging).
    func showsSlowing(before time: Timestamp) -> Bool {
        let samples = recent.filter { !$0.frozen && $0.time < time && time.seconds(since: $0.time) <= SOSRules.steepFallSeconds + 3 }
        guard samples.count >= 4, let lowest = samples.suffix(3).map(\.sample.bpm).min(),
              let highest = filteredValues(before: time, within: SOSRules.steepFallSeconds + 3).map(\.bpm).max()
        else { return false }
        return Double(highest - lowest) >= SOSRules.weakFallShare * Double(highest)
    }

    /// Median-of-3 values of the live readings before `time`, within `seconds` (the filter's
    /// first values reach a little further back, so the window's start is filtered too).
    private func filteredValues(before time: Timestamp, within seconds: Double) -> [(time: Timestamp, bpm: Int)] {
        let samples = recent.filter { !$0.frozen && $0.time < time && time.seconds(since: $0.time) <= seconds + 3 }
        guard samples.count >= 3 else { return [] }
        var values: [(time: Timestamp, bpm: Int)] = (2..<samples.count).compactMap { i in
            guard time.seconds(since: samples[i].time) <= seconds else { return nil }
            let three = [samples[i - 2].sample.bpm, samples[i - 1].sample.bpm, samples[i].sample.bpm].sorted()
            return (samples[i].time, three[1])
        }
        // The median lags a sample behind: the newest reading counts too when the last three
        // fall step by step (each step one a heart can take), which no lone artefact does.
        let last = samples.suffix(3).map(\.sample.bpm)
        if last[0] >= last[1], last[1] >= last[2], last[0] > last[2],
           last[0] - last[1] <= SOSRules.chaoticJumpBpm, last[1] - last[2] <= SOSRules.chaoticJumpBpm {
            values.append((samples.last!.time, last[2]))
        }
        return values
    }

    /// The wearer's own level: the median of one filtered value every `levelEverySeconds` over
    /// the last `levelWindowSeconds`.
    private var ownLevel: Int? {
        guard levels.count >= 3 else { return nil }
        return levels.map(\.bpm).sorted()[levels.count / 2]
    }

    private mutating func noteLevel(at t: Timestamp) {
        if let last = levels.last, t.seconds(since: last.time) < SOSRules.levelEverySeconds { return }
        guard recent.count >= 3 else { return }
        let three = recent.suffix(3).filter { !$0.frozen }.map(\.sample.bpm).sorted()
        guard three.count == 3 else { return }
        levels.append((t, three[1]))
        levels.removeAll { t.seconds(since: $0.time) > SOSRules.levelWindowSeconds }
    }

    // MARK: Coherence

    /// A jump of more than `chaoticJumpBpm` from the previous valid reading within two seconds
    /// (a heart speeds up or slows down by a few beats per minute a second). A reading near the
    /// previous one, or back near the last coherent one, is coherent: a rate that steps up (a
    /// tachycardia's onset) jumps once, and a lone artefact once, not twice. Irregular RR
    /// intervals are not judged: atrial fibrillation and ectopic beats are rhythms a heart makes,
    /// and some straps carry other data in that field.
    private func isIncoherent(_ sample: HeartRateSample) -> Bool {
        guard let previous = lastValid, sample.time.seconds(since: previous.time) <= 2 else { return false }
        let nearPrevious = abs(sample.bpm - previous.bpm) <= SOSRules.chaoticJumpBpm
        let nearCoherent = lastCoherent.map { abs(sample.bpm - $0) <= SOSRules.chaoticJumpBpm } ?? false
        return !nearPrevious && !nearCoherent
    }

    private mutating func noteCoherence(at t: Timestamp, incoherent: Bool, implausible: Bool) {
        window.append((t, incoherent, implausible))
        if let drop = window.firstIndex(where: { t.seconds(since: $0.time) <= SOSRules.chaoticWindowSeconds }), drop > 0 {
            window.removeFirst(drop)
        }
        let bad = window.filter(\.incoherent)
        if bad.count >= SOSRules.chaoticReadings, bad.count * 2 >= window.count {
            if chaoticSince == nil {
                let mostlyAbove250 = bad.count { $0.implausible } * 2 > bad.count
                chaoticSince = (bad[0].time, mostlyAbove250 ? .implausible : .chaotic)
            }
            lastChaotic = t
        } else if chaoticSince != nil, !incoherent {
            chaoticSince = nil
        }
    }

    // MARK: Frozen

    private mutating func checkFrozen(_ sample: HeartRateSample, rules: SOSRules) {
        // A notification without intervals is a repeat only of the same value (at a slow rate
        // some seconds have no beat); one with intervals only of the same intervals.
        let repeats = lastValid.map { previous in
            previous.bpm == sample.bpm && (sample.rrIntervalsMs.isEmpty || sample.rrIntervalsMs == lastIntervals)
        } ?? false
        if !sample.rrIntervalsMs.isEmpty { lastIntervals = sample.rrIntervalsMs }
        guard repeats, let previous = lastValid else {
            repeatedSince = nil
            frozenSince = nil
            return
        }
        if repeatedSince == nil { repeatedSince = previous.time }
        // Identical RR intervals, or none from a strap that sends them, are a repeat at once; a
        // strap that never sends them reads the same value for a while from a steady heart too.
        let limit = sample.rrIntervalsMs.isEmpty && !sendsRR ? 3 * rules.staleAfterSeconds : rules.staleAfterSeconds
        if frozenSince == nil, sample.time.seconds(since: repeatedSince!) >= limit { frozenSince = repeatedSince }
    }
}
