/// The SOS rules: heart-rate samples, positions and time in; alerts, warnings and follow-ups
/// out. Pure: the daemon's SOS lane and `pacerctl replay` feed it alike, in a run or not, paused
/// or not (R-SOS-1: monitoring is continuous while it is enabled).
///
/// Time is whatever clock the samples carry (the run's timeline in replay, the monotonic clock in
/// the daemon); `advance(to:)` tells it time passed without a sample, which is how it notices a
/// strap that went silent or a body that stopped.
///
/// It judges the heart signal and the body's motion together (thresholds in `SOSRules`):
/// - **The signal, per strap** (`StrapSignal`; two straps are never mixed): live; abnormal when
///   the strap reports no contact or 0 bpm for `lossConfirmSeconds`, falls silent for 4.5 of its
///   intervals (2-4.5 s), repeats itself (`stale_s`), reads above 250 bpm or chaotically; or
///   absent. The signal is live while any strap is.
/// - **The motion**, from the fixes alone (`BodyMotion`): at pace, slowing, stopped, or unknown
///   (no fix for 5 s).
/// - **Breach** (`hr_high`, `hr_low`): confirmed by `confirmSamples` out-of-range samples in the
///   window, the majority and the newest out of range; or by an episode of at least two samples,
///   all out of range, the first and the newest at least `minimumBreachSeconds` apart. Whatever
///   the motion, with no question: within 5 s. Only one strap's samples of one stretch count, so
///   readings from before a strap was off for `sensor_fault_s` never confirm a new breach (one
///   flickering notification keeps the history), and none is confirmed while a strap is chaotic.
/// - **Collapse**: an abnormal signal while the body is not moving.
///   - Moving (at pace or slowing): never an alert. The runner hears once per episode "check
///     your heart-rate strap" (warning `hr_signal_abnormal`).
///   - Stopped before, or within `collapseAfterSeconds` (15 s) after, the signal turned abnormal,
///     with strong evidence before it turned (a fall of `evidenceShare` of the wearer's own rate within
///     `evidenceWindowSeconds`, a confirmed breach in that time, or a chaotic or above-250
///     stretch): `hr_signal_lost`, at once. A body that stops later than that kept moving with
///     the abnormal signal: a strap fault, whatever came before.
///   - Stopped up to `collapseWindowSeconds` (60 s) before the signal turned abnormal, or up to
///     `collapseAfterSeconds` (15 s) after: "Are you OK?" at once; unanswered after
///     `collapseAskSeconds`, `no_signal_no_motion`. (A heart that fails fells a body within
///     seconds; a signal can fail any time after a person stopped.)
///   - Stopped long before (standing, sitting): the question at once if the heart slowed by
///     `weakFallShare` just before (`StrapSignal.showsSlowing`), else after
///     `noSignalNoMotionSeconds` of abnormal signal, as long as the stop began no later than
///     that after the signal turned.
///   - Unknown (no fix): the body cannot be seen, so even strong evidence only asks.
///   The button, `pacerctl sos cancel`, the signal coming back or moving again answers it.
/// - **Resolution**: a breach resolves once valid readings are back inside [low, high] for
///   `rearmSeconds`; a collapse once the runner moves again with a live signal.
/// - **A cancel never blinds**: a cancelled alert stays cancelled, but a new breach (after the
///   value was back in range) or a new collapse (after the signal came back or the runner moved)
///   raises again.
/// - **Honest coverage**: `hr_no_data`, `hr_no_contact`, `hr_stale` warn when the strap says
///   nothing of the heart for `sensor_fault_s`; `hr_insufficient` when the valid samples could not
///   confirm a breach within `confirmationBudgetSeconds`; `hr_no_strap` when none was heard.
public struct VitalsWatcher: Sendable {
    public private(set) var rules: SOSRules

    private var straps: [String: StrapSignal] = [:]
    /// The strap heard most recently: its readings are the ones alerts carry.
    private var activeStrap = ""
    private var motion = BodyMotion()
    private var position: AlertPosition?

    /// The breach episode under way, per strap.
    private var breaches: [String: [AlertKind: Breach]] = [:]
    /// Open alerts, not cancelled.
    private var open: [AlertKind: OpenAlert] = [:]
    /// Breach kinds whose alert was cancelled while the breach went on: quiet until it ends.
    private var quietBreaches: Set<AlertKind> = []
    /// When a breach was last confirmed, per strap: evidence for a collapse soon after.
    private var breachConfirmed: [String: Timestamp] = [:]
    private var collapse = Collapse.watching
    /// The abnormal episode being judged: since when, on which strap, and whether it was ever
    /// arrhythmic (chaotic or above 250).
    private var episode: Episode?
    private var raised = 0

