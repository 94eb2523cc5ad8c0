import FoundationEssentials
import HTTPClient
import PacerContract

/// The cloud and how often to ask it, as the sync thread needs them.
public struct SyncSettings: Sendable, Equatable {
    /// "https://pacer.example.org"; nil: no cloud, nothing is fetched (the cached sync is still used).
    public var url: String?
    public var token: String?
    public var client: HTTPClient.Configuration
    /// `GET /v1/device/sync` every this many seconds while the cloud answers.
    public var syncEverySeconds: Double
    /// The heartbeat (`PUT /v1/device/state`) every this many seconds, and at once on a change of state.
    public var stateEverySeconds: Double
    public var requestTimeoutSeconds: Double
    /// `[profile] max_hr_bpm` when set, sent with every heartbeat.
    public var maxHeartRateBpm: Int?

    public init(url: String?, token: String?, client: HTTPClient.Configuration, syncEverySeconds: Double = 60,
                stateEverySeconds: Double = 60, requestTimeoutSeconds: Double = 15, maxHeartRateBpm: Int? = nil) {
        self.url = url
        self.token = token
        self.client = client
        self.syncEverySeconds = syncEverySeconds
        self.stateEverySeconds = stateEverySeconds
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.maxHeartRateBpm = maxHeartRateBpm
    }
}

/// What one fetch found, for `pacerctl sync`.
public struct SyncReport: Sendable, Equatable {
    /// The cloud answered (200 or 304).
    public var reached = false
    /// Why it did not, or why its answer was not used.
    public var error: String?
    /// The sections whose version changed (all of them at the first sync).
    public var changed: [String] = []
    public var newNotices = 0
    /// When the sync in use was fetched (`Time`); nil: there is none yet.
    public var fetchedAt: String?
    /// Notices fetched and not said yet.
    public var unsaid = 0

    public init() {}
}

public enum SyncLogLevel: Sendable {
    case error, warning, notice, info
}

/// The last sync as kept in the state directory (`cloud-sync.json`): used at start and offline.
struct SyncCache: Codable, Equatable {
    var etag: String?
    var fetched_at: String
    var sync: DeviceSync
}

/// The notices said (`cloud-notices.json`): so each is said once across restarts, and those not
/// acknowledged yet are acknowledged once the cloud answers.
struct SaidNotices: Codable, Equatable {
    var said: [String]
    var unacknowledged: [String]
}

/// The sync channel's state and requests, owned by the sync thread. Each request is made
/// through `transport` (the thread's own HTTP session, so it never waits behind an upload).
struct SyncEngine {
    var settings: SyncSettings
    let cacheFile: SyncFile
    let saidFile: SyncFile
    let transport: (HTTPRequest) throws(HTTPClientError) -> HTTPResponse
    let log: @Sendable (SyncLogLevel, String) -> Void
    /// The plan in use: given once at start (from the last sync) and whenever a fetch changes it.
    let onPlan: @Sendable (DevicePlan?) -> Void
    /// The account's units ("km", "mi"; nil: none known): given once at start and on each change.
    let onUnits: @Sendable (String?) -> Void
    /// The runner's races (the `races` section; empty: none): given once at start and on each change.
    let onRaces: @Sendable ([DeviceRace]) -> Void
    let planFiles: PlanFiles
    private(set) var cache: SyncCache?
    private(set) var said: Set<String> = []
    private(set) var unacknowledged: Set<String> = []
    private var lastProblem: String?
    private var failures = 0

