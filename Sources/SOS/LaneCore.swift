import FoundationEssentials
import ModemManager
import PacerContract
import PacerCore

/// The SOS lane's decisions as a pure reducer: `handle(input, now:)` returns the actions to
/// carry out. It reads no clock (the thread reads both once per input and passes them), touches
/// no store, bus or thread; what it needs of an effect comes back as an input (`LaneCoreInput`).
/// So retries, deadlines, the commit cap, restarts and follow-ups are tested on injected time.
/// `LaneState` carries the actions out on the lane's thread.
struct LaneCore {
    private var settings: LaneSettings
    private var watcher: VitalsWatcher
    /// The channels this pacerd has: a target on another is failed (and retried) at once.
    private let channelNames: Set<AlertChannelName>
    /// Whether this pacerd can place voice calls (`[sos] call` needs ModemManager's Voice).
    private let canCall: Bool
    private let newUUID: () -> String

    /// The watcher's alert numbers and the UUIDs they were recorded under.
    private var uuids: [Int: String] = [:]
    /// Alerts left open by the previous pacerd (a crash or a stop while one was open): the new
    /// watcher does not know them, so without this `sos cancel` would say none is open while the
    /// store and the server show them open for ever (found by tools/soak). Numbered below 0 in
    /// `uuids`, never meeting the watcher's; only a cancel closes them.
    private var adopted: [(number: Int, kind: AlertKind)] = []
    /// Deliveries not yet acknowledged: their order, attempts, deadlines and retries.
    private var outbox: Outbox
    /// Per message (alert UUID and sequence): its deliveries and when it was raised, for the
    /// spoken confirmation.
    private var confirmations: [String: Confirmation] = [:]
    private var sequences: [String: Int] = [:]
    /// Alerts waiting for their commit's first outcome (`commitWaited`), by in-memory message id.
    private var raising: [Int64: PendingRaise] = [:]
    /// Follow-ups waiting for `messageStored`, by in-memory message id.
    private var storing: [Int64: PendingMessage] = [:]
    /// Alerts dispatched from memory while their commit still runs, by in-memory message id.
    private var committing: [Int64: PendingCommit] = [:]
    /// In-memory message ids whose commit finished late, and their ids in sos.db.
    private var committedIDs: [Int64: Int64] = [:]
    /// Ids of deliveries that could not be recorded: negative, so they never meet a stored one.
    private var lastInMemoryID: Int64 = 0

    private var wallMinusMonotonicMs: Int64?
    private var run: LaneRun?
    private var deviceBattery: Int?
    /// The HTTP status of the server's last refusal of an alert (4xx), until it takes one.
    private var serverRejects: Int?
    private var lastHeartRate: (bpm: Int, ns: UInt64)?
    private var sensor = HeartRateSensor()
    /// The lane's own reading of the run button, for the very long press only (the pipeline
    /// keeps short and long presses): an SOS never waits behind a busy pipeline.
    private var buttons: ButtonGestureClassifier
    /// Calls from placing until terminated, by alert UUID.
    private var calls: [String: ActiveCall] = [:]
    /// Calls noted in sos.db, waiting for `callNoted`: their number and what is said into them.
    private var noting: [String: (number: String, text: String)] = [:]
    /// The newest alert's call, for status.
    private var newestCall: LaneCallStatus?

    /// The input being handled: its clocks, and the actions decided so far.
    private var now = LaneClock(monotonicNs: 0, wallMs: 0)
    private var actions: [LaneAction] = []

    /// A fixed id for every SOS stage entry in the journal (`journalctl MESSAGE_ID=…`).
    static let journalMessageID = "8f2d6c1e4b7a4e0f9c3d5a6b7e8f9012"
    /// A confirmation is spoken when every channel acknowledged, or after this with what has.
    static let confirmationWaitNs: UInt64 = 20_000_000_000
    /// The longest an alert's dispatch waits for its commit to sos.db (an SD card's fsync can
    /// stall for seconds); after it the alert goes out from memory and is recorded when it can.
    static let commitWaitNs: UInt64 = 200_000_000
    static let callPlacingTimeout: Duration = .seconds(30)

    private struct Confirmation {
        var kind: AlertKind
        var type: AlertContent.Message
        var keys: Set<Delivery.Key>
        var acknowledged: Set<Delivery.Key> = []
        var raisedNs: UInt64
        /// What was acknowledged after `confirmationWaitNs` has been said; the rest follows when done.
        var spokePartial = false
    }

    private struct PendingRaise {
        var alert: VitalsAlert
        var uuid: String
        var test: Bool
        var triggerNs: UInt64
        var content: AlertContent
        var message: AlertStore.NewMessage
    }

    private struct PendingMessage {
        var uuid: String
        var kind: AlertKind
        var type: AlertContent.Message
        var sequence: Int
        var message: AlertStore.NewMessage
    }

    private struct PendingCommit {
        var alertUUID: String
        var kind: AlertKind
        var confirmingNs: UInt64
        /// Outcomes (acknowledged, failed, replaced) waiting for the commit, oldest first.
        var writes: [(write: LaneStoreWrite, fields: [String: String], unrecorded: String)] = []
    }

    /// One alert's call, from placing it until it is terminated.
    private struct ActiveCall {
        /// What is said into it.
        var text: String
        /// false until Start answered.
        var placed = false
        var state: CallState = .unknown
        /// Cancelled before Start answered: hung up as soon as it has.
        var hangUpWanted = false
    }

    init(settings: LaneSettings, channels: Set<AlertChannelName>, canCall: Bool,
         newUUID: @escaping () -> String = { UUID().uuidString.lowercased() }) {
        self.settings = settings
        watcher = VitalsWatcher(rules: settings.rules)
        outbox = Outbox(settings: settings.outbox)
        buttons = ButtonGestureClassifier(configuration: settings.buttons)
        channelNames = channels
        self.canCall = canCall
        self.newUUID = newUUID
    }

    // MARK: Inputs

    mutating func handle(_ input: LaneInput, now: LaneClock) -> [LaneAction] { handle(.lane(input), now: now) }

    mutating func handle(_ input: LaneCoreInput, now: LaneClock) -> [LaneAction] {
        self.now = now
        actions = []
        switch input {
        case .lane(let input):
            handle(input)
        case .restore(let open, let pending):
            restore(open: open, pending: pending)
        case .buttonsDue:
            advanceButtons()
        case .tick:
            tick()
        case .commitWaited(let messageID, let outcome):
            dispatch(messageID, outcome)
        case .messageStored(let messageID, let result):
            stored(messageID, result)
        case .callNoted(let uuid, let result):
            callNoted(uuid, result)
        case .callStarted(let uuid, let result):
            callPlaced(uuid, result)
        }
        let decided = actions
        actions = []
        return decided
    }

