import HTTPClient
import PacerContract
import Synchronization
import Threads

/// The device's side of the sync channel, on a thread and HTTP connection of its own (libcurl
/// blocks; an upload never holds it up): `GET /v1/device/sync` at start, every
/// `syncEverySeconds`, when the uplink reaches the cloud and at `pacerctl sync`; the heartbeat
/// `PUT /v1/device/state` every `stateEverySeconds` and when the state changes. New notices are
/// said one at a time, each once across restarts, and then acknowledged. Offline, the last sync
/// (kept in the state directory) is used.
public final class CloudSync: Sendable {
    public enum Input: Sendable {
        /// The cloud may be reachable now (the uplink got through, the network came back).
        case wake(reason: String)
        /// Fetch now; `reply` gets what changed (`pacerctl sync`).
        case syncNow(reply: @Sendable (SyncReport) -> Void)
        /// The run's state may have changed: a heartbeat goes at once if it did.
        case stateChanged
        /// What became of the notice offered to the speaker (`NoticeDelivery.offered`).
        case noticeOutcome(text: String, said: Bool)
        case reload(SyncSettings)
        case shutdown(done: @Sendable () -> Void)
    }

    public let queue = BlockingQueue<Input>()
    private let lastRunState = Mutex<RunState?>(nil)

    /// What of the status a heartbeat reports at once when it changes.
    struct RunState: Equatable {
        var phase: String
        var inPrivatePlace: Bool?
    }

    public init() {}

    public func put(_ input: Input) { queue.put(input) }

    /// The run's state and whether the device is in a privacy zone, as the status says them, as
    /// often as it likes: only a change wakes the thread.
    public func runStateIs(_ phase: String, inPrivatePlace: Bool? = nil) {
        let state = RunState(phase: phase, inPrivatePlace: inPrivatePlace)
        let changed = lastRunState.withLock { last in
            defer { last = state }
            return last != nil && last != state
        }
        if changed { put(.stateChanged) }
    }

    /// Fetches at most this often on wakes (the uplink may get through every few seconds).
    static let minWakeIntervalNs: UInt64 = 10_000_000_000

    /// `state`: the heartbeat as of now (nil: not known, nothing is sent). `say`: offers a
    /// notice to the speaker. `plan`: the training plan in use, at start and on each change
    /// (its workout files are written already). `units`: the account's ("km", "mi"; nil: none),
    /// at start and on each change. All are called on the sync thread.
    /// `heartRate`: the days the heartbeat carries until the cloud took them.
    public func start(settings: SyncSettings, storePath: String, log: @escaping @Sendable (SyncLogLevel, String) -> Void,
                      state: @escaping @Sendable () -> DeviceState?, heartRate: HeartRateDays? = nil,
                      say: @escaping @Sendable (Notice) -> NoticeDelivery,
                      plan: @escaping @Sendable (DevicePlan?) -> Void = { _ in },
                      units: @escaping @Sendable (String?) -> Void = { _ in },
                      races: @escaping @Sendable ([DeviceRace]) -> Void = { _ in }) throws(ThreadStartError) {
        let queue = self.queue
        try DetachedThread.start {
            var session = HTTPSession(configuration: settings.client)
            let engine = SyncEngine(settings: settings, storePath: storePath,
                                    transport: { request throws(HTTPClientError) in try session.perform(request) }, log: log, onPlan: plan,
                                    onUnits: units, onRaces: races)
            var loop = SyncLoop(engine: engine, state: state, heartRate: heartRate, say: say, log: log)
            loop.offerNextNotice()
            while true {
                let now = MonotonicTime.nanoseconds()
                if let due = loop.due(at: now) {
                    loop.perform(due, at: now)
                    continue
                }
                guard let input = queue.take(until: loop.deadline) else { continue }
                if case .reload(let newSettings) = input, newSettings.client != session.configuration {
                    session = HTTPSession(configuration: newSettings.client)
                }
                if case .shutdown(let done) = input {
                    loop.finish()
                    done()
                    return
                }
                loop.handle(input, at: MonotonicTime.nanoseconds())
            }
        }
    }
}

/// What the speaker did with a notice offered to it.
public enum NoticeDelivery: Sendable, Equatable {
    /// Offered: its outcome comes back as `.noticeOutcome`.
    case offered
    /// Not now (muted): tried again at the next sync.
    case notNow
    /// There is no voice: the notice went to the journal only, and counts as said.
    case noVoice
}

/// The sync thread's schedule and the notice being said; times are CLOCK_MONOTONIC nanoseconds
/// passed in, so the schedule is tested without waiting.
struct SyncLoop {
    enum Work: Equatable {
        case fetch, heartbeat
    }

