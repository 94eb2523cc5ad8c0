import HTTPClient
import PacerContract
import PacerCore
import Store
import Synchronization
import Threads

#if canImport(Glibc)
import Glibc
#endif

/// Store and forward: finished runs and the live position go to the cloud whenever it can be
/// reached. One thread of its own (SQLite and libcurl block), a queue of wake-ups, and the
/// outbox in the run store, so nothing is lost to a dead network, a reboot or a failing server.
///
/// Each round: finished runs not yet packaged are packaged into the outbox; then the outbox is
/// sent in its order (live position first, then the oldest run chunk by chunk, its summary last);
/// the first failure ends the round and the next waits out a backoff (exponential, jittered,
/// capped at 5 minutes; a 429's Retry-After, which no wake shortens) unless something wakes it
/// first: a finished run, `pacerctl sync`, the network coming back. An item the server refuses
/// for good (`UploadVerdict.permanentRefusals`) is set aside in the store and the round goes on,
/// so one bad chunk or position never holds back the rest.
public final class Uplink: Sendable {
    public enum Input: Sendable {
        /// Try now (sync, network change, a run finished).
        case wake(reason: String)
        /// Where the runner is (only the newest is kept; not from inside a privacy zone).
        case position(LivePosition, latitude: Double, longitude: Double)
        /// A position in race mode: kept in the store until the race's cloud took it (never cut
        /// by privacy zones: the runner chose to be followed along the course).
        case racePosition(RacePositionRecord)
        case reload(UplinkSettings)
        /// The run held back at start (`start(holding:)`) is decided: continued (it records again)
        /// or left interrupted (it is now to be uploaded like a finished run).
        case releaseHeldRun(reason: String)
        case shutdown(done: @Sendable () -> Void)
    }

    public let queue = BlockingQueue<Input>()
    private let state = Mutex(UplinkStatus())

    public init() {}

    /// Failures in a row, the last error and when the next try is, for `pacerctl status`.
    public var status: UplinkStatus { state.withLock { $0 } }

    public func put(_ input: Input) { queue.put(input) }

    /// `holding`: an interrupted run the daemon may still continue (its first fix decides). It is
    /// not packaged until `.releaseHeldRun`: packaged now, its outbox would be fixed at the part
    /// recorded before the crash, and once it was continued the rest would never be sent (the run
    /// is no longer `pending`) while the server kept the truncated run (found by tools/soak).
    public func start(settings: UplinkSettings, storePath: String, log: @escaping @Sendable (UplinkLogLevel, String) -> Void,
                      holding heldRunID: Int64? = nil,
                      onRound: @escaping @Sendable (UplinkRound) -> Void = { _ in },
                      onRace: @escaping @Sendable (String, RaceAnswer) -> Void = { _, _ in }) throws(ThreadStartError) {
        let queue = self.queue
        let uplink = self
        state.withLock { $0.enabled = settings.url != nil }
        try DetachedThread.start {
            var engine = UplinkEngine(settings: settings, storePath: storePath, log: log, onRace: onRace)
            engine.heldRunID = heldRunID
            var nextAttemptNs: UInt64 = 0  // at once: something may be owed from before
            var notBeforeNs: UInt64 = 0  // a 429's wait, which no wake shortens
            var lastRoundNs: UInt64 = 0
            while true {
                let now = MonotonicTime.nanoseconds()
                let deadline = nextAttemptNs > now ? nextAttemptNs : now
                if nextAttemptNs <= now {
                    let round = engine.round()
                    lastRoundNs = MonotonicTime.nanoseconds()
                    onRound(round)
                    nextAttemptNs = round.retryAfterSeconds.map { MonotonicTime.nanoseconds() + UInt64($0 * 1e9) } ?? .max
                    notBeforeNs = round.serverAskedToWait ? nextAttemptNs : 0
                    uplink.state.withLock {
                        $0.failuresInARow = round.failure == nil ? 0 : $0.failuresInARow + 1
                        if let failure = round.failure { $0.lastError = failure }
                        $0.nextAttemptNs = nextAttemptNs == .max ? nil : nextAttemptNs
                    }
                    continue
                }
                guard let input = queue.take(until: deadline) else { continue }
                switch input {
                case .wake(let reason):
                    engine.woken(reason)
                    nextAttemptNs = notBeforeNs
                case .position(let position, let latitude, let longitude):
                    if engine.queue(position, latitude: latitude, longitude: longitude) { nextAttemptNs = min(nextAttemptNs, engine.positionSendNs()) }
                case .racePosition(let position):
                    // Each is due every `[race] position_every_s`: one round (one request when
                    // nothing waits) per position, while no backoff runs.
                    // While backing off, a race position shortens the wait to `raceRetrySeconds`
                    // after the last try: a race's leaderboard cannot wait the backoff's 5
                    // minutes once the link returns, and that is still one request per period.
                    if engine.queue(position) {
                        let raceRetryNs = lastRoundNs + UInt64(UplinkEngine.raceRetrySeconds * 1e9)
                        nextAttemptNs = max(notBeforeNs, min(nextAttemptNs, engine.positionSendNs(), raceRetryNs))
                    }
                case .reload(let newSettings):
                    engine.settings = newSettings
                    uplink.state.withLock { $0.enabled = newSettings.url != nil }
                    nextAttemptNs = 0
                case .releaseHeldRun(let reason):
                    guard engine.heldRunID != nil else { continue }
                    engine.heldRunID = nil
                    engine.woken(reason)
                    nextAttemptNs = 0
                case .shutdown(let done):
                    done()
                    return
                }
            }
        }
    }
}