    init(settings: SyncSettings, storePath: String, transport: @escaping (HTTPRequest) throws(HTTPClientError) -> HTTPResponse,
         log: @escaping @Sendable (SyncLogLevel, String) -> Void, onPlan: @escaping @Sendable (DevicePlan?) -> Void = { _ in },
         onUnits: @escaping @Sendable (String?) -> Void = { _ in }, onRaces: @escaping @Sendable ([DeviceRace]) -> Void = { _ in }) {
        self.settings = settings
        self.transport = transport
        self.log = log
        self.onPlan = onPlan
        self.onUnits = onUnits
        self.onRaces = onRaces
        planFiles = PlanFiles(storePath: storePath)
        cacheFile = SyncFile(beside: storePath, name: "cloud-sync.json")
        saidFile = SyncFile(beside: storePath, name: "cloud-notices.json")
        do {
            if let bytes = try cacheFile.read() { cache = try JSONDecoder().decode(SyncCache.self, from: Data(bytes)) }
        } catch {
            log(.warning, "sync: the last sync (\(cacheFile.path)) cannot be used: \(error); the next one replaces it")
        }
        do {
            if let bytes = try saidFile.read() {
                let record = try JSONDecoder().decode(SaidNotices.self, from: Data(bytes))
                said = Set(record.said)
                unacknowledged = Set(record.unacknowledged)
            }
        } catch {
            log(.error, "sync: which notices were said (\(saidFile.path)) cannot be read: \(error); notices fetched again may be said again")
        }
        // Offline from the start, the last plan fetched is the plan; its files are made whole again.
        usePlan()
        onUnits(cache?.sync.sections.profile?.units)
        onRaces(cache?.sync.sections.races?.races ?? [])
    }

    /// The plan of the sync in use: its workout files written, what cannot run journaled, and
    /// the pipeline told.
    private func usePlan() {
        let plan = cache?.sync.sections.plan.map(DevicePlan.init)
        for problem in plan?.problems ?? [] { log(.warning, "sync: \(problem)") }
        for (level, note) in planFiles.write(plan) { log(level, "sync: \(note)") }
        onPlan(plan)
    }

    /// The notices of the sync in use not said yet, oldest first.
    var unsaid: [Notice] { cache?.sync.sections.notices?.items.filter { !said.contains($0.id) } ?? [] }

    private func headers(json: Bool = false) -> [(String, String)] {
        var headers: [(String, String)] = [("Accept", "application/json")]
        if let token = settings.token { headers.append(("Authorization", "Bearer \(token)")) }
        if json { headers.append(("Content-Type", "application/json")) }
        return headers
    }

    private func request(_ method: String, _ path: String, headers: [(String, String)], body: [UInt8] = []) throws(HTTPClientError) -> HTTPResponse {
        let timeout = Duration.milliseconds(Int64(settings.requestTimeoutSeconds * 1000))
        return try transport(HTTPRequest(method: method, url: (settings.url ?? "") + path, headers: headers, body: body, timeout: timeout,
                                         connectTimeout: min(timeout, .seconds(10))))
    }

    /// `GET /v1/device/sync` with the cached ETag; a new sync replaces the cache.
    mutating func fetch(nowMs: Int64) -> SyncReport {
        var report = fetchOnce(nowMs: nowMs)
        report.fetchedAt = cache?.fetched_at
        report.unsaid = unsaid.count
        return report
    }

    private mutating func fetchOnce(nowMs: Int64) -> SyncReport {
        var report = SyncReport()
        guard settings.url != nil else {
            report.error = "the sync channel is off (no [upload] url, or [upload] sync = false)"
            return report
        }
        var headers = headers()
        if let etag = cache?.etag { headers.append(("If-None-Match", etag)) }
        let response: HTTPResponse
        do {
            response = try request("GET", "/v1/device/sync", headers: headers)
        } catch {
            report.error = problem("\(error)")
            return report
        }
        guard response.status == 200 || response.status == 304 else {
            report.error = problem("HTTP \(response.status)" + Self.said(response))
            return report
        }
        reachable()
        report.reached = true
        guard response.status == 200 else { return report }
        let sync: DeviceSync
        do {
            sync = try JSONDecoder().decode(DeviceSync.self, from: Data(response.body))
        } catch {
            report.error = problem("the cloud's sync is not understood (\(error)); the last one stays in use")
            return report
        }
        let before = Dictionary(cache?.sync.sections.versions ?? [], uniquingKeysWith: { first, _ in first })
        report.changed = sync.sections.versions.filter { before[$0.name] != $0.version }.map(\.name)
        let known = Set(cache?.sync.sections.notices?.items.map(\.id) ?? [])
        let fetched = sync.sections.notices?.items.map(\.id) ?? []
        report.newNotices = fetched.filter { !known.contains($0) }.count
        let planBefore = cache?.sync.sections.plan
        let unitsBefore = cache?.sync.sections.profile?.units
        let racesBefore = cache?.sync.sections.races
        cache = SyncCache(etag: response.header("ETag"), fetched_at: WireTime.text(milliseconds: nowMs), sync: sync)
        save(cache)
        if sync.sections.plan != planBefore { usePlan() }
        if sync.sections.races != racesBefore { onRaces(sync.sections.races?.races ?? []) }
        if let units = sync.sections.profile?.units, units != unitsBefore {
            log(.info, "sync: the account reads \(units == "mi" ? "miles" : "kilometres"): the coach speaks them from the next run")
            onUnits(units)
        } else if sync.sections.profile?.units == nil, unitsBefore != nil {
            onUnits(nil)
        }
        // A notice the cloud no longer lists was acknowledged (or is gone): nothing more to remember of it.
        let listed = Set(fetched)
        if !said.isSubset(of: listed) || !unacknowledged.isSubset(of: listed) {
            said.formIntersection(listed)
            unacknowledged.formIntersection(listed)
            saveSaid()
        }
        if !report.changed.isEmpty {
            log(.info, "sync: \(report.changed.joined(separator: ", ")) changed" + (report.newNotices > 0 ? "; \(report.newNotices) new notice(s)" : ""))
        }
        return report
    }