    private mutating func handle(_ input: LaneInput) {
        let nowNs = now.monotonicNs
        switch input {
        case .heartRate(let bytes, let receivedNs, let strap):
            // Decoded here as well as in the pipeline: the lane must not wait for it.
            guard case .success(let measurement) = sensor.notification(bytes, at: Self.time(receivedNs)) else { break }
            var sample = measurement.sample(at: Self.time(receivedNs))
            sample.strap = strap
            ingest(sample, receivedNs: receivedNs)
        case .sample(let sample, let receivedNs):
            ingest(sample, receivedNs: receivedNs)
        case .position(let position, let offset):
            watcher.observe(position: position)
            if let offset { wallMinusMonotonicMs = offset }
        case .run(let newRun):
            run = newRun
        case .deviceBattery(let percent):
            deviceBattery = percent
        case .buttonKey(let key):
            raiseOnVeryLongPress(buttons.handle(key))
        case .buttonsReset:
            buttons.reset()
        case .raise(let source, _):
            actions.append(.reply(.raised(raiseManual(source: source))))
        case .answer:
            process(watcher.answerAsk(at: Self.time(nowNs)), triggerNs: nowNs)
        case .cancel:
            var events = watcher.cancel(at: Self.time(nowNs))
            events += adopted.map { .cancelled(number: $0.number, kind: $0.kind, at: Self.time(nowNs)) }
            adopted = []
            guard !events.isEmpty else {
                actions.append(.reply(.cancelled(.failure(LaneRefusal("no alert is open")))))
                break
            }
            process(events, triggerNs: nowNs)
            // 0 with success: only "Are you OK?" was answered.
            let cancelled = events.count { if case .cancelled = $0 { true } else { false } }
            if cancelled > 0 { hangUpCalls() }
            actions.append(.reply(.cancelled(.success(cancelled))))
        case .test:
            guard !settings.targets.isEmpty else {
                actions.append(.reply(.tested(.failure(LaneRefusal("no channel is configured: set [sos] contacts, [upload] url or [sos] hook")))))
                break
            }
            let alert = VitalsAlert(number: 0, kind: .test, firstOutOfRange: Self.time(nowNs), raisedAt: Self.time(nowNs),
                                    heartRate: lastHeartRate?.bpm, heartRateTime: lastHeartRate.map { Self.time($0.ns) })
            actions.append(.reply(.tested(.success(raise(alert, triggerNs: nowNs, test: true)))))
        case .status:
            actions.append(.reply(.status(status())))
        case .reload(let newSettings):
            settings = newSettings
            buttons.configuration = newSettings.buttons
            watcher.update(rules: newSettings.rules)
            outbox.settings = newSettings.outbox
        case .retryNow(let reason):
            let waiting = outbox.waitingCount(now: nowNs)
            guard waiting > 0 else { break }
            log(.notice, "\(reason): retrying \(waiting) SOS delivery(ies) now", [:])
            perform(outbox.handle(.retryNow, now: nowNs))
        case .delivered(let key, let attempt, let result, let startedNs):
            perform(outbox.handle(.finished(key, attempt: attempt, result), now: nowNs), attemptStartedNs: startedNs)
        case .committed(let messageID, let result):
            committed(messageID, result)
        case .smsReport(let delivery, let report):
            smsReported(delivery, report)
        case .callState(let uuid, let state):
            callChanged(uuid, to: state)
        case .callPlaced, .rehearse:
            // The executor's: it keeps the call's bus object (and hands the rest over as
            // `.callStarted`) and measures the rehearsal (`rehearse(now:)`).
            break
        case .shutdown:
            // The call itself goes on in the modem (someone may be on the line); only its speech stops.
            for uuid in calls.keys.sorted() { actions.append(.stopCallAudio(alertUUID: uuid)) }
            if outbox.owedCount > 0 {
                log(.warning, "stopping with \(outbox.owedCount) SOS delivery(ies) not acknowledged; they are retried at the next start", [:])
            }
        }
    }

    /// When a held button next needs a look (CLOCK_MONOTONIC): the very long press fires while
    /// the key is still down, on time rather than at the next tick.
    var buttonDeadlineNs: UInt64? {
        buttons.nextDeadline.map { duration in
            let (seconds, attoseconds) = duration.components
            return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        }
    }

    /// Deliveries not yet acknowledged (nor replaced).
    var owedCount: Int { outbox.owedCount }

    private mutating func log(_ level: LaneLogLevel, _ message: String, _ fields: [String: String]) {
        actions.append(.log(level, message, fields))
    }

    private mutating func ingest(_ sample: HeartRateSample, receivedNs: UInt64) {
        if sample.isValid { lastHeartRate = (sample.bpm, receivedNs) }
        process(watcher.ingest(sample), triggerNs: receivedNs)
    }

    private mutating func tick() {
        let nowNs = now.monotonicNs
        advanceButtons()
        // Monitoring starts with the lane's first tick: a strap never heard from is warned about.
        watcher.start(at: Self.time(nowNs))
        process(watcher.advance(to: Self.time(nowNs)), triggerNs: nowNs)
        perform(outbox.handle(.tick, now: nowNs))
        // In message order: the spoken confirmations come in the order the messages were raised.
        for (id, confirmation) in confirmations.sorted(by: { $0.value.raisedNs < $1.value.raisedNs })
        where !confirmation.spokePartial && nowNs &- confirmation.raisedNs >= Self.confirmationWaitNs {
            speakConfirmation(id, final: false)
        }
    }

    private mutating func advanceButtons() {
        guard buttons.nextDeadline != nil else { return }
        raiseOnVeryLongPress(buttons.advance(to: .nanoseconds(Int64(now.monotonicNs))))
    }

    private mutating func raiseOnVeryLongPress(_ gestures: [ButtonGestureEvent]) {
        for gesture in gestures where gesture.gesture == .veryLongPress {
            log(.critical, "very long press on key \(gesture.keyCode): SOS", ["SOS_SOURCE": "button"])
            if case .failure(let refusal) = raiseManual(source: "button") {
                log(.error, "the SOS button could not raise an alert: \(refusal)", [:])
            }
        }
    }