    private var watchingSince: Timestamp?
    /// Since when coverage can be judged: the first notification, or the end of the last fault
    /// that already said the watcher was blind.
    private var coverageSince: Timestamp?
    private var faults: [SensorFault: Timestamp] = [:]

    public init(rules: SOSRules) {
        self.rules = rules
    }

    /// New rules apply from the next sample; open alerts stay open.
    public mutating func update(rules newRules: SOSRules) {
        rules = newRules
    }

    /// The alerts raised and not yet resolved or cancelled, oldest first.
    public var openAlerts: [VitalsAlert] {
        open.values.map(\.alert).sorted { $0.number < $1.number }
    }

    public var activeFaults: [SensorFault] { SensorFault.allCases.filter { faults[$0] != nil } }

    /// The "Are you OK?" question waiting for an answer: its deadline.
    public var pendingAskDeadline: Timestamp? {
        if case .asking(let deadline) = collapse { deadline } else { nil }
    }

    /// The heart signal now (the live one where any strap is live), for status.
    public func signal(at now: Timestamp) -> HeartSignal { overallSignal(at: now).signal }

    /// The body's motion now, for status.
    public func motion(at now: Timestamp) -> Motion { motion.state(at: now) }

    // MARK: Inputs

    /// Monitoring starts: a strap that is never heard from is warned about (`hr_no_strap`).
    public mutating func start(at time: Timestamp) {
        if watchingSince == nil { watchingSince = time }
    }

    /// One notification from a strap.
    public mutating func ingest(_ sample: HeartRateSample) -> [SafetyEvent] {
        guard rules.enabled else { return [] }
        let t = sample.time
        var events = advance(to: t)
        let id = sample.strap ?? ""
        if coverageSince == nil { coverageSince = t }
        events += clear(.noData, at: t)
        events += clear(.noStrap, at: t)

        var strap = straps[id] ?? StrapSignal()
        if !strap.ingest(sample, rules: rules) { breaches[id] = nil }
        straps[id] = strap
        activeStrap = id
        forgetSwappedStraps(at: t)

        if sample.isSignalLoss, let since = strap.invalidSince?.time {
            events += raiseFaultIfDue(.noContact, since: since, at: t)
        } else if sample.isValid {
            events += clear(.noContact, at: t)
            events += frozenFault(strap, at: t)
            // A frozen strap says nothing of the heart; a chaotic one's episode is timed, but a
            // breach is not confirmed on it (the collapse rules judge it).
            if strap.recent.last.map({ !$0.frozen }) ?? false {
                for kind in [AlertKind.hrHigh, .hrLow] {
                    events += judge(sample, kind: kind, strap: strap, id: id, mayConfirm: strap.chaoticSince == nil)
                }
            }
            events += judgeInsufficient(strap, at: t)
        }
        events += judgeCollapse(at: t)
        return events
    }

    /// A usable GPS fix: the position alerts carry, and the body's motion.
    public mutating func observe(position newPosition: AlertPosition) {
        position = newPosition
        motion.observe(BodyMotion.Fix(time: newPosition.time,
                                      coordinate: Coordinate(latitude: newPosition.latitude, longitude: newPosition.longitude),
                                      dopplerSpeed: newPosition.dopplerSpeed))
    }

    /// Time passed (a fix, a tick): sensor silence, a collapse and follow-ups are judged here.
    public mutating func advance(to now: Timestamp) -> [SafetyEvent] {
        // A manual alert is followed up even with vital monitoring off.
        guard rules.enabled else { return followUps(at: now) }
        var events: [SafetyEvent] = []
        if let last = straps.values.compactMap(\.lastNotification).max() {
            events += raiseFaultIfDue(.noData, since: last, at: now)
        } else if let watchingSince {
            events += raiseFaultIfDue(.noStrap, since: watchingSince, at: now, after: SOSRules.noStrapGraceSeconds)
        }
        if let since = straps[activeStrap]?.invalidSince?.time {
            events += raiseFaultIfDue(.noContact, since: since, at: now)
        }
        events += judgeCollapse(at: now)
        events += followUps(at: now)
        return events
    }