    /// The notice `id` was said: remembered before it is acknowledged, so a restart between the
    /// two never says it again.
    mutating func noticeSaid(_ id: String) {
        said.insert(id)
        unacknowledged.insert(id)
        saveSaid()
    }

    /// `POST /v1/device/sync/ack` for the notices said and not yet acknowledged.
    mutating func acknowledge() {
        guard settings.url != nil, !unacknowledged.isEmpty else { return }
        let ids = Array(unacknowledged.sorted().prefix(NoticeAck.maxIDs))
        guard let body = Self.json(NoticeAck(notice_ids: ids)) else { return }
        let response: HTTPResponse
        do {
            response = try request("POST", "/v1/device/sync/ack", headers: headers(json: true), body: body)
        } catch {
            _ = problem("\(error)")
            return
        }
        if response.isSuccess {
            unacknowledged.subtract(ids)
            saveSaid()
        } else {
            // 404: the cloud knows some of them no more; the next sync, which no longer lists them, forgets them.
            log(.warning, "sync: acknowledging \(ids.count) notice(s) refused: HTTP \(response.status)" + Self.said(response))
        }
    }

    /// `PUT /v1/device/state`; true when the cloud took it.
    mutating func sendState(_ state: DeviceState) -> Bool {
        var state = state
        state.max_hr_bpm = settings.maxHeartRateBpm
        guard settings.url != nil, let body = Self.json(state) else { return false }
        let response: HTTPResponse
        do {
            response = try request("PUT", "/v1/device/state", headers: headers(json: true), body: body)
        } catch {
            _ = problem("\(error)")
            return false
        }
        guard response.isSuccess else {
            _ = problem("the state was refused: HTTP \(response.status)" + Self.said(response))
            return false
        }
        reachable()
        return true
    }

    // MARK: Files

    private func save(_ cache: SyncCache?) {
        guard let cache, let bytes = Self.json(cache) else { return }
        do { try cacheFile.write(bytes) } catch {
            log(.warning, "sync: cannot keep the sync for offline use: \(error)")
        }
    }

    private func saveSaid() {
        guard let bytes = Self.json(SaidNotices(said: said.sorted(), unacknowledged: unacknowledged.sorted())) else { return }
        do { try saidFile.write(bytes) } catch {
            log(.error, "sync: cannot note which notices were said: \(error); after a restart they may be said again")
        }
    }

    static func json(_ value: some Encodable) -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map { [UInt8]($0) }
    }

    // MARK: Logging, once per change

    private mutating func problem(_ text: String) -> String {
        failures += 1
        if text != lastProblem || failures % 30 == 0 {
            log(.warning, "sync: the cloud cannot be reached or refused: \(text); the last sync stays in use")
        }
        lastProblem = text
        return text
    }

    private mutating func reachable() {
        if failures > 0 { log(.notice, "sync: the cloud answers again after \(failures) failed attempt(s)") }
        failures = 0
        lastProblem = nil
    }

    /// The server's words, bounded and on one line.
    private static func said(_ response: HTTPResponse) -> String {
        let text = String(decoding: response.body.prefix(200), as: UTF8.self)
            .map { $0.isNewline || $0.asciiValue.map { $0 < 32 || $0 == 127 } == true ? " " : String($0) }.joined()
        return text.isEmpty ? "" : ": \(text)"
    }
}