    /// A very long press or `pacerctl sos raise`: the open manual alert's UUID, or the new one's.
    private mutating func raiseManual(source: String) -> Result<String, LaneRefusal> {
        let nowNs = now.monotonicNs
        let events = watcher.raiseManual(at: Self.time(nowNs))
        if events.isEmpty, let open = watcher.openAlerts.first(where: { $0.kind == .manual }) {
            return .success(uuids[open.number] ?? "?")
        }
        log(.critical, "SOS requested (\(source))", ["SOS_SOURCE": source])
        process(events, triggerNs: nowNs)
        if let number = events.compactMap({ if case .alert(let a) = $0 { a.number } else { nil } }).first, let uuid = uuids[number] {
            return .success(uuid)
        }
        return .failure(LaneRefusal("the SOS could not be raised"))
    }

    /// What sos.db held at start: deliveries owed from before a restart go out at once; alerts
    /// left open are adopted, then "device restarted" goes to everyone who had them.
    private mutating func restore(open: Result<[AlertStore.OpenAlert], AlertStoreError>, pending: Result<[Delivery], AlertStoreError>) {
        let time = Self.time(now.monotonicNs)
        var restarted: [(number: Int, kind: AlertKind)] = []
        switch open {
        case .success(let open):
            for (index, alert) in open.enumerated() {
                guard let kind = AlertKind(rawValue: alert.kind) else { continue }
                let number = -1 - index
                uuids[number] = alert.uuid
                sequences[alert.uuid] = alert.lastSequence
                if settings.call != nil {
                    // Never from sos.db: the call was placed once already, or the moment for it has passed.
                    log(.notice, "SOS alert \(alert.uuid): " + (alert.callPlacedMs == nil ? "no call was placed before the restart; none is placed now"
                                                                                     : "its call was placed before the restart; it is not placed again"),
                        ["SOS_ALERT_ID": alert.uuid, "SOS_STAGE": "call_not_again", "MESSAGE_ID": Self.journalMessageID])
                }
                // The newest of its kind is the watcher's again: follow-ups go on, it resolves, and
                // the same breach going on is not raised twice. Its times restart now (the wall
                // clock may not be known yet), so follow-ups go on for longer, never shorter.
                guard !open[(index + 1)...].contains(where: { $0.kind == alert.kind }) else {
                    adopted.append((number: number, kind: kind))
                    continue
                }
                watcher.adopt(kind: kind, number: number, firstOutOfRange: time, raisedAt: time, followUps: alert.lastSequence + 1, at: time)
                restarted.append((number: number, kind: kind))
                log(.warning, "SOS alert \(alert.uuid) (\(alert.kind)) was open when pacerd stopped; it stays open, its follow-ups go on",
                    ["SOS_ALERT_ID": alert.uuid, "SOS_KIND": alert.kind, "MESSAGE_ID": Self.journalMessageID])
            }
        case .failure(let error):
            log(.error, "\(error); alerts open before the restart cannot be cancelled", [:])
        }
        switch pending {
        case .success(let pending) where !pending.isEmpty:
            log(.warning, "\(pending.count) SOS message(s) recorded before the restart are not acknowledged yet; sending them again", [:])
            perform(outbox.handle(.add(pending), now: now.monotonicNs))
        case .success:
            break
        case .failure(let error):
            log(.error, "\(error); messages owed from before the restart cannot be resumed", [:])
        }
        // After what was owed: "device restarted", to everyone who had the alert.
        for alert in restarted {
            guard let uuid = uuids[alert.number] else { continue }
            followUp(alert.number, kind: alert.kind, type: .followUp, sequence: nextSequence(uuid), at: time, heartRate: nil, position: nil,
                     state: nil, deviceRestarted: true)
        }
    }

    // MARK: Decisions

    private mutating func process(_ events: [SafetyEvent], triggerNs: UInt64) {
        for event in events {
            switch event {
            case .alert(let alert):
                _ = raise(alert, triggerNs: triggerNs, test: false)
            case .warning(let warning):
                log(.warning, warning.text, ["SOS_WARNING": warning.fault.rawValue])
                say(AlertText.spokenWarning(warning.fault), atNs: triggerNs)
            case .warningCleared(let warning):
                log(.info, "SOS monitoring: \(warning.fault.rawValue) is over after \(Int(warning.time.seconds(since: warning.since).rounded())) s", ["SOS_WARNING": warning.fault.rawValue])
            case .resolved(let number, let kind, let at, let heartRate):
                followUp(number, kind: kind, type: .resolved, sequence: nil, at: at, heartRate: heartRate, position: nil, state: "resolved")
            case .cancelled(let number, let kind, let at):
                followUp(number, kind: kind, type: .cancelled, sequence: nil, at: at, heartRate: lastHeartRate?.bpm, position: nil, state: "cancelled")
            case .followUp(let number, let kind, let sequence, let at, let heartRate, let position):
                followUp(number, kind: kind, type: .followUp, sequence: sequence, at: at, heartRate: heartRate, position: position, state: nil)
            case .askAreYouOK(_, let at, let deadline):
                let seconds = deadline.seconds(since: at)
                log(.warning, "SOS: no heart-rate signal and no movement; asking \"Are you OK?\", help is called in \(Int(seconds.rounded())) s unless answered (button or pacerctl sos cancel)",
                    ["SOS_STAGE": "ask"])
                say(AlertText.spokenAsk(timeoutSeconds: seconds), atNs: triggerNs)
                actions.append(.asking(true))
            case .askOver(_, let answered):
                actions.append(.asking(false))
                if answered {
                    log(.notice, "SOS: \"Are you OK?\" answered; no help called", ["SOS_STAGE": "ask_answered"])
                    say(AlertText.spokenAskAnswered, atNs: triggerNs)
                } else {
                    log(.info, "SOS: \"Are you OK?\" withdrawn: the heart-rate signal or the movement is back", ["SOS_STAGE": "ask_withdrawn"])
                }
            }
        }
    }

