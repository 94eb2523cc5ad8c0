/// The SOS rules: heart-rate samples, positions, motion and time in; alerts, warnings and
/// follow-ups out. Pure: the daemon's SOS lane and `pacerctl replay` feed it alike.
///
/// Time is whatever clock the samples carry (the run's timeline in replay, the monotonic clock in
/// the daemon); `advance(to:)` tells it time passed without a sample, which is how it notices a
/// strap that went silent.
///
/// The rules (thresholds in `SOSRules`):
/// - **Breach** (`hr_high`, `hr_low`): confirmed by `confirmSamples` out-of-range samples in the
///   window, the majority and the newest out of range; or by an episode of at least two samples,
///   all out of range, the first and the newest at least `minimumBreachSeconds` apart. Only samples since the strap was last heard again count ("fresh
///   history"), so readings from before a reconnect never confirm a new breach.
/// - **Signal lost** (`hr_signal_lost`): no contact, 0 bpm, or no notification for
///   `silenceSeconds`; lost once no valid reading came for `lossConfirmSeconds` from the first
///   invalid or missing sample. It is an alert only when, in the `evidenceWindowSeconds` before
///   the loss, there was strong evidence: a breach confirmed then (its alert raised and not
///   cancelled), or a fall of `evidenceFallBpm` on median-of-3 filtered
///   values, so that one artefact is never a fall. A strap taken off without such evidence is a
///   sensor warning, and, while a run records and the runner stands still, a question.
/// - **"Are you OK?"** (`no_signal_no_motion`): while a run records, no valid live signal and no
///   movement began together (within `noSignalNoMotionSeconds` of each other) and lasted
///   `noSignalNoMotionSeconds`: the runner is asked, and the alert goes out unless answered
///   within `askTimeoutSeconds`. Outside a run there is no motion to judge: a warning only.
/// - **Resolution**: a breach resolves once valid readings are back inside [low, high] for
///   `rearmSeconds`; a lost signal or man down only once the runner moves again with a valid,
///   live signal, or cancels.
/// - **Honest coverage**: stale readings (the same value without RR intervals for `stale_s`) are
///   no signal for man down and never evidence; readings above 250 bpm are neither valid nor a
///   loss; `hr_insufficient` is warned when the valid samples that arrive could not confirm a
///   breach within `confirmationBudgetSeconds`; `hr_no_strap` when none was heard since start.
public struct VitalsWatcher: Sendable {
    public private(set) var rules: SOSRules

    /// A valid sample, with the stretch of uninterrupted signal it belongs to.
    private struct Seen: Sendable {
        var sample: HeartRateSample
        /// Bumped whenever the signal was lost in between: samples of an older stretch are not
        /// fresh history.
        var stretch: Int
        var stale: Bool
        var time: Timestamp { sample.time }
    }

    /// Valid samples of the last `trendWindowSeconds` (at least the confirmation window).
    private var recent: [Seen] = []
    private var stretch = 0
    private var breaches: [AlertKind: Breach] = [:]
    private var open: [AlertKind: OpenAlert] = [:]
    private var raised = 0

    private var watchingSince: Timestamp?
    /// Since when coverage can be judged: the first notification, or the end of the last fault
    /// that already said the watcher was blind.
    private var coverageSince: Timestamp?
    private var lastNotification: Timestamp?
    /// Times of the last few notifications, for the strap's usual interval.
    private var notificationTimes: [Timestamp] = []
    private var lastValid: HeartRateSample?
    /// The last valid reading that was not a stale repeat: the live signal, for man down.
    private var lastLive: Timestamp?
    private var contactLostSince: Timestamp?
    private var repeatedSince: Timestamp?
    private var faults: [SensorFault: Timestamp] = [:]
    /// When the last breach was confirmed (its alert raised): evidence for a loss soon after.
    private var lastBreachConfirmation: Timestamp?
    private var loss: Loss?
    private var ask: Ask?