    /// A very long press or `pacerctl sos raise`: raised at once, no confirmation, and whether or
    /// not vital monitoring is enabled (a person asking for help is never refused). A manual
    /// alert already open is not raised twice.
    public mutating func raiseManual(at time: Timestamp) -> [SafetyEvent] {
        if open[.manual] != nil { return [] }
        return [raise(.manual, firstOutOfRange: time, at: time)]
    }

    /// An alert left open before a restart (from sos.db), open here again: its follow-ups go on
    /// (the next one after `followUpEverySeconds`; the lane says at once that the device
    /// restarted), it resolves as any other, and the same breach going on raises no second alert.
    /// `followUps` is how many went out before; the next is number `followUps + 1`. Numbers go on
    /// above every adopted one.
    public mutating func adopt(kind: AlertKind, number: Int, firstOutOfRange: Timestamp, raisedAt: Timestamp, followUps: Int,
                               at now: Timestamp) {
        raised = max(raised, number)
        let alert = VitalsAlert(number: number, kind: kind, firstOutOfRange: firstOutOfRange, raisedAt: raisedAt)
        var entry = OpenAlert(alert: alert, nextFollowUp: now.adding(seconds: rules.followUpEverySeconds))
        entry.followUps = followUps
        open[kind] = entry
        if kind.isCollapse { collapse = .alerted }
    }

    /// The runner answered "Are you OK?" (the button). Nothing happens when nothing was asked.
    public mutating func answerAsk(at time: Timestamp) -> [SafetyEvent] {
        guard case .asking = collapse else { return [] }
        collapse = .quiet
        return [.askOver(at: time, answered: true)]
    }

    /// `pacerctl sos cancel`: every open alert is called off, and a pending "Are you OK?" is
    /// answered. The watcher stays armed: a breach that goes on stays quiet until its value has
    /// been back in range, a collapse until the signal came back or the runner moved; anything
    /// new raises again.
    public mutating func cancel(at time: Timestamp) -> [SafetyEvent] {
        var events = answerAsk(at: time)
        for kind in AlertKind.allCases {
            guard let entry = open.removeValue(forKey: kind) else { continue }
            events.append(.cancelled(number: entry.alert.number, kind: kind, at: time))
            if kind == .hrHigh || kind == .hrLow, breaches.values.contains(where: { $0[kind] != nil }) { quietBreaches.insert(kind) }
            if kind.isCollapse { collapse = .quiet }
        }
        // A false alarm is no evidence for what comes next.
        breachConfirmed = [:]
        return events
    }

    // MARK: State

    private struct Breach: Sendable {
        /// The first out-of-range sample of the current episode.
        var since: Timestamp
    }

    private struct OpenAlert: Sendable {
        var alert: VitalsAlert
        /// Valid samples have been in range since then.
        var inRangeSince: Timestamp?
        var followUps = 0
        var nextFollowUp: Timestamp
    }

    /// Where the collapse judgement is.
    private enum Collapse: Sendable {
        case watching
        /// "Are you OK?" is out, unanswered the alert goes out at the deadline.
        case asking(deadline: Timestamp)
        /// A collapse alert is open.
        case alerted
        /// Answered or cancelled: quiet until the signal comes back or the runner moves.
        case quiet
    }

    private struct Episode: Sendable {
        var since: Timestamp
        var strap: String
        var arrhythmic: Bool
        var warned = false
    }

    // MARK: Breaches

    private func isBeyond(_ bpm: Int, _ kind: AlertKind) -> Bool {
        kind == .hrHigh ? bpm > rules.highBpm : bpm < rules.lowBpm
    }

    private func isInRange(_ bpm: Int) -> Bool {
        bpm >= rules.lowBpm && bpm <= rules.highBpm
    }