    /// Asks for the alert's commit; dispatch follows its outcome (`commitWaited`). Returns its UUID.
    private mutating func raise(_ alert: VitalsAlert, triggerNs: UInt64, test: Bool) -> String {
        let uuid = newUUID()
        if !test { uuids[alert.number] = uuid }
        let content = self.content(.alert, kind: alert.kind, at: alert.raisedAt, firstOutOfRange: alert.firstOutOfRange,
                                   heartRate: alert.heartRate, trend: alert.trend, position: alert.position)
        let sms = AlertText.sms(content, mapLink: settings.mapLink)
        let body = self.body(uuid: uuid, sequence: 0, content: content, raisedAt: alert.raisedAt, trend: alert.trend, position: alert.position,
                             test: test, sms: sms)
        let createdMs = wallMs(alert.raisedAt)
        let message = AlertStore.NewMessage(sequence: 0, type: "alert", createdMs: createdMs, sms: sms, body: body, targets: settings.targets)
        let record = AlertStore.NewAlert(uuid: uuid, kind: alert.kind.rawValue, test: test, firstOutOfRangeMs: wallMs(alert.firstOutOfRange),
                                         raisedMs: createdMs, heartRate: alert.heartRate, latitude: alert.position?.latitude,
                                         longitude: alert.position?.longitude, runUUID: run?.uuid)
        lastInMemoryID -= 1
        raising[lastInMemoryID] = PendingRaise(alert: alert, uuid: uuid, test: test, triggerNs: triggerNs, content: content, message: message)
        // A stalled fsync holds up dispatch for at most `commitWaitNs`; then the alert goes out
        // from memory while the commit finishes.
        actions.append(.commitAlert(record, message, memoryID: lastInMemoryID, waitUntilNs: now.monotonicNs + Self.commitWaitNs))
        return uuid
    }

    /// The commit answered, failed or outlasted its wait: every delivery starts.
    private mutating func dispatch(_ memoryID: Int64, _ outcome: Result<[Delivery], AlertStoreError>?) {
        guard let pending = raising.removeValue(forKey: memoryID) else { return }
        let (alert, uuid) = (pending.alert, pending.uuid)
        var recordedNs: UInt64?
        var deliveries = Self.deliveries(pending.message, id: memoryID, alertUUID: uuid, kind: alert.kind.rawValue, test: pending.test)
        var stillCommitting = false
        switch outcome {
        case .success(let stored)?:
            deliveries = stored
            recordedNs = now.monotonicNs
        case .failure(let error)?:
            unrecorded(uuid, error)
        case nil:
            stillCommitting = true
            committing[memoryID] = PendingCommit(alertUUID: uuid, kind: alert.kind, confirmingNs: pending.triggerNs)
            log(.warning, "SOS alert \(uuid): sos.db has not committed it within \(Self.commitWaitNs / 1_000_000) ms; dispatching from memory, "
                + "outcomes are recorded once the commit is done", ["SOS_ALERT_ID": uuid, "MESSAGE_ID": Self.journalMessageID])
        }
        let dispatched = perform(outbox.handle(.add(deliveries), now: now.monotonicNs))
        if deliveries.isEmpty {
            log(.critical, "SOS alert \(uuid) has nowhere to go: no [sos] contacts, [upload] url or [sos] hook is configured", ["SOS_ALERT_ID": uuid])
        }
        confirmations[uuid + "#0"] = Confirmation(kind: alert.kind, type: .alert, keys: Set(deliveries.map(\.key)), raisedNs: pending.triggerNs)

        let timing = AlertTiming(alertUUID: uuid, kind: alert.kind, confirmingNs: pending.triggerNs, recordedNs: recordedNs,
                                 firstDispatchNs: dispatched.first?.1, confirmationSeconds: alert.confirmationSeconds)
        journalStages(alert, uuid: uuid, timing: timing, dispatched: dispatched, test: pending.test, stillCommitting: stillCommitting)
        actions.append(.timing(timing))
        say(AlertText.spokenRaised(alert.kind), atNs: pending.triggerNs)
        // After the texts were started, never for a test.
        if !pending.test { placeCall(uuid, content: pending.content) }
    }

    /// Never lose an alert to a full disk: it goes out from memory, retried while pacerd runs.
    private mutating func unrecorded(_ uuid: String, _ error: AlertStoreError) {
        log(.critical, "SOS alert \(uuid) could not be recorded (\(error)); sending it anyway, but it will not survive a restart", ["SOS_ALERT_ID": uuid])
    }

    /// An alert's commit that outlasted `commitWaitNs` is done: the outcomes that came meanwhile
    /// are written now, under the delivery's id in sos.db.
    private mutating func committed(_ messageID: Int64, _ result: Result<[Delivery], AlertStoreError>) {
        guard let pending = committing.removeValue(forKey: messageID) else { return }
        switch result {
        case .success(let stored):
            if let storedID = stored.first?.key.messageID { committedIDs[messageID] = storedID }
            let ms = Self.format(Double(now.monotonicNs &- pending.confirmingNs) / 1e6)
            log(.info, "SOS alert \(pending.alertUUID) recorded: \(ms) ms after the confirming sample, after dispatch began; "
                + "\(pending.writes.count) outcome(s) recorded now",
                ["SOS_ALERT_ID": pending.alertUUID, "SOS_KIND": pending.kind.rawValue, "MESSAGE_ID": Self.journalMessageID,
                 "SOS_STAGE": "recorded", "SOS_LATENCY_MS": ms])
            for write in pending.writes { storeWrite(write.write, fields: write.fields, unrecorded: write.unrecorded) }
        case .failure(let error):
            unrecorded(pending.alertUUID, error)
        }
    }

    private mutating func followUp(_ number: Int, kind: AlertKind, type: AlertContent.Message, sequence: Int?, at time: Timestamp, heartRate: Int?,
                                   position: AlertPosition?, state: String?, deviceRestarted: Bool = false) {
        guard let uuid = uuids[number] else { return }
        let sequence = sequence ?? nextSequence(uuid)
        var content = self.content(type, kind: kind, at: time, firstOutOfRange: nil, heartRate: heartRate, trend: nil, position: position)
        content.deviceRestarted = deviceRestarted
        if type == .followUp { showHeartRateAge(in: &content, at: time) }
        let sms = AlertText.sms(content, mapLink: settings.mapLink)
        let body = self.body(uuid: uuid, sequence: sequence, content: content, raisedAt: time, trend: nil, position: position, test: false, sms: sms)
        let message = AlertStore.NewMessage(sequence: sequence, type: type.rawValue, createdMs: wallMs(time), sms: sms, body: body, targets: settings.targets)
        sequences[uuid] = max(sequences[uuid] ?? 0, sequence)
        lastInMemoryID -= 1
        storing[lastInMemoryID] = PendingMessage(uuid: uuid, kind: kind, type: type, sequence: sequence, message: message)
        actions.append(.storeMessage(message, alertUUID: uuid, state: state, memoryID: lastInMemoryID))
    }