    private var position: AlertPosition?
    /// The tracker said the runner stopped (auto-pause) at this time; nil while moving.
    private var stoppedSince: Timestamp?
    /// The GPS fix was lost at this time; nil while there is one.
    private var gpsLostSince: Timestamp?
    private var recording = false
    private var paused = false
    /// A run starts with the runner standing (the tracker's first state): still from the first
    /// position on, until the tracker says moving.
    private var awaitingFirstPosition = false

    public init(rules: SOSRules) {
        self.rules = rules
    }

    /// New rules apply from the next sample; open alerts stay open.
    public mutating func update(rules newRules: SOSRules) {
        rules = newRules
    }

    /// The alerts raised and not yet resolved or cancelled, oldest first.
    public var openAlerts: [VitalsAlert] {
        open.values.filter { !$0.cancelled }.map(\.alert).sorted { $0.number < $1.number }
    }

    public var activeFaults: [SensorFault] { SensorFault.allCases.filter { faults[$0] != nil } }

    /// The "Are you OK?" question waiting for an answer: its deadline.
    public var pendingAskDeadline: Timestamp? { ask?.answered == false ? ask?.deadline : nil }

    // MARK: Inputs

    /// Monitoring starts: a strap that is never heard from is warned about (`hr_no_strap`).
    public mutating func start(at time: Timestamp) {
        if watchingSince == nil { watchingSince = time }
    }

    /// One notification from the strap.
    public mutating func ingest(_ sample: HeartRateSample) -> [SafetyEvent] {
        guard rules.enabled else { return [] }
        let t = sample.time
        var events = advance(to: t)
        lastNotification = t
        if coverageSince == nil { coverageSince = t }
        notificationTimes.append(t)
        if notificationTimes.count > 9 { notificationTimes.removeFirst(notificationTimes.count - 9) }
        events += clear(.noData, at: t)
        events += clear(.noStrap, at: t)

        if sample.isSignalLoss {
            if contactLostSince == nil { contactLostSince = t }
            repeatedSince = nil
            events += clear(.stale, at: t)
            if loss == nil { loss = Loss(since: t, byContact: true) }
            events += judgeLoss(at: t)
            events += raiseFaultIfDue(.noContact, since: contactLostSince!, at: t)
            return events
        }
        guard sample.isValid else { return events }   // an artefact above 250 bpm: neither

        contactLostSince = nil
        events += clear(.noContact, at: t)
        if let ended = loss {
            loss = nil
            // Heard again after losing contact, or after a silence long enough to be a reconnect:
            // what came before is not fresh history for a new breach. (Two or three lost
            // notifications on a lossy link are neither.)
            if ended.byContact || t.seconds(since: ended.since) >= rules.faultAfterSeconds {
                stretch += 1
                breaches = [:]
            }
        }
        events += checkStale(sample)
        let stale = faults[.stale] != nil
        lastValid = sample
        if !stale { lastLive = t }
        recent.append(Seen(sample: sample, stretch: stretch, stale: stale))
        let horizon = max(SOSRules.trendWindowSeconds, rules.confirmWindowSeconds, SOSRules.evidenceWindowSeconds + 2,
                          SOSRules.insufficientWindowSeconds)
        if let drop = recent.firstIndex(where: { t.seconds(since: $0.time) <= horizon }), drop > 0 {
            recent.removeFirst(drop)
        }

        // A frozen strap says nothing about the heart: no breach is judged on it.
        if !stale {
            for kind in [AlertKind.hrHigh, .hrLow] {
                events += judge(sample, kind: kind)
            }
        }
        events += judgeInsufficient(at: t)
        if !stale { events += signalIsBack(at: t) }
        return events
    }

    /// A usable GPS fix: the position alerts carry. Motion comes from `observe(moving:at:)`.
    public mutating func observe(position newPosition: AlertPosition) {
        position = newPosition
        if awaitingFirstPosition {
            awaitingFirstPosition = false
            if stoppedSince == nil { stoppedSince = newPosition.time }
        }
    }

