import Foundation
import Hummingbird
import PacerContract

/// The runner's heart-rate page (`/heart`; `/health` is the liveness probe) and what it and the
/// statistics page read: each run's figures (`RunFigures`), computed once when the run is
/// complete, and the heartbeat's days of heart rate outside runs.
extension CloudRoutes {
    /// Weeks the heart-rate page covers, this one included: half a year of runs, bounded work.
    static let heartWeeks = 26
    /// Runs in its chart at most (several a day for half a year).
    static let heartRunLimit = 1_000
    /// Days in its table of daily heart rate.
    static let heartDaysShown = 14
    /// Runs without figures (stored before figures were, or whose computing failed) counted per
    /// page view at most: a page never reads more than these tracks.
    static let figuresPerRequest = 20

    /// Where the zones' maximum heart rate comes from.
    enum ZoneMaximumSource: Equatable {
        case account, device, standard
    }

    // MARK: each run's figures

    /// The run's figures, once it is complete (the last chunk or its summary just arrived),
    /// computed after the answer: the uploader never waits for a marathon's track to be read. A
    /// failure, or a stop before they are stored, is the next page view's to make up.
    func figuresIfComplete(device: String, runID: String) {
        Task {
            guard let summary = try? await store.runs.completeRun(device: device, runID: runID) else { return }
            try? await storeFigures(AccountRun(deviceID: device, summary: summary), background: true)
        }
    }

    /// Computes the run's figures from its summary and view (computing the view if needed) and stores them.
    func storeFigures(_ run: AccountRun, background: Bool = false) async throws {
        var figures = RunFigures(deviceID: run.deviceID, runID: run.summary.runID, summaryJSON: run.summary.json, startMs: run.summary.startMs,
                                 heartRateSeconds: "[]", bestEfforts: [])
        // A summary that is not understood counts nowhere, as on the runs list.
        if let summary = try? RunItem(run.summary).summary {
            let view = try await runView(run, background: background)
            figures.distanceM = summary.distance_m
            figures.movingS = summary.moving_time_s
            figures.hrAvg = summary.hr_avg
            figures.hrMax = summary.hr_max
            figures.heartRateSeconds = String(decoding: try JSONEncoder().encode(view.heartRateSeconds), as: UTF8.self)
            figures.bestEfforts = view.bestEfforts.map { RunFigures.Effort(name: $0.name, seconds: $0.seconds) }
        }
        try await store.health.putRunFigures(figures)
    }

    /// Counts the account's runs that have no figures yet, at most `figuresPerRequest`; true
    /// when some are still left (the page says so).
    func countNewRuns(_ account: Account) async throws -> Bool {
        let missing = try await store.health.runsWithoutFigures(accountID: account.id, limit: Self.figuresPerRequest + 1)
        for run in missing.prefix(Self.figuresPerRequest) { try? await storeFigures(run) }
        return missing.count > Self.figuresPerRequest
    }

    // MARK: the zones' maximum

    /// The account's own setting, else the newest `max_hr_bpm` its devices sent, else the default.
    func zoneMaximum(_ account: Account) async throws -> (Int, ZoneMaximumSource) {
        if let own = account.maxHeartRate { return (own, .account) }
        return Self.zoneMaximum(account, states: try await deviceStates(account))
    }

    /// The same, from device heartbeats already read.
    static func zoneMaximum(_ account: Account, states: [(state: DeviceState, receivedMs: Int64)]) -> (Int, ZoneMaximumSource) {
        if let own = account.maxHeartRate { return (own, .account) }
        let sent = states.compactMap { entry in entry.state.max_hr_bpm.map { (bpm: $0, receivedMs: entry.receivedMs) } }
        if let newest = sent.max(by: { $0.receivedMs < $1.receivedMs }) { return (newest.bpm, .device) }
        return (HeartRateZones.defaultMaximum, .standard)
    }

    /// The newest heartbeat of each of the account's devices.
    private func deviceStates(_ account: Account) async throws -> [(state: DeviceState, receivedMs: Int64)] {
        var states: [(state: DeviceState, receivedMs: Int64)] = []
        for device in try await store.devices.devices(accountID: account.id) {
            guard let stored = try await store.sync.deviceState(device: device.id),
                  let state = try? JSONDecoder().decode(DeviceState.self, from: Data(stored.json.utf8)) else { continue }
            states.append((state, stored.receivedMs))
        }
        return states
    }

    // MARK: the page