    /// A follow-up, all clear or cancel was stored (or not: it goes out from memory all the same).
    private mutating func stored(_ memoryID: Int64, _ result: Result<[Delivery], AlertStoreError>) {
        guard let pending = storing.removeValue(forKey: memoryID) else { return }
        let (uuid, type, sequence) = (pending.uuid, pending.type, pending.sequence)
        let deliveries: [Delivery]
        switch result {
        case .success(let stored):
            deliveries = stored
        case .failure(let error):
            // Sent all the same, from memory: a cancel must reach whoever got the alert.
            log(.error, "SOS \(type.rawValue) for alert \(uuid) could not be recorded (\(error)); sending it anyway", ["SOS_ALERT_ID": uuid])
            deliveries = Self.deliveries(pending.message, id: memoryID, alertUUID: uuid, kind: pending.kind.rawValue, test: false)
        }
        perform(outbox.handle(.add(deliveries), now: now.monotonicNs))
        confirmations["\(uuid)#\(sequence)"] = Confirmation(kind: pending.kind, type: type, keys: Set(deliveries.map(\.key)), raisedNs: now.monotonicNs)
        let what = switch type {
        case .resolved: "the all clear (heart rate back in range)"
        case .cancelled: "\"false alarm, I am OK\" (cancelled by the runner)"
        case .followUp: "follow-up \(sequence) with the newest position"
        case .alert: "the alert"
        }
        log(.notice, "SOS alert \(uuid): sending \(what)", ["SOS_ALERT_ID": uuid, "SOS_STAGE": type.rawValue, "MESSAGE_ID": Self.journalMessageID])
        if type == .cancelled { say("Alert cancelled. Sending false alarm message.", atNs: now.monotonicNs) }
    }

    private static func deliveries(_ message: AlertStore.NewMessage, id: Int64, alertUUID: String, kind: String, test: Bool) -> [Delivery] {
        message.targets.map { target in
            Delivery(key: .init(messageID: id, channel: target.channel, target: target.target), alertUUID: alertUUID, kind: kind,
                     test: test, sequence: message.sequence, type: message.type, sms: message.sms, body: message.body,
                     attempts: 0, lastError: nil, acknowledgedMs: nil)
        }
    }

    private func nextSequence(_ uuid: String) -> Int {
        // Follow-ups are numbered by the watcher from 1; the all clear or a cancel (the last
        // message of an alert) comes after the newest.
        (sequences[uuid] ?? 0) + 1
    }

    // MARK: The voice call

    /// Places the alert's one call. Noted in sos.db first (`callNoted`): neither a crash nor a
    /// restart can lead to a second call, and a restarted lane never places one (it may be hours later).
    private mutating func placeCall(_ uuid: String, content: AlertContent) {
        guard let number = settings.call else { return }
        guard canCall else {
            log(.error, "SOS alert \(uuid): [sos] call is set but this pacerd cannot place calls; no call", callFields(uuid, stage: "call_failed"))
            return
        }
        noting[uuid] = (number, AlertText.spokenCall(content))
        actions.append(.noteCall(alertUUID: uuid, atMs: wallMs(Self.time(now.monotonicNs))))
    }

    private mutating func callNoted(_ uuid: String, _ result: Result<Bool, AlertStoreError>) {
        guard let call = noting.removeValue(forKey: uuid) else { return }
        switch result {
        case .success(false):
            return
        case .success(true):
            break
        case .failure(let error):
            log(.error, "\(error); calling all the same (a restart never calls, so there is no second call)", callFields(uuid))
        }
        calls[uuid] = ActiveCall(text: call.text)
        log(.notice, "SOS alert \(uuid): calling …\(call.number.suffix(3))", callFields(uuid, stage: "call_placing"))
        showCall(uuid, "placing")
        actions.append(.placeCall(alertUUID: uuid, number: call.number, timeout: Self.callPlacingTimeout))
    }

    private mutating func callPlaced(_ uuid: String, _ result: Result<CallPlacement, CallError>) {
        switch result {
        case .success(let placed):
            guard var call = calls[uuid] else { return }
            call.placed = true
            calls[uuid] = call
            log(.notice, "SOS alert \(uuid): call started through \(placed.modem) (\(placed.path))", callFields(uuid, stage: "call_started"))
            if call.hangUpWanted, call.state != .terminated { hangUp(uuid) }
        case .failure(let error):
            if calls[uuid] != nil { actions.append(.stopCallAudio(alertUUID: uuid)) }
            calls[uuid] = nil
            // Not retried: a call is an act with consequences, placed once or not at all.
            log(.error, "SOS alert \(uuid): the call could not be placed: \(error); it is not tried again", callFields(uuid, stage: "call_failed"))
            actions.append(.storeCallState("failed: \(error)", alertUUID: uuid))
            showCall(uuid, "failed: \(error)")
        }
    }

    private mutating func callChanged(_ uuid: String, to state: CallState) {
        guard var call = calls[uuid], call.state != state else { return }
        call.state = state
        log(.notice, "SOS alert \(uuid): call \(state)", callFields(uuid, stage: "call_" + state.description.replacing("-", with: "_")))
        actions.append(.storeCallState(state.description, alertUUID: uuid))
        showCall(uuid, Self.shown(state))
        switch state {
        case .active:
            // Not again while it speaks (the executor keeps one per call).
            actions.append(.startCallAudio(alertUUID: uuid, text: call.text))
            calls[uuid] = call
        case .terminated:
            actions.append(.stopCallAudio(alertUUID: uuid))
            calls[uuid] = nil
        default:
            calls[uuid] = call
        }
    }

    /// `sos cancel`: every call is hung up (one still being placed, as soon as it is).
    private mutating func hangUpCalls() {
        for uuid in calls.keys.sorted() {
            guard var call = calls[uuid] else { continue }
            actions.append(.stopCallAudio(alertUUID: uuid))
            call.hangUpWanted = !call.placed
            calls[uuid] = call
            if call.placed { hangUp(uuid) }
        }
    }

    private mutating func hangUp(_ uuid: String) {
        log(.notice, "SOS alert \(uuid): hanging up the call (cancelled)", callFields(uuid, stage: "call_hangup"))
        actions.append(.hangUp(alertUUID: uuid))
    }

    private func callFields(_ uuid: String, stage: String? = nil) -> [String: String] {
        var fields = ["SOS_ALERT_ID": uuid, "SOS_CHANNEL": "call", "MESSAGE_ID": Self.journalMessageID]
        if let stage { fields["SOS_STAGE"] = stage }
        return fields
    }

    private mutating func showCall(_ uuid: String, _ state: String) {
        newestCall = LaneCallStatus(alertUUID: uuid, state: state)
        actions.append(.publishCall(newestCall))
    }

    /// A call's state in the words `pacerctl sos` and `status` use.
    static func shown(_ state: CallState) -> String {
        switch state {
        case .unknown: "placing"
        case .ringingOut, .ringingIn: "ringing"
        case .terminated: "ended"
        case .dialing, .active, .held, .waiting: state.description
        }
    }