/// The uplink as `pacerctl status` shows it.
public struct UplinkStatus: Sendable, Equatable {
    /// An upload URL is configured.
    public var enabled = false
    public var failuresInARow = 0
    public var lastError: String?
    /// CLOCK_MONOTONIC of the next try while backing off; nil when waiting to be woken.
    public var nextAttemptNs: UInt64?
}

/// What one round did, for the log and tools/bench-upload.
public struct UplinkRound: Sendable, Equatable {
    public var sent: Int = 0
    public var bytes: Int = 0
    public var runsCompleted: [String] = []
    public var failure: String?
    /// The reasons of items the server refused for good in this round (set aside, not retried).
    public var setAside: [String] = []
    /// nil: nothing left, wait to be woken.
    public var retryAfterSeconds: Double?
    /// The server answered 429: the wait holds even when something wakes the uplink.
    public var serverAskedToWait = false
}

/// `[upload]` as the uplink needs it.
public struct UplinkSettings: Sendable, Equatable {
    public var url: String?
    public var token: String?
    public var client: HTTPClient.Configuration
    public var privacyZones: [PrivacyZone]
    public var livePositionEverySeconds: Double
    public var requestTimeoutSeconds: Double
    public var retry: RetrySchedule

    public init(url: String?, token: String?, client: HTTPClient.Configuration, privacyZones: [PrivacyZone] = [],
                livePositionEverySeconds: Double = 30, requestTimeoutSeconds: Double = 30, retry: RetrySchedule = RetrySchedule()) {
        self.url = url
        self.token = token
        self.client = client
        self.privacyZones = privacyZones
        self.livePositionEverySeconds = livePositionEverySeconds
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.retry = retry
    }
}

/// The uplink's state, owned by its thread.
struct UplinkEngine {
    var settings: UplinkSettings
    let storePath: String
    let log: @Sendable (UplinkLogLevel, String) -> Void
    /// What the cloud answered to race positions (the place, or a race refusing them).
    let onRace: @Sendable (String, RaceAnswer) -> Void
    private var store: RunStore?
    var failures = 0
    private var lastProblem: String?
    /// Races that refused this device's positions for good (404), and why: what is queued for
    /// them later is set aside at once.
    var refusedRaces: [String: String] = [:]
    var lastRaceRefusal: String?
    private var lastPositionRefusal: String?
    private var lastPositionQueuedNs: UInt64 = 0
    /// The interrupted run the daemon may still continue: not packaged yet (see `Uplink.start`).
    var heldRunID: Int64?