    private mutating func judge(_ sample: HeartRateSample, kind: AlertKind, strap: StrapSignal, id: String, mayConfirm: Bool) -> [SafetyEvent] {
        let t = sample.time
        let beyond = isBeyond(sample.bpm, kind)
        let fresh = strap.recent.filter { $0.stretch == strap.stretch && !$0.frozen }
        let window = fresh.filter { t.seconds(since: $0.time) <= rules.confirmWindowSeconds }
        let beyondCount = window.count { isBeyond($0.sample.bpm, kind) }
        if beyond {
            if breaches[id, default: [:]][kind] == nil { breaches[id, default: [:]][kind] = Breach(since: t) }
        } else if beyondCount == 0 {
            // A whole window back in range: the episode (or the artefact) is over, and a
            // cancelled one's kind is armed again.
            breaches[id]?[kind] = nil
            quietBreaches.remove(kind)
        }

        var events = rearm(kind, inRange: isInRange(sample.bpm), at: t)
        guard beyond, mayConfirm, open[kind] == nil, !quietBreaches.contains(kind), let breach = breaches[id]?[kind] else { return events }
        let bySamples = beyondCount >= rules.confirmSamples && beyondCount * 2 > window.count
        // The samples since the last one in range, all out of range: the first and the newest at
        // least `minimumBreachSeconds` apart (older in-range samples in the window do not outvote it).
        let run = fresh.reversed().prefix { isBeyond($0.sample.bpm, kind) }
        let byDuration = run.count >= 2 && t.seconds(since: run.last!.time) >= SOSRules.minimumBreachSeconds
        guard bySamples || byDuration else { return events }
        events.append(raise(kind, firstOutOfRange: breach.since, at: t))
        breachConfirmed[id] = t
        return events
    }

    /// Keeps track of a breach alert's return to range ([low, high], not merely this kind's
    /// side of it); closes it after `rearmSeconds`.
    private mutating func rearm(_ kind: AlertKind, inRange: Bool, at t: Timestamp) -> [SafetyEvent] {
        guard var entry = open[kind] else { return [] }
        guard inRange else {
            entry.inRangeSince = nil
            open[kind] = entry
            return []
        }
        let since = entry.inRangeSince ?? t
        entry.inRangeSince = since
        open[kind] = entry
        guard t.seconds(since: since) >= rules.rearmSeconds else { return [] }
        return close(kind, at: t)
    }

    private mutating func close(_ kind: AlertKind, at t: Timestamp) -> [SafetyEvent] {
        guard let entry = open.removeValue(forKey: kind) else { return [] }
        for id in breaches.keys { breaches[id]?[kind] = nil }
        return [.resolved(number: entry.alert.number, kind: kind, at: t, heartRate: straps[activeStrap]?.lastValid?.bpm)]
    }

    // MARK: Collapse

    /// The signal of all straps together: live where any is live, else the newest strap's.
    private func overallSignal(at now: Timestamp) -> (signal: HeartSignal, strap: String) {
        var newest: (signal: HeartSignal, strap: String) = (.absent, activeStrap)
        for (id, strap) in straps {
            let signal = strap.signal(at: now)
            if case .live = signal { return (signal, id) }
            if id == activeStrap { newest = (signal, id) }
        }
        return newest
    }

    /// A strap not heard for a while, while another one is, was swapped out: forgotten.
    private mutating func forgetSwappedStraps(at now: Timestamp) {
        guard straps.count > 1 else { return }
        straps = straps.filter { id, strap in
            id == activeStrap || (strap.lastNotification.map { now.seconds(since: $0) < SOSRules.strapSwappedSeconds } ?? false)
        }
        breaches = breaches.filter { straps[$0.key] != nil }
    }