    // MARK: Dispatch

    /// Does what the outbox decided: starts attempts, records outcomes, logs. Returns the
    /// attempts started and when (CLOCK_MONOTONIC). `attemptStartedNs`: when the attempt whose
    /// outcome this is started.
    @discardableResult
    private mutating func perform(_ outboxActions: [Outbox.Action], attemptStartedNs: UInt64? = nil) -> [(Delivery.Key, UInt64)] {
        var started: [(Delivery.Key, UInt64)] = []
        let nowNs = now.monotonicNs
        for action in outboxActions {
            switch action {
            case .start(let delivery, let attempt):
                guard channelNames.contains(delivery.key.channel) else {
                    let failure = ChannelFailure("\(delivery.key.channel.rawValue) is configured but not available in this pacerd")
                    started += perform(outbox.handle(.finished(delivery.key, attempt: attempt, .failure(failure)), now: nowNs))
                    continue
                }
                started.append((delivery.key, nowNs))
                actions.append(.startAttempt(delivery, attempt: attempt, timeout: .milliseconds(Int64(settings.attemptTimeoutSeconds * 1000)),
                                             startedNs: nowNs))
            case .acknowledged(let delivery, let detail):
                if delivery.key.channel == .https { setServerRejects(nil) }
                acknowledged(delivery, detail: detail, tookMs: attemptStartedNs.map { Double(nowNs &- $0) / 1e6 })
            case .failed(let delivery, let failure, _, let retryIn):
                if delivery.key.channel == .https, let status = failure.rejectedStatus { setServerRejects(status) }
                failed(delivery, message: failure.message, retryInSeconds: retryIn)
            case .replaced(let delivery, let newer):
                replaced(delivery, bySequence: newer)
            }
        }
        return started
    }

    private mutating func setServerRejects(_ status: Int?) {
        guard status != serverRejects else { return }
        serverRejects = status
        actions.append(.publishServerRejects(status))
    }

    private func fields(_ delivery: Delivery) -> [String: String] {
        ["SOS_ALERT_ID": delivery.alertUUID, "SOS_CHANNEL": delivery.key.channel.rawValue, "SOS_KIND": delivery.kind,
         "SOS_SEQUENCE": String(delivery.sequence), "MESSAGE_ID": Self.journalMessageID]
    }

    /// Writes a delivery's new state to sos.db (not for those sent from memory; after its
    /// alert's commit when that still runs), and returns the journal fields for `stage`.
    private mutating func record(_ delivery: Delivery, stage: String, unrecorded: String,
                                 _ write: (Delivery.Key, Int64) -> LaneStoreWrite) -> [String: String] {
        var entry = fields(delivery)
        let change = write(delivery.key, wallMs(Self.time(now.monotonicNs)))
        if committing[delivery.key.messageID] != nil {
            // Its alert's commit is still running: written after it, in the order they came.
            committing[delivery.key.messageID]?.writes.append((change, entry, unrecorded))
        } else {
            storeWrite(change, fields: entry, unrecorded: unrecorded)
        }
        entry["SOS_STAGE"] = stage
        return entry
    }

    /// Under the key in sos.db: a delivery sent from memory has one only once its late commit is done.
    private mutating func storeWrite(_ change: LaneStoreWrite, fields: [String: String], unrecorded: String) {
        func stored(_ key: Delivery.Key) -> Delivery.Key? {
            if key.messageID > 0 { return key }
            return committedIDs[key.messageID].map { Delivery.Key(messageID: $0, channel: key.channel, target: key.target) }
        }
        let inStore: LaneStoreWrite? = switch change {
        case .acknowledged(let key, let atMs): stored(key).map { .acknowledged($0, atMs: atMs) }
        case .failed(let key, let error, let atMs): stored(key).map { .failed($0, error: error, atMs: atMs) }
        case .replaced(let key, let atMs): stored(key).map { .replaced($0, atMs: atMs) }
        case .reported(let key, let state, let atMs): stored(key).map { .reported($0, state: state, atMs: atMs) }
        }
        if let inStore { actions.append(.storeWrite(inStore, fields: fields, unrecorded: unrecorded)) }
    }

    private mutating func acknowledged(_ delivery: Delivery, detail: String, tookMs: Double?) {
        let key = delivery.key
        var ack = record(delivery, stage: "acknowledged", unrecorded: "the acknowledgement of \(key) is not recorded; it may be sent again after a restart") {
            .acknowledged($0, atMs: $1)
        }
        if let tookMs { ack["SOS_ATTEMPT_MS"] = Self.format(tookMs) }
        log(.notice, "SOS \(delivery.type) \(delivery.alertUUID) acknowledged by \(key.channel.rawValue) \(Self.redacted(key)) after \(delivery.attempts) attempt(s): \(detail)", ack)
        let id = "\(delivery.alertUUID)#\(delivery.sequence)"
        if var confirmation = confirmations[id] {
            confirmation.acknowledged.insert(key)
            confirmations[id] = confirmation
            if confirmation.acknowledged == confirmation.keys { speakConfirmation(id, final: true) }
        }
    }

    private mutating func failed(_ delivery: Delivery, message: String, retryInSeconds backoff: Double) {
        let key = delivery.key
        let failed = record(delivery, stage: "attempt_failed", unrecorded: "") { .failed($0, error: message, atMs: $1) }
        // Every failure of the first few, then one in ten: a dead modem must not flood the journal.
        if delivery.attempts <= 3 || delivery.attempts % 10 == 0 {
            log(.warning, "SOS \(delivery.type) \(delivery.alertUUID) by \(key.channel.rawValue) \(Self.redacted(key)) failed (attempt \(delivery.attempts)): \(message); retrying in \(Int(backoff)) s", failed)
        }
    }

    /// Recorded and logged; the outbox never hears of it.
    private mutating func smsReported(_ delivery: Delivery, _ report: SMSStatusReport) {
        let state = report.state.rawValue
        let entry = record(delivery, stage: "sms_report", unrecorded: "") { .reported($0, state: state, atMs: $1) }
        let level: LaneLogLevel = report.state.outcome == .notDelivered ? .warning : .info
        log(level, "SOS \(delivery.type) \(delivery.alertUUID) to sms \(Self.redacted(delivery.key)): \(DeliveryReportText.summary(report.state))",
            entry.merging(["SOS_SMS_DELIVERY_STATE": report.state.description]) { $1 })
    }

