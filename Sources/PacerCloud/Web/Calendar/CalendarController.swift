import CloudModel
import CloudStore
import Foundation
import Hummingbird

/// The calendar of runs (#33): a month of the account's activities, each day with its runs'
/// distances (other sports marked), the month's totals per sport, in the account's time zone.
struct CalendarController: Sendable {
    let runs: RunRepository
    /// Counts runs without figures first, as the statistics page does.
    let analysis: RunAnalysis
    let wallClock: @Sendable () -> Int64

    /// Activities shown in one month at most: a grid cell lists a day's, the totals count these.
    static let maxRuns = 600

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "calendar", SignedInAccess()) { request, context in try await calendarPage(request, context) }
    }

    private func calendarPage(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let account = context.account
        let today = PlanDates.day(atMs: wallClock(), timezone: account.timezone)
        let grid = try MonthGrid.asked(request.uri.queryParameters["month"].map(String.init), today: today)
        let calendar = RunnerCalendar(account.timezone)
        let uncounted = try await analysis.countNewRuns(account)
        guard let fromMs = calendar.dayStartMs(PlanDates.text(grid.gridStart)), let toMs = calendar.dayStartMs(PlanDates.text(grid.gridEnd), plusDays: 1) else {
            throw WebRefusal.plain(.badRequest, "month: '\(grid.label)' cannot be shown")
        }
        let found = try await runs.calendarRuns(accountID: account.id, fromMs: fromMs, toMs: toMs, limit: Self.maxRuns + 1)
        let shown = found.prefix(Self.maxRuns)
        var byDay: [Int: [CalendarRun]] = [:]
        for run in shown { byDay[PlanDates.day(atMs: run.startMs, timezone: account.timezone), default: []].append(run) }
        let weeks = grid.weeks(today: today) { day in
            ["runs": (byDay[day] ?? []).map { run -> [String: Any] in
                let distance = run.distanceM.map { RunnerFormat.shortDistance($0) } ?? "–"
                var item: [String: Any] = ["id": run.runID, "distance": distance, "sport": run.sport.label, "other": run.sport != .run,
                                           "doubted": run.doubt != nil]
                item["label"] = (run.title ?? run.sport.label) + ", " + calendar.dateTime(run.startMs) + ", " + distance
                return item
            }]
        }
        // The month's own days (not the grid's neighbours), per sport, runs first.
        var totals: [Sport: (count: Int, meters: Double)] = [:]
        for (day, dayRuns) in byDay where day >= grid.first && day <= grid.last {
            for run in dayRuns where run.doubt == nil {
                totals[run.sport, default: (0, 0)].count += 1
                totals[run.sport, default: (0, 0)].meters += run.distanceM ?? 0
            }
        }
        let totalRows: [[String: Any]] = Sport.allCases.compactMap { sport in
            guard let total = totals[sport] else { return nil }
            return ["sport": sport.label, "count": String(total.count), "distance": RunnerFormat.distance(total.meters)]
        }
        var values: [String: Any] = ["weeks": weeks, "month_label": grid.label, "totals": totalRows, "timezone": account.timezone,
                                     "uncounted": uncounted, "more": found.count > Self.maxRuns, "max_runs": String(Self.maxRuns)]
        if let previous = grid.previous { values["prev"] = previous }
        if let next = grid.next { values["next"] = next }
        return WebPage.calendar.response(values: values, csrf: context.session.csrf)
    }
}

/// The calendar's template and style (`WebPage.calendar`).
enum CalendarTemplates {
    static let page = """
        {{> head}}<h1>Calendar</h1>{{> error}}
        <nav class="month">{{#prev}}<a href="/calendar?month={{.}}" rel="prev">← Earlier</a>{{/prev}}<b id="month-label">{{month_label}}</b>
        {{#next}}<a href="/calendar?month={{.}}" rel="next">Later →</a>{{/next}}</nav>
        <table class="month" id="calendar"><tr><th>Mon</th><th>Tue</th><th>Wed</th><th>Thu</th><th>Fri</th><th>Sat</th><th>Sun</th></tr>
        {{#weeks}}<tr>{{#days}}<td class="{{class}}"{{#today}} aria-current="date"{{/today}}><span class="day">{{day}}</span>
        {{#runs}}<a class="r{{#other}} other{{/other}}{{#doubted}} doubted{{/doubted}}" href="/runs/{{id}}" aria-label="{{label}}">{{#other}}{{sport}} {{/other}}{{distance}}</a>{{/runs}}</td>{{/days}}</tr>{{/weeks}}
        </table>
        <h2>{{month_label}}</h2>{{#totals}}<p class="total"><b>{{sport}}</b>: {{count}}, {{distance}}</p>{{/totals}}
        {{^totals}}<p>Nothing this month. <a href="/devices">Link a device</a> or <a href="/import">import a file</a> to see your runs here.</p>{{/totals}}
        {{#more}}<p class="note">Only the first {{max_runs}} activities of these weeks are shown.</p>{{/more}}
        <p class="note">Days in your time zone ({{timezone}}). Totals leave out runs marked as not believable.</p>{{> uncounted}}{{> foot}}
        """

    static let style = "table.month span.day{display:block;font-weight:bold}"
        + "table.month a.r{display:block;overflow-wrap:anywhere;font-size:.9em;line-height:1.2;background:#1a8f3c;color:#fff;border-radius:3px;"
        + "padding:1px 2px;margin-top:2px;text-decoration:none}table.month a.r.other{background:#6b5b95}table.month a.r.doubted{background:#999}"
}
