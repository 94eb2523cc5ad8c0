/// The SOS rules: heart-rate samples, positions, motion and time in; alerts, warnings and
/// follow-ups out. Pure: the daemon's SOS lane and `pacerctl replay` feed it alike.
///
/// Time is whatever clock the samples carry (the run's timeline in replay, the monotonic clock in
/// the daemon); `advance(to:)` tells it time passed without a sample, which is how it notices a
/// strap that went silent.
public struct VitalsWatcher: Sendable {
    public private(set) var rules: SOSRules

    /// Valid samples of the last `trendWindowSeconds` (at least the confirmation window).
    private var recent: [HeartRateSample] = []
    private var breaches: [AlertKind: Breach] = [:]
    private var open: [AlertKind: OpenAlert] = [:]
    private var raised = 0

    private var lastNotification: Timestamp?
    private var lastValid: HeartRateSample?
    private var contactLostSince: Timestamp?
    private var repeatedSince: Timestamp?
    private var faults: [SensorFault: Timestamp] = [:]

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

    // MARK: Inputs

    /// One notification from the strap.
    public mutating func ingest(_ sample: HeartRateSample) -> [SafetyEvent] {
        guard rules.enabled else { return [] }
        let t = sample.time
        var events = advance(to: t)
        lastNotification = t
        events += clear(.noData, at: t)

        guard sample.isValid else {
            if contactLostSince == nil { contactLostSince = t }
            repeatedSince = nil
            events += clear(.stale, at: t)
            events += raiseFaultIfDue(.noContact, since: contactLostSince!, at: t)
            return events
        }
        contactLostSince = nil
        events += clear(.noContact, at: t)
        events += checkStale(sample)
        lastValid = sample
        recent.append(sample)
        let horizon = max(SOSRules.trendWindowSeconds, rules.confirmWindowSeconds)
        if let drop = recent.firstIndex(where: { t.seconds(since: $0.time) <= horizon }), drop > 0 {
            recent.removeFirst(drop)
        }

        for kind in [AlertKind.hrHigh, .hrLow] {
            events += judge(sample, kind: kind)
        }
        // A valid reading ends a "man down": the heart is seen again.
        events += rearm(.noSignalNoMotion, inRange: true, at: t)
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

    /// Time passed (a fix, a tick): sensor silence, "man down" and follow-ups are judged here.
    public mutating func advance(to now: Timestamp) -> [SafetyEvent] {
        // A manual alert is followed up even with vital monitoring off.
        guard rules.enabled else { return followUps(at: now) }
        var events: [SafetyEvent] = []
        if let last = lastNotification {
            events += raiseFaultIfDue(.noData, since: last, at: now)
        }
        if let contactLostSince {
            events += raiseFaultIfDue(.noContact, since: contactLostSince, at: now)
        }
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

    /// `pacerctl sos cancel`: every open alert is called off. A medical breach that goes on does
    /// not raise again until its value has been back in range (re-armed) — the runner said so.
    public mutating func cancel(at time: Timestamp) -> [SafetyEvent] {
        var events: [SafetyEvent] = []
        for kind in AlertKind.allCases {
            guard var entry = open[kind], !entry.cancelled else { continue }
            entry.cancelled = true
            events.append(.cancelled(number: entry.alert.number, kind: kind, at: time))
            if kind == .manual { open[kind] = nil } else { open[kind] = entry }
        }
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

    private func isBeyond(_ bpm: Int, _ kind: AlertKind) -> Bool {
        kind == .hrHigh ? bpm > rules.highBpm : bpm < rules.lowBpm
    }

    private mutating func judge(_ sample: HeartRateSample, kind: AlertKind) -> [SafetyEvent] {
        let t = sample.time
        let beyond = isBeyond(sample.bpm, kind)
        let window = recent.filter { t.seconds(since: $0.time) <= rules.confirmWindowSeconds }
        let beyondCount = window.count { isBeyond($0.bpm, kind) }
        if beyond {
            if breaches[kind] == nil { breaches[kind] = Breach(since: t) }
        } else if beyondCount == 0 {
            // A whole window back in range: the episode (or the artefact) is over.
            breaches[kind] = nil
        }

        var events = rearm(kind, inRange: !beyond, at: t)
        guard beyond, open[kind] == nil, let breach = breaches[kind],
              beyondCount >= rules.confirmSamples, beyondCount * 2 > window.count
        else { return events }
        events.append(raise(kind, firstOutOfRange: breach.since, at: t))
        return events
    }

    /// Keeps track of an open alert's return to range; closes it after `rearmSeconds`.
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
        open[kind] = nil
        breaches[kind] = nil
        // A cancelled alert was already called off; it only re-arms, quietly.
        if entry.cancelled { return [] }
        return [.resolved(number: entry.alert.number, kind: kind, at: t, heartRate: lastValid?.bpm)]
    }

    /// "Man down": the signal and the movement stopped together. A strap that went silent long
    /// before the runner stopped is a missing sensor, not an incident (the warning said so), and
    /// raising then would cry wolf at every later stop.
    private mutating func judgeNoSignalNoMotion(at now: Timestamp) -> [SafetyEvent] {
        guard recording, !paused, open[.noSignalNoMotion] == nil,
              let lastValid, let stillSince,
              now.seconds(since: lastValid.time) >= rules.faultAfterSeconds,
              stillSince.seconds(since: lastValid.time) <= rules.noSignalNoMotionSeconds
        else { return [] }
        // Both at once: from the later of the two.
        let since = max(lastValid.time, stillSince)
        guard now.seconds(since: since) >= rules.noSignalNoMotionSeconds else { return [] }
        return [raise(.noSignalNoMotion, firstOutOfRange: since, at: now)]
    }

    private mutating func raise(_ kind: AlertKind, firstOutOfRange: Timestamp, at t: Timestamp) -> SafetyEvent {
        raised += 1
        let alert = VitalsAlert(
            number: raised, kind: kind, firstOutOfRange: firstOutOfRange, raisedAt: t,
            heartRate: lastValid?.bpm, heartRateTime: lastValid?.time,
            trend: HeartRateTrend(recent.filter { t.seconds(since: $0.time) <= SOSRules.trendWindowSeconds }),
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

    private mutating func raiseFaultIfDue(_ fault: SensorFault, since: Timestamp, at now: Timestamp) -> [SafetyEvent] {
        guard faults[fault] == nil, now.seconds(since: since) >= rules.faultAfterSeconds else { return [] }
        faults[fault] = since
        return [.warning(SensorWarning(fault: fault, time: now, since: since))]
    }

    private mutating func clear(_ fault: SensorFault, at now: Timestamp) -> [SafetyEvent] {
        guard let since = faults.removeValue(forKey: fault) else { return [] }
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
        faults[.stale] = repeatedSince!
        return [.warning(SensorWarning(fault: .stale, time: sample.time, since: repeatedSince!))]
    }
}