    private mutating func replaced(_ delivery: Delivery, bySequence newer: Int) {
        let key = delivery.key
        let entry = record(delivery, stage: "replaced", unrecorded: "\(key) may be sent after a restart although a newer follow-up replaced it") {
            .replaced($0, atMs: $1)
        }
        log(.info, "SOS \(delivery.type) \(delivery.alertUUID) #\(delivery.sequence) to \(key.channel.rawValue) \(Self.redacted(key)) replaced by #\(newer); not sent", entry)
        let id = "\(delivery.alertUUID)#\(delivery.sequence)"
        if var confirmation = confirmations[id] {
            confirmation.keys.remove(key)
            confirmations[id] = confirmation.keys.isEmpty ? nil : confirmation
        }
    }

    // MARK: Speech

    private mutating func say(_ text: String, atNs: UInt64) {
        actions.append(.say(Cue(time: Self.time(atNs), kind: .sos, text: text), atNs: atNs))
    }

    private mutating func speakConfirmation(_ id: String, final: Bool) {
        guard var confirmation = confirmations[id] else { return }
        confirmation.spokePartial = true
        // Done: forgotten. Not yet: kept, so the whole story is told once everything is through.
        confirmations[id] = final ? nil : confirmation
        var channels: [String] = []
        let sms = confirmation.acknowledged.filter { $0.channel == .sms }.count
        if sms > 0 { channels.append("by text message to \(sms) contact\(sms == 1 ? "" : "s")") }
        if confirmation.acknowledged.contains(where: { $0.channel == .https }) { channels.append("to the server") }
        if confirmation.acknowledged.contains(where: { $0.channel == .hook }) { channels.append("to the local hook") }
        var text = AlertText.spokenConfirmation(kind: confirmation.kind, message: confirmation.type, channels: channels)
        if !final, !channels.isEmpty { text += " Still trying the rest." }
        // Follow-ups go out every minute: confirming each aloud would only be noise.
        if confirmation.type == .followUp { return }
        say(text, atNs: now.monotonicNs)
    }

    // MARK: Rehearsal

    /// Runs the alert path on copies, from a strap notification to the messages' bytes and the
    /// outbox's first attempts: a fresh watcher with the live rules confirms a breach, its alert's
    /// SMS and JSON body are made, a copy of the outbox takes their deliveries. Nothing is sent,
    /// stored, logged or said, and the lane's own state is untouched. Returns the messages made.
    func rehearse(now: LaneClock) -> Int {
        var lane = self
        lane.now = now
        return lane.rehearseOnThisCopy()
    }

    private mutating func rehearseOnThisCopy() -> Int {
        var rules = settings.rules
        rules.enabled = true
        var watcher = VitalsWatcher(rules: rules)
        var sensor = HeartRateSensor()
        let start = Self.time(now.monotonicNs)
        watcher.start(at: start)
        // A position, so the map link and the position's age are formatted too.
        watcher.observe(position: AlertPosition(latitude: 45.4642, longitude: 9.19, time: start, accuracyMeters: 5))
        let bpm = UInt8(min(rules.highBpm + 10, 240))
        var events: [SafetyEvent] = []
        for second in 1...8 {
            let time = Timestamp(milliseconds: start.milliseconds + Int64(second) * 1000)
            // Flags: 8-bit value, contact supported and detected, RR intervals present.
            guard case .success(let measurement) = sensor.notification([0x16, bpm, 0x00, 0x01], at: time) else { continue }
            events += watcher.ingest(measurement.sample(at: time))
        }
        events += watcher.advance(to: Timestamp(milliseconds: start.milliseconds + 9000))
        events += watcher.raiseManual(at: Timestamp(milliseconds: start.milliseconds + 9000))
        var made = 0
        for case .alert(let alert) in events {
            let uuid = UUID().uuidString.lowercased()
            let content = self.content(.alert, kind: alert.kind, at: alert.raisedAt, firstOutOfRange: alert.firstOutOfRange,
                                       heartRate: alert.heartRate, trend: alert.trend, position: alert.position)
            let sms = AlertText.sms(content, mapLink: settings.mapLink)
            let body = self.body(uuid: uuid, sequence: 0, content: content, raisedAt: alert.raisedAt, trend: alert.trend,
                                 position: alert.position, test: false, sms: sms)
            let message = AlertStore.NewMessage(sequence: 0, type: "alert", createdMs: wallMs(alert.raisedAt), sms: sms, body: body,
                                                targets: settings.targets)
            _ = AlertText.spokenRaised(alert.kind)
            lastInMemoryID -= 1
            made += 1
            _ = outbox.handle(.add(Self.deliveries(message, id: lastInMemoryID, alertUUID: uuid, kind: alert.kind.rawValue, test: false)),
                              now: now.monotonicNs)
        }
        return made
    }

    // MARK: Content

    private func content(_ type: AlertContent.Message, kind: AlertKind, at time: Timestamp, firstOutOfRange: Timestamp?, heartRate: Int?,
                         trend: HeartRateTrend?, position: AlertPosition?) -> AlertContent {
        AlertContent(message: type, kind: kind, time: Timestamp(milliseconds: wallMs(time)),
                     firstOutOfRange: firstOutOfRange.map { Timestamp(milliseconds: wallMs($0)) }, heartRate: heartRate,
                     trend: trend?.direction, threshold: settings.rules.threshold(for: kind), latitude: position?.latitude,
                     longitude: position?.longitude, positionAgeSeconds: position.map { time.seconds(since: $0.time) },
                     accuracyMeters: position?.accuracyMeters, device: settings.deviceName, runID: run?.id, batteryPercent: deviceBattery,
                     wearer: settings.wearerName, zone: settings.wearerZone)
    }

    /// A follow-up says when its heart rate was measured: the newest valid reading and its time,
    /// or, when that is older than a follow-up period, only "no heart rate since" its time.
    private func showHeartRateAge(in content: inout AlertContent, at time: Timestamp) {
        guard let last = lastHeartRate else { return }
        let measured = Self.time(last.ns)
        content.heartRateTime = Timestamp(milliseconds: wallMs(measured))
        content.heartRate = time.seconds(since: measured) > settings.rules.followUpEverySeconds ? nil : last.bpm
    }