    var engine: SyncEngine
    let state: @Sendable () -> DeviceState?
    let heartRate: HeartRateDays?
    let say: @Sendable (Notice) -> NoticeDelivery
    let log: @Sendable (SyncLogLevel, String) -> Void
    private(set) var nextFetchNs: UInt64 = 0
    private(set) var nextHeartbeatNs: UInt64 = 0
    private var lastFetchNs: UInt64?
    /// The notice offered to the speaker, whose outcome is awaited.
    private(set) var saying: Notice?
    /// The speaker declined (muted, dropped): no notice is offered until the next fetch.
    private var holdNotices = false
    /// What the last heartbeat said of the run, SOS and privacy: a change sends one at once.
    private var lastSentState: (state: String, sos: Bool, inPrivatePlace: Bool?)?
    private var waitingReplies: [@Sendable (SyncReport) -> Void] = []

    init(engine: SyncEngine, state: @escaping @Sendable () -> DeviceState?, heartRate: HeartRateDays? = nil,
         say: @escaping @Sendable (Notice) -> NoticeDelivery, log: @escaping @Sendable (SyncLogLevel, String) -> Void) {
        self.engine = engine
        self.state = state
        self.heartRate = heartRate
        self.say = say
        self.log = log
        heartRate?.use(timezone: engine.cache?.sync.sections.profile?.timezone)
    }

    private var online: Bool { engine.settings.url != nil }

    var deadline: UInt64 { online ? min(nextFetchNs, nextHeartbeatNs) : .max }

    func due(at now: UInt64) -> Work? {
        guard online else { return nil }
        if now >= nextFetchNs { return .fetch }
        if now >= nextHeartbeatNs { return .heartbeat }
        return nil
    }

    mutating func perform(_ work: Work, at now: UInt64) {
        switch work {
        case .fetch:
            let report = engine.fetch(nowMs: WallClock.milliseconds())
            lastFetchNs = now
            nextFetchNs = now + Self.nanoseconds(engine.settings.syncEverySeconds)
            if report.reached { engine.acknowledge() }
            heartRate?.use(timezone: engine.cache?.sync.sections.profile?.timezone)
            holdNotices = false
            offerNextNotice()
            var final = report
            final.unsaid = engine.unsaid.count
            for reply in waitingReplies { reply(final) }
            waitingReplies = []
        case .heartbeat:
            nextHeartbeatNs = now + Self.nanoseconds(engine.settings.stateEverySeconds)
            defer { heartRate?.save(nowMs: WallClock.milliseconds(), force: false, log: log) }
            guard var current = state() else { return }
            let days = heartRate?.unsent()
            current.hr_daily = days
            if engine.sendState(current) {
                lastSentState = (current.state, current.sos_monitoring, current.in_private_place)
                if let days { heartRate?.accepted(days) }
            }
        }
    }

    mutating func handle(_ input: CloudSync.Input, at now: UInt64) {
        switch input {
        case .wake(let reason):
            guard online else { return }
            if let last = lastFetchNs, now &- last < CloudSync.minWakeIntervalNs { return }
            log(.info, "sync: \(reason); fetching now")
            nextFetchNs = now
        case .syncNow(let reply):
            guard online else {
                var report = SyncReport()
                report.error = "the sync channel is off (no [upload] url, or [upload] sync = false)"
                report.fetchedAt = engine.cache?.fetched_at
                report.unsaid = engine.unsaid.count
                reply(report)
                return
            }
            waitingReplies.append(reply)
            nextFetchNs = now
        case .stateChanged:
            guard online, let current = state() else { return }
            if let last = lastSentState, last.state == current.state, last.sos == current.sos_monitoring,
               last.inPrivatePlace == current.in_private_place { return }
            nextHeartbeatNs = now
        case .noticeOutcome(let text, let said):
            guard let notice = saying, Self.spoken(notice.text) == text else { return }
            saying = nil
            if said {
                engine.noticeSaid(notice.id)
                engine.acknowledge()
                offerNextNotice()
            } else {
                holdNotices = true
            }
        case .reload(let settings):
            engine.settings = settings
            nextFetchNs = now
            nextHeartbeatNs = now
        case .shutdown:
            finish()
        }
    }

    /// Offers the oldest notice not said yet, unless one is being said or the speaker declined.
    mutating func offerNextNotice() {
        while saying == nil, !holdNotices, var notice = engine.unsaid.first {
            notice.text = Self.spoken(notice.text)
            switch say(notice) {
            case .offered:
                saying = notice
            case .notNow:
                holdNotices = true
            case .noVoice:
                engine.noticeSaid(notice.id)
                engine.acknowledge()
            }
        }
    }

    /// Answers whoever waits for a fetch that will not come.
    mutating func finish() {
        heartRate?.save(nowMs: WallClock.milliseconds(), force: true, log: log)
        var report = SyncReport()
        report.error = "pacerd is stopping"
        for reply in waitingReplies { reply(report) }
        waitingReplies = []
    }

    /// The text as said: cleaned again here, whatever the cloud sent.
    static func spoken(_ text: String) -> String {
        String(NoticeText.clean(text).prefix(NoticeText.maxLength))
    }

    static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(max(1, seconds) * 1e9) }
}