    init(settings: UplinkSettings, storePath: String, log: @escaping @Sendable (UplinkLogLevel, String) -> Void,
         onRace: @escaping @Sendable (String, RaceAnswer) -> Void = { _, _ in }) {
        self.settings = settings
        self.storePath = storePath
        self.log = log
        self.onRace = onRace
    }

    mutating func woken(_ reason: String) {
        // A wake is news (the network is back, someone asked): try at once. The failure count
        // stays, so a success still says the server is reachable again; a new failure then
        // backs off from the first step.
        wokenSinceFailure = failures > 0
        log(.info, "upload: \(reason); trying now")
    }

    var wokenSinceFailure = false

    /// Keeps the newest position, at most every `livePositionEverySeconds`. True when queued.
    mutating func queue(_ position: LivePosition, latitude: Double, longitude: Double) -> Bool {
        guard settings.url != nil, settings.livePositionEverySeconds > 0 else { return false }
        let now = MonotonicTime.nanoseconds()
        guard now &- lastPositionQueuedNs >= UInt64(settings.livePositionEverySeconds * 1e9) else { return false }
        guard !settings.privacyZones.hides(Coordinate(latitude: latitude, longitude: longitude)) else { return false }
        guard let store = openStore() else { return false }
        do {
            try store.setLivePosition(position.json, at: Timestamp(milliseconds: Int64(now / 1_000_000)))
            lastPositionQueuedNs = now
            return true
        } catch {
            log(.warning, "upload: cannot queue the live position: \(error)")
            return false
        }
    }

    /// In race mode (a race position queued), a failed round is retried at most this long after it.
    static let raceRetrySeconds = 5.0

    /// The live position goes out at once unless a backoff is running (it is then first in line).
    func positionSendNs() -> UInt64 { failures == 0 ? 0 : .max }

    mutating func round() -> UplinkRound {
        var round = UplinkRound()
        guard let url = settings.url else { return round }
        guard let store = openStore() else {
            round.retryAfterSeconds = settings.retry.capSeconds
            return round
        }
        packageFinishedRuns(store)
        // One session per round: its requests share a connection and a TLS handshake.
        let session = HTTPSession(configuration: settings.client)
        let timeout = Duration.milliseconds(Int64(settings.requestTimeoutSeconds * 1000))
        // A race's positions go ahead of the runs' backlog (issue #34: "ahead of any backlog").
        guard sendRacePositions(store, session: session, url: url, timeout: timeout, round: &round) else { return round }
        while true {
            let item: OutboxItem?
            do { item = try store.nextOutboxItem() } catch {
                log(.error, "upload: cannot read the outbox: \(error)")
                round.retryAfterSeconds = settings.retry.capSeconds
                return round
            }
            guard let item else { break }
            let request = UplinkRequest.make(item, baseURL: url, token: settings.token, timeout: timeout)
            let problem: String?
            let verdict: UploadVerdict
            // After a wake a new failure backs off from the first step (see `woken`).
            let failuresBefore = wokenSinceFailure ? 0 : failures
            var tooManyRequests = false
            do {
                let response = try session.perform(request)
                problem = response.isSuccess ? nil : "HTTP \(response.status)" + Self.said(response)
                tooManyRequests = response.status == 429
                verdict = UploadVerdict.decide(status: response.status, retryAfter: response.header("Retry-After"), failures: failuresBefore + 1,
                                               schedule: settings.retry, random: Double.random(in: 0..<1), now: Self.wallNow())
            } catch {
                problem = "\(error)"
                verdict = UploadVerdict.decide(status: nil, retryAfter: nil, failures: failuresBefore + 1, schedule: settings.retry,
                                               random: Double.random(in: 0..<1), now: Self.wallNow())
            }
            if verdict.isSettled { settled(url) }
            switch verdict {
            case .accepted:
                break
            case .setAside:
                // The server answered, so it is reachable: no backoff, on to the next item.
                let reason = problem ?? "refused"
                do {
                    try store.setAside(item, error: reason, at: Self.wallNow())
                } catch {
                    log(.error, "upload: cannot set aside \(UplinkRequest.describe(item)), refused by the server (\(reason)): \(error)")
                    round.failure = reason
                    round.retryAfterSeconds = settings.retry.capSeconds
                    return round
                }
                // Once per item (it is never sent again); positions, replaced every few seconds,
                // once per distinct reason.
                if item.kind != .position || reason != lastPositionRefusal {
                    log(.warning, "upload of \(UplinkRequest.describe(item)) refused by the server: \(reason); set aside, not retried")
                }
                if item.kind == .position { lastPositionRefusal = reason }
                round.setAside.append(reason)
                continue
            case .retry(let delay):
                try? store.uploadFailed(item, error: problem ?? "HTTP ?")
                failed(UplinkRequest.describe(item), problem ?? "HTTP ?", delay: delay, failuresBefore: failuresBefore, tooManyRequests: tooManyRequests,
                       round: &round)
                return round
            }
            round.sent += 1
            round.bytes += item.payload.count
            do {
                try store.acknowledge(item, at: Self.wallNow())
            } catch {
                // Sent but not noted: it goes again (the server keeps it once).
                log(.error, "upload: \(UplinkRequest.describe(item)) was accepted but could not be noted: \(error)")
                round.retryAfterSeconds = settings.retry.capSeconds
                return round
            }
            if case .summary(let uuid) = item.kind {
                round.runsCompleted.append(uuid)
                log(.notice, "upload: run \(item.runID.map(String.init) ?? "?") (\(uuid)) is in the cloud")
            }
        }
        return round
    }