    private func body(uuid: String, sequence: Int, content: AlertContent, raisedAt: Timestamp, trend: HeartRateTrend?, position: AlertPosition?,
                      test: Bool, sms: String) -> String {
        let heart: AlertBody.HeartRate? = content.heartRate == nil && trend == nil ? nil : AlertBody.HeartRate(
            bpm: content.heartRate, trend: trend?.direction.rawValue, trend_bpm_per_min: trend.map { ($0.bpmPerMinute * 10).rounded() / 10 },
            min_30s: trend?.minimum, max_30s: trend?.maximum, threshold_bpm: content.threshold)
        let where_: AlertBody.Position? = position.map {
            AlertBody.Position(lat: $0.latitude, lon: $0.longitude, time: Timestamp(milliseconds: wallMs($0.time)).iso8601,
                               age_s: (raisedAt.seconds(since: $0.time) * 10).rounded() / 10, accuracy_m: $0.accuracyMeters)
        }
        return AlertBody(alert_id: uuid, sequence: sequence, type: content.message.rawValue, test: test, kind: content.kind.rawValue,
                         time: content.time.iso8601, raised_at: content.time.iso8601, first_out_of_range: content.firstOutOfRange?.iso8601,
                         device: settings.deviceName, run_id: run?.uuid, heart_rate: heart, position: where_,
                         battery_percent: deviceBattery, sms: sms, wearer: settings.wearerName).json()
    }

    // MARK: Journal and status

    /// One entry per stage (detected, confirmed, recorded, dispatched per channel), all with the
    /// SOS MESSAGE_ID and the ms since the confirming sample, then the summary line a person reads.
    private mutating func journalStages(_ alert: VitalsAlert, uuid: String, timing: AlertTiming, dispatched: [(Delivery.Key, UInt64)], test: Bool,
                                        stillCommitting: Bool) {
        let base = ["SOS_ALERT_ID": uuid, "SOS_KIND": alert.kind.rawValue, "MESSAGE_ID": Self.journalMessageID]
        let breachMs = Double(alert.firstOutOfRange.milliseconds)
        func since(_ ns: UInt64?) -> String { ns.map { Self.format(Double($0 &- timing.confirmingNs) / 1e6) } ?? "-" }
        func sinceBreach(_ ns: UInt64?) -> String { ns.map { Self.format(Double($0) / 1e6 - breachMs) } ?? "-" }
        func stage(_ name: String, _ text: String, _ extra: [String: String] = [:]) {
            log(.info, "SOS alert \(uuid) \(name): \(text)", base.merging(extra) { $1 }.merging(["SOS_STAGE": name]) { $1 })
        }
        if !test {
            stage("detected", "first out-of-range sample \(Self.format(alert.confirmationSeconds)) s before confirmation",
                  ["SOS_SINCE_BREACH_MS": "0"])
            stage("confirmed", "\(Self.format(alert.confirmationSeconds)) s after the first out-of-range sample",
                  ["SOS_CONFIRM_S": Self.format(alert.confirmationSeconds), "SOS_LATENCY_MS": "0"])
        }
        // Still committing: the "recorded" stage comes when it is done (`.committed`).
        if !stillCommitting {
            stage("recorded", timing.recordedNs == nil ? "NOT recorded (store unavailable)" : "\(since(timing.recordedNs)) ms after the confirming sample",
                  ["SOS_LATENCY_MS": since(timing.recordedNs), "SOS_SINCE_BREACH_MS": sinceBreach(timing.recordedNs)])
        }
        for (key, ns) in dispatched {
            stage("dispatched", "\(key.channel.rawValue) \(Self.redacted(key)) started \(since(ns)) ms after the confirming sample",
                  ["SOS_CHANNEL": key.channel.rawValue, "SOS_LATENCY_MS": since(ns), "SOS_SINCE_BREACH_MS": sinceBreach(ns)])
        }
        var entry = base
        entry["SOS_STAGE"] = "raised"
        entry["SOS_CONFIRM_S"] = Self.format(alert.confirmationSeconds)
        entry["SOS_RECORDED_MS"] = since(timing.recordedNs)
        entry["SOS_DISPATCHED_MS"] = since(timing.firstDispatchNs)
        entry["SOS_SINCE_BREACH_MS"] = sinceBreach(timing.firstDispatchNs)
        if let run { entry["SOS_RUN_ID"] = run.uuid }
        let what = test ? "SOS TEST \(uuid) sent through every channel" : "SOS alert \(uuid) raised: \(alert.kind.rawValue)"
            + (alert.heartRate.map { ", heart rate \($0) bpm" } ?? "")
        log(test ? .notice : .critical,
            "\(what); detected at the first out-of-range sample, confirmed \(Self.format(alert.confirmationSeconds)) s later; "
                + "recorded \(since(timing.recordedNs)) ms and first dispatch \(since(timing.firstDispatchNs)) ms after the confirming sample "
                + "(\(sinceBreach(timing.firstDispatchNs)) ms after the first)", entry)
    }

    /// The UUIDs of the alerts open now: adopted from before a restart, then the watcher's.
    var openAlertUUIDs: [String] {
        adopted.compactMap { uuids[$0.number] } + watcher.openAlerts.compactMap { uuids[$0.number] }
    }

    private func status() -> LaneStatus {
        let at = Self.time(now.monotonicNs)
        let signal = switch watcher.signal(at: at) {
        case .absent: "absent"
        case .live: "live"
        case .abnormal(let reason, _): reason.rawValue
        }
        return LaneStatus(monitoring: settings.rules.enabled, lastHeartRate: lastHeartRate?.bpm,
                          lastHeartRateAgeSeconds: lastHeartRate.map { Double(now.monotonicNs &- $0.ns) / 1e9 },
                          faults: watcher.activeFaults.map(\.rawValue),
                          openAlerts: openAlertUUIDs,
                          channels: settings.targets.map { "\($0.channel.rawValue):\($0.target)" }, recent: [], storeProblem: nil,
                          serverRejects: serverRejects, call: newestCall, signal: signal, motion: watcher.motion(at: at).rawValue,
                          asking: watcher.pendingAskDeadline != nil)
    }

    // MARK: Clocks

    static func time(_ ns: UInt64) -> Timestamp { Timestamp(milliseconds: Int64(ns / 1_000_000)) }

    /// Wall-clock ms of a monotonic time: through GPS time when a fix gave it, else the system
    /// clock (which a Pi without RTC may have wrong; GPS is preferred for that reason).
    private func wallMs(_ time: Timestamp) -> Int64 {
        if let offset = wallMinusMonotonicMs { return time.milliseconds + offset }
        return time.milliseconds + now.wallMs - Int64(now.monotonicNs / 1_000_000)
    }

    /// Phone numbers are personal: the journal shows only their last three digits.
    static func redacted(_ key: Delivery.Key) -> String {
        key.channel == .sms ? "…" + String(key.target.suffix(3)) : key.target
    }

    static func format(_ value: Double) -> String {
        String(Double(Int((value * 10).rounded())) / 10)
    }
}