    /// The tracker's motion decisions: moving, or stopped (auto-paused) since `time`.
    public mutating func observe(moving: Bool, at time: Timestamp) {
        awaitingFirstPosition = false
        if moving { stoppedSince = nil } else if stoppedSince == nil { stoppedSince = time }
    }

    /// The GPS fix was lost: there is no evidence of movement until it is back.
    public mutating func gpsLost(at time: Timestamp) {
        if gpsLostSince == nil { gpsLostSince = time }
    }

    public mutating func gpsRegained() {
        gpsLostSince = nil
    }

    /// Since when nothing shows the runner moving: stopped, or no GPS to tell.
    private var stillSince: Timestamp? {
        switch (stoppedSince, gpsLostSince) {
        case (let a?, let b?): min(a, b)
        case (let a?, nil): a
        case (nil, let b?): b
        case (nil, nil): nil
        }
    }

    /// The runner is seen moving (a recording run whose tracker says so).
    private var isMoving: Bool { recording && !awaitingFirstPosition && stillSince == nil }

    /// The tracker's decisions for one input: motion and GPS loss (fixes give `observe(position:)`).
    public mutating func observe(_ events: [TrackerEvent]) {
        for event in events {
            switch event {
            case .motion(let moving, let time): observe(moving: moving, at: time)
            case .gpsLost(let time): gpsLost(at: time)
            case .gpsRegained: gpsRegained()
            default: break
            }
        }
    }

    /// Whether a run is recording and whether the runner paused it: "man down" is only judged
    /// while a run records and is not paused by hand.
    public mutating func runState(recording isRecording: Bool, paused isPaused: Bool) {
        if isRecording, !recording { awaitingFirstPosition = true }
        recording = isRecording
        paused = isPaused
        if !isRecording {
            stoppedSince = nil
            gpsLostSince = nil
            awaitingFirstPosition = false
        }
    }

    /// Time passed (a fix, a tick): sensor silence, a lost signal, "man down" and follow-ups are
    /// judged here.
    public mutating func advance(to now: Timestamp) -> [SafetyEvent] {
        // A manual alert is followed up even with vital monitoring off.
        guard rules.enabled else { return followUps(at: now) }
        var events: [SafetyEvent] = []
        if let last = lastNotification {
            events += raiseFaultIfDue(.noData, since: last, at: now)
            if loss == nil, now.seconds(since: last) >= SOSRules.silenceSeconds {
                // Lost from the notification that should have come next.
                loss = Loss(since: last.adding(seconds: usualInterval), byContact: false)
            }
        } else if let watchingSince {
            events += raiseFaultIfDue(.noStrap, since: watchingSince, at: now, after: SOSRules.noStrapGraceSeconds)
        }
        if let contactLostSince {
            events += raiseFaultIfDue(.noContact, since: contactLostSince, at: now)
        }
        events += judgeLoss(at: now)
        events += judgeNoSignalNoMotion(at: now)
        events += followUps(at: now)
        return events
    }

    /// A very long press or `pacerctl sos raise`: raised at once, no confirmation, and whether or
    /// not vital monitoring is enabled (a person asking for help is never refused). A manual
    /// alert already open is not raised twice.
    public mutating func raiseManual(at time: Timestamp) -> [SafetyEvent] {
        if let existing = open[.manual], !existing.cancelled { return [] }
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
    }

    /// The runner answered "Are you OK?" (the button). Nothing happens when nothing was asked.
    public mutating func answerAsk(at time: Timestamp) -> [SafetyEvent] {
        guard var pending = ask, !pending.answered else { return [] }
        pending.answered = true
        ask = pending
        return [.askOver(at: time, answered: true)]
    }