    func heartPage(_ account: Account, _ session: StoredSession) async throws -> Response {
        let calendar = RunnerCalendar(account.timezone)
        let now = wallClock()
        let uncounted = try await countNewRuns(account)
        // Both the zones' maximum and the newest reading come from the devices' heartbeats: read once.
        let states = try await deviceStates(account)
        let (maxHR, maxSource) = Self.zoneMaximum(account, states: states)
        let thisWeek = calendar.periodStartMs(now, .week)
        let fromMs = calendar.adding(weeks: -(Self.heartWeeks - 1), to: thisWeek)
        let runs = try await store.health.runHeartRates(accountID: account.id, fromMs: fromMs, limit: Self.heartRunLimit)

        // Average and maximum per run, oldest first.
        let charted = runs.reversed().filter { $0.hrAvg != nil || $0.hrMax != nil }
        let data = HeartPageData(labels: charted.map { calendar.shortDate($0.startMs) }, average: charted.map { $0.hrAvg.map { $0.rounded() } },
                                 maximum: charted.map { $0.hrMax }, runs: charted.map(\.runID))

        // Time in zones per week, newest first; weeks without heart-rate time are left out.
        var weekZones: [Int64: [Double]] = [:]
        for run in runs {
            guard let seconds = try? JSONDecoder().decode([[Double]].self, from: Data(run.heartRateSeconds.utf8)), !seconds.isEmpty else { continue }
            let week = calendar.periodStartMs(run.startMs, .week)
            let zones = HeartRateZones.seconds(seconds, maximum: maxHR)
            weekZones[week] = zip(weekZones[week] ?? Array(repeating: 0, count: zones.count), zones).map(+)
        }
        let weeks: [[String: Any]] = weekZones.keys.sorted(by: >).map { week in
            ["label": week == thisWeek ? "This week" : calendar.shortDate(week), "zones": weekZones[week]!.map { RunnerFormat.duration($0) }]
        }

        // Resting: today's estimate, else the newest; the last days' summaries.
        let days = try await store.health.heartRateDays(accountID: account.id, fromDate: calendar.day(fromMs))
        let today = calendar.day(now)
        // "Today", else "11 May".
        let dayLabel = { (date: String) in date == today ? "Today" : calendar.dayStartMs(date).map(calendar.shortDate) ?? date }
        var values: [String: Any] = [
            "weeks": weeks, "zone_names": HeartRateZones.ranges(maximum: maxHR).map { ["name": $0.name, "range": $0.range] },
            "max_hr": String(maxHR), "default_max": maxSource == .standard, "device_max": maxSource == .device, "has_runs": !charted.isEmpty,
            "timezone": account.timezone, "shown_weeks": String(Self.heartWeeks), "uncounted": uncounted,
            "days": days.prefix(Self.heartDaysShown).map { day in
                ["date": dayLabel(day.date), "resting": day.restingBpm.map(String.init) ?? "–",
                 "min": day.minBpm.map(String.init) ?? "–", "count": String(day.count)]
            },
            "data": try Self.scriptData(data),
        ]
        if let resting = days.first(where: { $0.restingBpm != nil }), let bpm = resting.restingBpm {
            values["resting"] = "\(bpm) bpm" + (resting.date == today ? " today" : " on " + dayLabel(resting.date))
        }
        if let newest = states.compactMap({ $0.state.heart_rate }).compactMap({ reading in
            WireTime.milliseconds(reading.time).map { (bpm: reading.bpm, ms: $0) }
        }).max(by: { $0.ms < $1.ms }) {
            values["newest"] = "\(newest.bpm) bpm, " + Self.age(milliseconds: now - newest.ms)
        }
        return WebPage.heart.response(values: values, csrf: session.csrf,
                                      headers: SecurityHeaders.html(style: WebPage.style, formAction: "'self'", scripts: true))
    }

    /// "just now", "3 min ago", "5 h ago", "2 days ago".
    static func age(milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds / 1_000)
        switch seconds {
        case ..<60: return "just now"
        case ..<3_600: return "\(seconds / 60) min ago"
        case ..<86_400: return "\(seconds / 3_600) h ago"
        default: return "\(seconds / 86_400) day\(seconds < 2 * 86_400 ? "" : "s") ago"
        }
    }

    /// JSON for a page's data block: no "<" reaches the page unescaped (a block ends at "</script").
    static func scriptData(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }
}

/// The heart-rate page's data block: what heart.js draws.
struct HeartPageData: Encodable {
    var labels: [String]
    var average: [Double?]
    var maximum: [Int?]
    var runs: [String]
}