    private mutating func judgeCollapse(at now: Timestamp) -> [SafetyEvent] {
        let (signal, strapID) = overallSignal(at: now)
        let body = motion.state(at: now)
        var events: [SafetyEvent] = []
        guard case .abnormal(let reason, let since) = signal else {
            // Live again (or no strap at all): the episode is over.
            if episode != nil, case .live = signal { events += clear(.abnormal, at: now) }
            episode = nil
            return events + heartOrBodyBack(body: body, live: { if case .live = signal { true } else { false } }(), at: now)
        }
        if episode == nil || episode!.strap != strapID || since < episode!.since {
            episode = Episode(since: since, strap: strapID, arrhythmic: reason.isArrhythmic)
        }
        if reason.isArrhythmic { episode!.arrhythmic = true }
        let onset = episode!.since

        if body.isMoving {
            events += heartOrBodyBack(body: body, live: false, at: now)
            if !episode!.warned {
                episode!.warned = true
                faults[.abnormal] = onset
                events.append(.warning(SensorWarning(fault: .abnormal, time: now, since: onset, reason: reason)))
            }
            return events
        }
        switch collapse {
        case .alerted, .quiet:
            return events
        case .asking(let deadline):
            // The body seen stopped while asking, with strong evidence: no need to wait.
            if now >= deadline || (body == .stopped && hasStrongEvidence(before: onset, strap: strapID)) {
                collapse = .alerted
                let kind: AlertKind = hasStrongEvidence(before: onset, strap: strapID) ? .hrSignalLost : .noSignalNoMotion
                events.append(raise(kind, firstOutOfRange: onset, at: now))
            }
            return events
        case .watching:
            break
        }
        let strong = hasStrongEvidence(before: onset, strap: strapID)
        switch body {
        case .stopped:
            // A body that stops long after the signal turned kept going meanwhile: no collapse
            // then, however the signal looked before (a slipping strap reads half the rate).
            let stoppedAt = motion.stoppedSince ?? onset
            if strong, stoppedAt.seconds(since: onset) <= SOSRules.collapseAfterSeconds {
                collapse = .alerted
                return events + [raise(.hrSignalLost, firstOutOfRange: onset, at: now)]
            }
            // Together: the body stopped up to `collapseWindowSeconds` before the signal turned
            // (standing, then the heart fails) or up to `collapseAfterSeconds` after it.
            let gap = stoppedAt.seconds(since: onset)
            let together = gap <= SOSRules.collapseAfterSeconds && -gap <= rules.collapseWindowSeconds
            let slowing = gap <= SOSRules.collapseAfterSeconds && (straps[strapID]?.showsSlowing(before: onset) ?? false)
            let fallback = gap <= rules.noSignalNoMotionSeconds
                && now.seconds(since: max(onset, stoppedAt)) >= rules.noSignalNoMotionSeconds
            if together || slowing || fallback {
                events += ask(since: onset, at: now)
            }
        case .unknown:
            if strong { events += ask(since: onset, at: now) }
        case .atPace, .slowing:
            break
        }
        return events
    }

    private mutating func ask(since: Timestamp, at now: Timestamp) -> [SafetyEvent] {
        let deadline = now.adding(seconds: rules.collapseAskSeconds)
        collapse = .asking(deadline: deadline)
        return [.askAreYouOK(since: since, at: now, deadline: deadline)]
    }

    /// The signal is live or the body moves: a question is withdrawn, a quiet watcher is armed
    /// again, and an open collapse resolves once both are back.
    private mutating func heartOrBodyBack(body: Motion, live: Bool, at now: Timestamp) -> [SafetyEvent] {
        guard live || body.isMoving else { return [] }
        switch collapse {
        case .asking:
            collapse = .watching
            return [.askOver(at: now, answered: false)]
        case .quiet:
            collapse = .watching
            return []
        case .alerted:
            guard live, body.isMoving else { return [] }
            collapse = .watching
            return close(.hrSignalLost, at: now) + close(.noSignalNoMotion, at: now)
        case .watching:
            return []
        }
    }

    /// A breach confirmed (and not cancelled) within `evidenceWindowSeconds` before `onset`, an
    /// arrhythmic episode, or a fall of `evidenceShare` of the rate on that strap.
    private func hasStrongEvidence(before onset: Timestamp, strap id: String) -> Bool {
        if episode?.arrhythmic == true { return true }
        if let confirmed = breachConfirmed[id], onset.seconds(since: confirmed) <= SOSRules.evidenceWindowSeconds { return true }
        return straps[id]?.showsFailingHeart(before: onset, rules: rules) ?? false
    }

    // MARK: Alerts

    private mutating func raise(_ kind: AlertKind, firstOutOfRange: Timestamp, at t: Timestamp) -> SafetyEvent {
        raised += 1
        let strap = straps[activeStrap]
        let trendSamples = (strap?.recent ?? []).lazy
            .filter { !$0.frozen && t.seconds(since: $0.time) <= SOSRules.trendWindowSeconds }.map(\.sample)
        let alert = VitalsAlert(
            number: raised, kind: kind, firstOutOfRange: firstOutOfRange, raisedAt: t,
            heartRate: strap?.lastValid?.bpm, heartRateTime: strap?.lastValid?.time,
            trend: HeartRateTrend(Array(trendSamples)),
            position: position)
        open[kind] = OpenAlert(alert: alert, nextFollowUp: t.adding(seconds: rules.followUpEverySeconds))
        return .alert(alert)
    }