    /// `pacerctl sos cancel`: every open alert is called off, and a pending "Are you OK?" is
    /// answered. A medical breach that goes on does not raise again until its value has been back
    /// in range (re-armed) — the runner said so.
    public mutating func cancel(at time: Timestamp) -> [SafetyEvent] {
        var events = answerAsk(at: time)
        for kind in AlertKind.allCases {
            guard var entry = open[kind], !entry.cancelled else { continue }
            entry.cancelled = true
            events.append(.cancelled(number: entry.alert.number, kind: kind, at: time))
            if kind == .manual { open[kind] = nil } else { open[kind] = entry }
        }
        lastBreachConfirmation = nil
        return events
    }

    // MARK: Breaches

    private struct Breach: Sendable {
        /// The first out-of-range sample of the current episode.
        var since: Timestamp
    }

    private struct OpenAlert: Sendable {
        var alert: VitalsAlert
        var cancelled = false
        /// Valid samples have been in range since then.
        var inRangeSince: Timestamp?
        var followUps = 0
        var nextFollowUp: Timestamp
    }

    /// A lost signal: since the first invalid or missing sample.
    private struct Loss: Sendable {
        var since: Timestamp
        /// The strap said so (no contact, 0 bpm), rather than falling silent.
        var byContact: Bool
        /// Judged (alert or not) once it lasted `lossConfirmSeconds`.
        var judged = false
    }

    private struct Ask: Sendable {
        var since: Timestamp
        var deadline: Timestamp
        var answered = false
    }

    private func isBeyond(_ bpm: Int, _ kind: AlertKind) -> Bool {
        kind == .hrHigh ? bpm > rules.highBpm : bpm < rules.lowBpm
    }

    private func isInRange(_ bpm: Int) -> Bool {
        bpm >= rules.lowBpm && bpm <= rules.highBpm
    }

    private mutating func judge(_ sample: HeartRateSample, kind: AlertKind) -> [SafetyEvent] {
        let t = sample.time
        let beyond = isBeyond(sample.bpm, kind)
        let window = recent.filter { $0.stretch == stretch && !$0.stale && t.seconds(since: $0.time) <= rules.confirmWindowSeconds }
        let beyondCount = window.count { isBeyond($0.sample.bpm, kind) }
        if beyond {
            if breaches[kind] == nil { breaches[kind] = Breach(since: t) }
        } else if beyondCount == 0 {
            // A whole window back in range: the episode (or the artefact) is over.
            breaches[kind] = nil
        }

        var events = rearm(kind, inRange: isInRange(sample.bpm), at: t)
        guard beyond, open[kind] == nil, let breach = breaches[kind] else { return events }
        let bySamples = beyondCount >= rules.confirmSamples && beyondCount * 2 > window.count
        // The samples since the last one in range, all out of range: the first and the newest at
        // least `minimumBreachSeconds` apart (older in-range samples in the window do not outvote it).
        let fresh = recent.filter { $0.stretch == stretch && !$0.stale }
        let run = fresh.reversed().prefix { isBeyond($0.sample.bpm, kind) }
        let byDuration = run.count >= 2 && t.seconds(since: run.last!.time) >= SOSRules.minimumBreachSeconds
        guard bySamples || byDuration else { return events }
        events.append(raise(kind, firstOutOfRange: breach.since, at: t))
        lastBreachConfirmation = t
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
        breaches[kind] = nil
        // A cancelled alert was already called off; it only re-arms, quietly.
        if entry.cancelled { return [] }
        return [.resolved(number: entry.alert.number, kind: kind, at: t, heartRate: lastValid?.bpm)]
    }

    /// A valid, live reading: a question about a lost signal is over, and a lost-signal or man
    /// down alert resolves once the runner is also seen moving.
    private mutating func signalIsBack(at t: Timestamp) -> [SafetyEvent] {
        var events: [SafetyEvent] = []
        if let pending = ask {
            ask = nil
            if !pending.answered { events.append(.askOver(at: t, answered: false)) }
        }
        guard isMoving else { return events }
        events += close(.hrSignalLost, at: t)
        events += close(.noSignalNoMotion, at: t)
        return events
    }

