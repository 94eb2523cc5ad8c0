import ModemManager
import PacerCore
import Threads

#if canImport(Glibc)
import Glibc
#endif

/// The lane's executor, owned by its thread and never shared: no locks. The decisions are
/// `LaneCore`'s; this carries out its actions (sos.db, the commit wait, channels, the call,
/// speech, the journal, status) and hands what comes of them back to it as inputs.
final class LaneState {
    private(set) var core: LaneCore
    private let store: AlertStore?
    private let channels: [AlertChannelName: any AlertChannel]
    private let caller: AlertCaller?
    private let queue: BlockingQueue<LaneInput>
    private let log: LaneLog
    private let onCue: @Sendable (Cue, UInt64) -> Void
    private let onTiming: @Sendable (AlertTiming) -> Void
    private let onAsking: @Sendable (Bool) -> Void
    private let health: LaneHealth
    /// Both clocks, read once per input (and once per outcome an action hands back).
    let clock: () -> LaneClock
    /// Calls Start answered for, by alert UUID: hung up from here.
    private var placedCalls: [String: PlacedCall] = [:]
    private var callAudio: [String: any CallAudio] = [:]
    /// What `health.openAlerts` says now: written only when it changes.
    private var publishedOpenAlerts: Set<String> = []

    static let commitWaitNs = LaneCore.commitWaitNs

