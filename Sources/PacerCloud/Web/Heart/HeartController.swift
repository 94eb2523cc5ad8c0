import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract

/// The runner's heart-rate page (`/heart`; `/health` is the liveness probe): each run's
/// average and maximum, time in zones per week, and the heartbeat's days of heart rate outside
/// runs, from each run's figures (`RunAnalysis`) and the devices' heartbeats.
struct HeartController: Sendable {
    let health: HealthRepository
    let devices: DeviceRepository
    let heartbeats: Heartbeats
    let analysis: RunAnalysis
    /// Milliseconds since 1970: this week, today, and how old the newest reading is.
    let wallClock: @Sendable () -> Int64

    /// Weeks the heart-rate page covers, this one included: half a year of runs, bounded work.
    static let heartWeeks = 26
    /// Runs in its chart at most (several a day for half a year).
    static let heartRunLimit = 1_000
    /// Days in its table of daily heart rate.
    static let heartDaysShown = 14

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "heart", SignedInAccess()) { _, context in try await heartPage(context) }
    }

    private func heartPage(_ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let now = wallClock()
        let calendar = RunnerCalendar(account.timezone, nowMs: now)
        let uncounted = try await analysis.countNewRuns(account)
        // Both the zones' maximum and the newest reading come from the devices' heartbeats: read once.
        let states = try await heartbeats.newest(of: try await devices.devices(accountID: account.id))
        let (maxHR, maxSource) = ZoneMaximum.of(account, states: states)
        let thisWeek = calendar.periodStartMs(now, .week)
        let fromMs = calendar.adding(weeks: -(Self.heartWeeks - 1), to: thisWeek)
        let runs = try await health.runHeartRates(accountID: account.id, fromMs: fromMs, limit: Self.heartRunLimit)

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
        let days = try await health.heartRateDays(accountID: account.id, fromDate: calendar.day(fromMs))
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
            "data": try PageData.script(data),
        ]
        if let resting = days.first(where: { $0.restingBpm != nil }), let bpm = resting.restingBpm {
            values["resting"] = "\(bpm) bpm" + (resting.date == today ? " today" : " on " + dayLabel(resting.date))
        }
        if let newest = states.compactMap({ $0.state.heart_rate }).compactMap({ reading in
            WireTime.milliseconds(reading.time).map { (bpm: reading.bpm, ms: $0) }
        }).max(by: { $0.ms < $1.ms }) {
            values["newest"] = "\(newest.bpm) bpm, " + RunnerFormat.age(milliseconds: now - newest.ms)
        }
        return WebPage.heart.response(values: values, csrf: session.csrf,
                                      headers: SecurityHeaders.html(style: WebPage.style, formAction: "'self'", scripts: true))
    }
}

/// The heart-rate page's data block: what heart.js draws.
struct HeartPageData: Encodable {
    var labels: [String]
    var average: [Double?]
    var maximum: [Int?]
    var runs: [String]
}