    // MARK: Lost signal

    /// The strap's usual interval between notifications (median of the last few), 1 s until known.
    private var usualInterval: Double {
        guard notificationTimes.count >= 3 else { return 1 }
        let gaps = zip(notificationTimes.dropFirst(), notificationTimes).map { $0.seconds(since: $1) }.sorted()
        return min(max(gaps[gaps.count / 2], 0.1), SOSRules.silenceSeconds)
    }

    private mutating func judgeLoss(at now: Timestamp) -> [SafetyEvent] {
        guard var current = loss, !current.judged, now.seconds(since: current.since) >= SOSRules.lossConfirmSeconds else { return [] }
        current.judged = true
        loss = current
        guard open[.hrSignalLost] == nil, hasStrongEvidence(before: current.since) else { return [] }
        return [raise(.hrSignalLost, firstOutOfRange: current.since, at: now)]
    }

    /// A breach confirmed, or a fall of `evidenceFallBpm` on median-of-3 values, within the
    /// `evidenceWindowSeconds` before `lossTime`. Stale readings are never evidence. A breach
    /// confirmed long before (a low heart rate going on for minutes) is already an open alert
    /// whose follow-ups tell of the silence: the loss adds no new alert.
    private func hasStrongEvidence(before lossTime: Timestamp) -> Bool {
        let window = SOSRules.evidenceWindowSeconds
        if let confirmed = lastBreachConfirmation, lossTime.seconds(since: confirmed) <= window { return true }
        // The filter's first values reach a little before the window, so its start is filtered too.
        let samples = recent.filter { !$0.stale && $0.time < lossTime && lossTime.seconds(since: $0.time) <= window + 2 }
        guard samples.count >= 3 else { return false }
        var filtered: [Int] = []
        for i in 2..<samples.count where lossTime.seconds(since: samples[i].time) <= window {
            let three = [samples[i - 2].sample.bpm, samples[i - 1].sample.bpm, samples[i].sample.bpm].sorted()
            filtered.append(three[1])
        }
        guard var highest = filtered.first else { return false }
        for value in filtered.dropFirst() {
            if highest - value >= SOSRules.evidenceFallBpm { return true }
            highest = max(highest, value)
        }
        return false
    }

    // MARK: Man down

    /// "Man down": the signal and the movement stopped together. A strap that went silent long
    /// before the runner stopped is a missing sensor, not an incident (the warning said so), and
    /// asking then would cry wolf at every later stop. The runner is asked first; the alert goes
    /// out when nobody answers.
    private mutating func judgeNoSignalNoMotion(at now: Timestamp) -> [SafetyEvent] {
        guard recording, !paused, open[.noSignalNoMotion] == nil, open[.hrSignalLost] == nil,
              let lastLive, let stillSince,
              now.seconds(since: lastLive) >= rules.faultAfterSeconds,
              stillSince.seconds(since: lastLive) <= rules.noSignalNoMotionSeconds
        else {
            // Moving again (or the run ended): the question is withdrawn.
            if let pending = ask, !(recording && !paused && stillSince != nil) {
                ask = nil
                if !pending.answered { return [.askOver(at: now, answered: false)] }
            }
            return []
        }
        // Both at once: from the later of the two.
        let since = max(lastLive, stillSince)
        guard now.seconds(since: since) >= rules.noSignalNoMotionSeconds else { return [] }
        guard let pending = ask else {
            let deadline = now.adding(seconds: rules.askTimeoutSeconds)
            ask = Ask(since: since, deadline: deadline)
            return [.askAreYouOK(since: since, at: now, deadline: deadline)]
        }
        guard !pending.answered, now >= pending.deadline else { return [] }
        ask = nil
        return [raise(.noSignalNoMotion, firstOutOfRange: pending.since, at: now)]
    }