    /// The server answered as it should: reachable (again).
    mutating func settled(_ url: String) {
        if failures > 0 { log(.notice, "upload: \(url) reachable again after \(failures) failed attempt(s)") }
        failures = 0
        lastProblem = nil
    }

    /// A request failed in a way worth retrying: the round ends, the next waits `delay`.
    mutating func failed(_ what: String, _ problem: String, delay: Double, failuresBefore: Int, tooManyRequests: Bool, round: inout UplinkRound) {
        failures = failuresBefore + 1
        wokenSinceFailure = false
        if problem != lastProblem || failures <= 3 || failures % 10 == 0 {
            log(.warning, "upload of \(what) failed (\(failures) in a row): \(problem); retrying in \(Int(delay.rounded())) s")
        }
        lastProblem = problem
        round.failure = problem
        round.retryAfterSeconds = delay
        round.serverAskedToWait = tooManyRequests
    }

    /// Finished runs into the outbox: chunks and summary fixed once, so retries resend the same.
    private mutating func packageFinishedRuns(_ store: RunStore) {
        let runs: [StoredRun]
        do { runs = try store.runsToEnqueue() } catch {
            log(.error, "upload: cannot list runs to upload: \(error)")
            return
        }
        for run in runs where run.id != heldRunID {
            do {
                let track = try store.track(run.id)
                let packaged = try RunPackage.make(run, samples: track.samples, heartRate: track.heartRate, zones: settings.privacyZones)
                try store.enqueue(runID: run.id, chunks: packaged.chunks, summary: packaged.summary, at: Self.wallNow())
                let bytes = packaged.chunks.reduce(0) { $0 + $1.count }
                log(.info, "upload: run \(run.id) queued: \(packaged.chunks.count) chunk(s), \(bytes) bytes gzipped from \(packaged.trackBytes)")
            } catch {
                log(.error, "upload: cannot package run \(run.id): \(error); it stays pending")
            }
        }
    }

    mutating func openStore() -> RunStore? {
        if let store { return store }
        do {
            store = try RunStore(path: storePath, cacheKiB: 256)
        } catch {
            log(.error, "upload: cannot open the run store: \(error)")
        }
        return store
    }

    /// The server's words, bounded and on one line: they go to the journal and the store.
    static func said(_ response: HTTPResponse) -> String {
        let text = String(decoding: response.body.prefix(200), as: UTF8.self)
            .map { $0.isNewline || $0.asciiValue.map { $0 < 32 || $0 == 127 } == true ? " " : String($0) }.joined()
        return text.isEmpty ? "" : ": \(text)"
    }

    static func wallNow() -> Timestamp { Timestamp(milliseconds: WallClock.milliseconds()) }
}

public enum UplinkLogLevel: Sendable {
    case error, warning, notice, info
}