    init(settings: LaneSettings, store: AlertStore?, channels: [any AlertChannel], caller: AlertCaller? = nil, queue: BlockingQueue<LaneInput>,
         health: LaneHealth,
         log: @escaping LaneLog, onCue: @escaping @Sendable (Cue, UInt64) -> Void, onTiming: @escaping @Sendable (AlertTiming) -> Void,
         onAsking: @escaping @Sendable (Bool) -> Void = { _ in }, clock: @escaping () -> LaneClock = LaneClock.read) {
        self.channels = Dictionary(channels.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        core = LaneCore(settings: settings, channels: Set(self.channels.keys), canCall: caller != nil)
        self.store = store
        self.caller = caller
        self.queue = queue
        self.health = health
        self.log = log
        self.onCue = onCue
        self.onTiming = onTiming
        self.onAsking = onAsking
        self.clock = clock
    }

    // MARK: Inputs

    func handle(_ input: LaneInput) { handle(input, now: clock()) }

    func handle(_ input: LaneInput, now: LaneClock) {
        switch input {
        case .rehearse(let reply):
            reply(rehearse())
        case .callPlaced(let uuid, let result):
            if case .success(let placed) = result { placedCalls[uuid] = placed }
            run(.callStarted(alertUUID: uuid, result.map { CallPlacement(modem: $0.modem, path: $0.path) }), now)
        case .callState(let uuid, .terminated):
            placedCalls[uuid] = nil
            run(.lane(input), now)
        default:
            run(.lane(input), now) { Self.answer(input, with: $0) }
        }
    }

    /// Gives the core's answer to the closure the input came with.
    private static func answer(_ input: LaneInput, with reply: LaneReply) {
        switch (input, reply) {
        case (.raise(_, let give), .raised(let result)): give(result)
        case (.cancel(let give), .cancelled(let result)): give(result)
        case (.test(let give), .tested(let result)): give(result)
        case (.status(let give), .status(let status)): give(status)
        default: break
        }
    }

    /// When a held button next needs a look (CLOCK_MONOTONIC).
    var buttonDeadlineNs: UInt64? { core.buttonDeadlineNs }

    func tick(nowNs: UInt64) { tick(now: clock().at(monotonicNs: nowNs)) }
    func tick(now: LaneClock) { run(.tick, now) }

    func advanceButtons(nowNs: UInt64) { advanceButtons(now: clock().at(monotonicNs: nowNs)) }
    func advanceButtons(now: LaneClock) { run(.buttonsDue, now) }

    /// Deliveries owed from before a restart go out at once; alerts left open are adopted.
    func resumeOwedDeliveries() {
        guard let store else { return }
        let open = Result { () throws(AlertStoreError) in try store.openAlerts() }
        let pending = Result { () throws(AlertStoreError) in try store.pending() }
        run(.restore(open: open, pending: pending), clock())
    }

    func shutDown() { run(.lane(.shutdown(done: {})), clock()) }

    // MARK: Actions

    private func run(_ input: LaneCoreInput, _ now: LaneClock, reply: (LaneReply) -> Void = { _ in }) {
        for action in core.handle(input, now: now) { execute(action, reply: reply) }
        let open = Set(core.openAlertUUIDs)
        if open != publishedOpenAlerts {
            publishedOpenAlerts = open
            health.setOpenAlerts(open)
        }
    }

    private func execute(_ action: LaneAction, reply: (LaneReply) -> Void) {
        switch action {
        case .log(let level, let message, let fields):
            log(level, message, fields)
        case .say(let cue, let atNs):
            onCue(cue, atNs)
        case .asking(let asking):
            onAsking(asking)
        case .timing(let timing):
            onTiming(timing)
        case .publishServerRejects(let status):
            health.setServerRejects(status)
        case .publishCall(let call):
            health.setCall(call)
        case .commitAlert(let record, let message, let memoryID, let waitUntilNs):
            run(.commitWaited(messageID: memoryID, commit(record, message, memoryID: memoryID, waitUntilNs: waitUntilNs)), clock(), reply: reply)
        case .storeMessage(let message, let uuid, let state, let memoryID):
            let result = Result { () throws(AlertStoreError) in
                guard let store else { throw AlertStoreError("no SOS store") }
                return try store.add(message, toAlert: uuid, state: state)
            }
            run(.messageStored(messageID: memoryID, result), clock(), reply: reply)
        case .storeWrite(let write, let fields, let unrecorded):
            guard let store else { return }
            do throws(AlertStoreError) {
                switch write {
                case .acknowledged(let key, let atMs): try store.acknowledged(key, atMs: atMs)
                case .failed(let key, let error, let atMs): try store.failed(key, error: error, atMs: atMs)
                case .replaced(let key, let atMs): try store.replaced(key, atMs: atMs)
                case .reported(let key, let state, let atMs): try store.reported(key, state: state, atMs: atMs)
                }
            } catch {
                log(.error, "\(error)" + (unrecorded.isEmpty ? "" : ": \(unrecorded)"), fields)
            }
        case .startAttempt(let delivery, let attempt, let timeout, let startedNs):
            // The core fails the attempts of channels this pacerd does not have.
            guard let channel = channels[delivery.key.channel] else { return }
            let queue = self.queue
            Task.detached {
                let result = await channel.deliver(delivery, timeout: timeout)
                queue.put(.delivered(delivery.key, attempt: attempt, result, startedNs: startedNs))
            }
        case .noteCall(let uuid, let atMs):
            // No store: the call goes ahead (a restart never calls, so there is no second call).
            let first = Result { () throws(AlertStoreError) in try store?.callPlaced(alert: uuid, atMs: atMs) ?? true }
            run(.callNoted(alertUUID: uuid, first), clock(), reply: reply)
        case .placeCall(let uuid, let number, let timeout):
            guard let caller else { return }
            let queue = self.queue
            Task.detached {
                let result = await caller.place(to: number, timeout: timeout) { state in
                    queue.put(.callState(alertUUID: uuid, state))
                }
                queue.put(.callPlaced(alertUUID: uuid, result))
            }
        case .hangUp(let uuid):
            guard let placed = placedCalls[uuid] else { return }
            let log = self.log
            Task.detached {
                do {
                    try await placed.hangUp(timeout: .seconds(10))
                } catch {
                    log(.error, "SOS alert \(uuid): the call could not be hung up: \(error)",
                        ["SOS_ALERT_ID": uuid, "SOS_CHANNEL": "call", "MESSAGE_ID": LaneCore.journalMessageID, "SOS_STAGE": "call_hangup_failed"])
                }
            }
        case .startCallAudio(let uuid, let text):
            // One per call; a device that could not be opened is tried again when it is active again.
            guard callAudio[uuid] == nil, let audio = caller?.audio?() else { return }
            callAudio[uuid] = audio
            audio.start(saying: text)
        case .stopCallAudio(let uuid):
            callAudio.removeValue(forKey: uuid)?.stop()
        case .storeCallState(let state, let uuid):
            do {
                try store?.setCallState(state, alert: uuid)
            } catch {
                log(.warning, "\(error)", ["SOS_ALERT_ID": uuid])
            }
        case .reply(.status(var status)):
            do { status.recent = try store?.recent(limit: 10) ?? [] } catch { status.storeProblem = "\(error)" }
            reply(.status(status))
        case .reply(let answer):
            reply(answer)
        }
    }

    /// The commit runs on a thread of its own; the lane waits for it until `waitUntilNs` at most.
    /// nil: still running (its outcome comes later as `.committed`).
    private func commit(_ record: AlertStore.NewAlert, _ message: AlertStore.NewMessage, memoryID: Int64,
                        waitUntilNs: UInt64) -> Result<[Delivery], AlertStoreError>? {
        guard let store else { return .failure(AlertStoreError("no SOS store (it could not be opened at start)")) }
        let queue = self.queue
        let commit = AlertCommit.start(late: { queue.put(.committed(messageID: memoryID, $0)) }) {
            () throws(AlertStoreError) -> [Delivery] in try store.record(record, message: message)
        }
        return commit.wait(until: waitUntilNs)
    }

    /// Runs the alert path on copies (`LaneCore.rehearse`) and measures what it cost this thread.
    private func rehearse() -> LaneRehearsal {
        let before = Self.threadFaults()
        let start = clock()
        _ = core.rehearse(now: start)
        let after = Self.threadFaults()
        return LaneRehearsal(minorFaults: after.minor - before.minor, majorFaults: after.major - before.major,
                             microseconds: Int((clock().monotonicNs &- start.monotonicNs) / 1000))
    }

    /// Page faults of the calling thread so far (getrusage RUSAGE_THREAD: the rest of pacerd's
    /// threads do not count).
    private static func threadFaults() -> (minor: Int, major: Int) {
        var usage = rusage()
        // RUSAGE_THREAD is 1 on Linux; Swift's Glibc module leaves it out (it needs _GNU_SOURCE).
        guard getrusage(__rusage_who_t(1), &usage) == 0 else { return (0, 0) }
        return (usage.ru_minflt, usage.ru_majflt)
    }
}