    private mutating func followUps(at now: Timestamp) -> [SafetyEvent] {
        guard rules.followUpEverySeconds > 0, !open.isEmpty else { return [] }
        var events: [SafetyEvent] = []
        for kind in AlertKind.allCases {
            guard var entry = open[kind], now >= entry.nextFollowUp,
                  entry.nextFollowUp.seconds(since: entry.alert.raisedAt) <= rules.followUpForSeconds
            else { continue }
            entry.followUps += 1
            // One follow-up per period even after a long silence: the newest position is the news.
            while entry.nextFollowUp <= now { entry.nextFollowUp = entry.nextFollowUp.adding(seconds: rules.followUpEverySeconds) }
            open[kind] = entry
            events.append(.followUp(number: entry.alert.number, kind: kind, sequence: entry.followUps, at: now,
                                    heartRate: straps[activeStrap]?.lastValid?.bpm, position: position))
        }
        return events
    }

    // MARK: Sensor faults

    private mutating func raiseFaultIfDue(_ fault: SensorFault, since: Timestamp, at now: Timestamp, after seconds: Double? = nil) -> [SafetyEvent] {
        guard faults[fault] == nil, now.seconds(since: since) >= (seconds ?? rules.faultAfterSeconds) else { return [] }
        faults[fault] = since
        return [.warning(SensorWarning(fault: fault, time: now, since: since))]
    }

    private mutating func clear(_ fault: SensorFault, at now: Timestamp) -> [SafetyEvent] {
        guard let since = faults.removeValue(forKey: fault) else { return [] }
        if fault != .insufficient && fault != .abnormal { coverageSince = now }
        return [.warningCleared(SensorWarning(fault: fault, time: now, since: since))]
    }

    /// `hr_stale`: the strap repeats itself.
    private mutating func frozenFault(_ strap: StrapSignal, at t: Timestamp) -> [SafetyEvent] {
        guard let since = strap.frozenSince else { return clear(.stale, at: t) }
        guard faults[.stale] == nil else { return [] }
        faults[.stale] = since
        return [.warning(SensorWarning(fault: .stale, time: t, since: since))]
    }

    /// `hr_insufficient`: notifications arrive, yet the valid ones of the last
    /// `insufficientWindowSeconds` (since the last fault that said so itself ended) would mostly
    /// not confirm a breach within the budget. For each valid sample as the first out of range,
    /// is there a later one of the same stretch that confirms (by count or by duration) within
    /// `confirmationBudgetSeconds`? Raised when fewer than half could, cleared when three quarters
    /// could. Not judged while another fault already says the watcher is blind.
    private mutating func judgeInsufficient(_ strap: StrapSignal, at now: Timestamp) -> [SafetyEvent] {
        let windowSeconds = SOSRules.insufficientWindowSeconds
        let budget = SOSRules.confirmationBudgetSeconds
        guard let coverageSince, now.seconds(since: coverageSince) >= windowSeconds else { return [] }
        let others: [SensorFault] = [.noData, .noContact, .stale, .noStrap]
        if others.contains(where: { faults[$0] != nil }) { return [] }
        let samples = strap.recent.filter { $0.time >= coverageSince && now.seconds(since: $0.time) <= windowSeconds }
        var starts = 0
        var confirmable = 0
        for (i, first) in samples.enumerated() where now.seconds(since: first.time) >= budget {
            starts += 1
            var count = 1
            for later in samples[(i + 1)...] {
                guard later.stretch == first.stretch, later.time.seconds(since: first.time) <= budget else { break }
                count += 1
                let span = later.time.seconds(since: first.time)
                if (count >= rules.confirmSamples && span <= rules.confirmWindowSeconds) || span >= SOSRules.minimumBreachSeconds {
                    confirmable += 1
                    break
                }
            }
        }
        // Too few samples to be a start at all is the worst case.
        let share = starts == 0 ? 0 : Double(confirmable) / Double(starts)
        if faults[.insufficient] == nil, share < 0.5 {
            faults[.insufficient] = now
            return [.warning(SensorWarning(fault: .insufficient, time: now, since: samples.first?.time ?? now))]
        }
        if faults[.insufficient] != nil, share >= 0.75 { return clear(.insufficient, at: now) }
        return []
    }
}

extension AlertKind {
    /// Raised by the collapse rules (signal and motion), not by a threshold.
    var isCollapse: Bool { self == .hrSignalLost || self == .noSignalNoMotion }
}