    private mutating func raise(_ kind: AlertKind, firstOutOfRange: Timestamp, at t: Timestamp) -> SafetyEvent {
        raised += 1
        let trendSamples = recent.lazy.filter { !$0.stale && t.seconds(since: $0.time) <= SOSRules.trendWindowSeconds }.map(\.sample)
        let alert = VitalsAlert(
            number: raised, kind: kind, firstOutOfRange: firstOutOfRange, raisedAt: t,
            heartRate: lastValid?.bpm, heartRateTime: lastValid?.time,
            trend: HeartRateTrend(Array(trendSamples)),
            position: position)
        open[kind] = OpenAlert(alert: alert, nextFollowUp: t.adding(seconds: rules.followUpEverySeconds))
        return .alert(alert)
    }

    private mutating func followUps(at now: Timestamp) -> [SafetyEvent] {
        guard rules.followUpEverySeconds > 0, !open.isEmpty else { return [] }
        var events: [SafetyEvent] = []
        for kind in AlertKind.allCases {
            guard var entry = open[kind], !entry.cancelled, now >= entry.nextFollowUp,
                  entry.nextFollowUp.seconds(since: entry.alert.raisedAt) <= rules.followUpForSeconds
            else { continue }
            entry.followUps += 1
            // One follow-up per period even after a long silence: the newest position is the news.
            while entry.nextFollowUp <= now { entry.nextFollowUp = entry.nextFollowUp.adding(seconds: rules.followUpEverySeconds) }
            open[kind] = entry
            events.append(.followUp(number: entry.alert.number, kind: kind, sequence: entry.followUps, at: now,
                                    heartRate: lastValid?.bpm, position: position))
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
        if fault != .insufficient { coverageSince = now }
        return [.warningCleared(SensorWarning(fault: fault, time: now, since: since))]
    }

    private mutating func checkStale(_ sample: HeartRateSample) -> [SafetyEvent] {
        guard sample.rrIntervalsMs.isEmpty, let previous = lastValid, previous.bpm == sample.bpm,
              previous.rrIntervalsMs.isEmpty
        else {
            repeatedSince = nil
            return clear(.stale, at: sample.time)
        }
        if repeatedSince == nil { repeatedSince = previous.time }
        guard faults[.stale] == nil, sample.time.seconds(since: repeatedSince!) >= rules.staleAfterSeconds else { return [] }
        let since = repeatedSince!
        faults[.stale] = since
        // The repeats since it began were never live: no evidence, no signal.
        if let lastLive, lastLive > since { self.lastLive = since }
        for i in recent.indices where recent[i].time >= since { recent[i].stale = true }
        return [.warning(SensorWarning(fault: .stale, time: sample.time, since: since))]
    }

    /// `hr_insufficient`: notifications arrive, yet the valid ones of the last
    /// `insufficientWindowSeconds` (since the last fault that said so itself ended) would mostly
    /// not confirm a breach within the budget. For each
    /// valid sample as the first out of range, is there a later one of the same stretch that
    /// confirms (by count or by duration) within `confirmationBudgetSeconds`? Raised when fewer
    /// than half could, cleared when three quarters could. Not judged while another fault already
    /// says the watcher is blind.
    private mutating func judgeInsufficient(at now: Timestamp) -> [SafetyEvent] {
        let windowSeconds = SOSRules.insufficientWindowSeconds
        let budget = SOSRules.confirmationBudgetSeconds
        guard let coverageSince, now.seconds(since: coverageSince) >= windowSeconds else { return [] }
        let others: [SensorFault] = [.noData, .noContact, .stale, .noStrap]
        if others.contains(where: { faults[$0] != nil }) { return [] }
        let samples = recent.filter { $0.time >= coverageSince && now.seconds(since: $0.time) <= windowSeconds }
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
