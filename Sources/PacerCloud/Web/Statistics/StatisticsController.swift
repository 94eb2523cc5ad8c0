import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract

/// The statistics page: totals per week, month and year, records, and distance goals against
/// the current week and month (added, changed, deleted there). Another account's goal is 404,
/// the same as none.
struct StatisticsController: Sendable {
    let health: HealthRepository
    let plans: PlanRepository
    /// Figures of runs that have none yet, counted as the page is shown.
    let analysis: RunAnalysis
    /// Milliseconds since 1970: the current week and month of the goals.
    let wallClock: @Sendable () -> Int64

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "stats", SignedInAccess()) { _, context in try await statsPage(context) }
        web.on(.post, "goals", SignedInAccess()) { request, context in try await saveGoal(request, context, id: nil) }
        web.on(.post, "goals/:goal_id", SignedInAccess()) { request, context in
            try await saveGoal(request, context, id: context.parameters.get("goal_id") ?? "")
        }
        web.on(.post, "goals/:goal_id/delete", SignedInAccess()) { request, context in try await deleteGoal(request, context) }
    }

    /// Reads each run's stored figures (`RunFigures`), never a track: the totals are one light
    /// row per run, the records at most one row per distance.
    private func statsPage(_ context: SignedInContext, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let calendar = RunnerCalendar(account.timezone)
        let distanceUnit = account.units
        let uncounted = try await analysis.countNewRuns(account)
        let activities = try await health.runTotals(accountID: account.id)
        // Run statistics count runs only; the other sports have their own totals.
        let runs = activities.filter { $0.sport == .run }
        var otherTotals: [Sport: (distance: Double, seconds: Double, count: Int)] = [:]
        for activity in activities where activity.sport != .run {
            let total = otherTotals[activity.sport] ?? (0, 0, 0)
            otherTotals[activity.sport] = (total.distance + activity.distanceM, total.seconds + activity.movingS, total.count + 1)
        }
        let otherSports: [[String: Any]] = Sport.allCases.compactMap { sport in
            otherTotals[sport].map { ["sport": sport.label, "distance": RunnerFormat.distance($0.distance), "time": RunnerFormat.duration($0.seconds),
                                      "count": String($0.count)] }
        }

        let best = try await health.records(accountID: account.id)
        let records: [[String: Any]] = RunView.recordDistances.compactMap { record in
            best.first { $0.name == record.name }.map {
                ["name": record.name, "time": RunnerFormat.duration($0.seconds), "pace": RunnerFormat.pace($0.seconds * 1_000 / record.meters),
                 "run": $0.runID, "date": calendar.date($0.startMs)]
            }
        }

        // Totals per week, month and year, newest first.
        var periods: [[String: Any]] = []
        var totalsByUnit: [RunnerCalendar.Unit: [Int64: (distance: Double, seconds: Double, runs: Int)]] = [:]
        for (title, unit, shown) in [("Weeks", RunnerCalendar.Unit.week, 12), ("Months", .month, 12), ("Years", .year, 50)] {
            var totals: [Int64: (distance: Double, seconds: Double, runs: Int)] = [:]
            for run in runs {
                let start = calendar.periodStartMs(run.startMs, unit)
                let total = totals[start] ?? (0, 0, 0)
                totals[start] = (total.distance + run.distanceM, total.seconds + run.movingS, total.runs + 1)
            }
            totalsByUnit[unit] = totals
            let rows: [[String: Any]] = totals.keys.sorted(by: >).prefix(shown).map { start in
                let total = totals[start]!
                return ["label": calendar.periodLabel(start, unit), "distance": RunnerFormat.distance(total.distance),
                        "time": RunnerFormat.duration(total.seconds), "runs": String(total.runs)]
            }
            if !rows.isEmpty { periods.append(["title": title, "rows": rows]) }
        }

        // Volume: every one of the last 26 weeks and 12 months, empty ones included, oldest first.
        let now = wallClock()
        let thisWeek = calendar.periodStartMs(now, .week), thisMonth = calendar.periodStartMs(now, .month)
        let weekStarts = (0..<Self.volumeWeeks).reversed().map { calendar.periodStartMs(calendar.adding(weeks: -$0, to: thisWeek), .week) }
        let monthStarts = (0..<Self.volumeMonths).reversed().map { calendar.periodStartMs(calendar.adding(months: -$0, to: thisMonth), .month) }
        let amount = { (meters: Double?) in ((distanceUnit.amount(metres: meters ?? 0)) * 10).rounded() / 10 }
        let volume = VolumeData(unit: distanceUnit.symbol,
                                weeks: weekStarts.map { calendar.shortDate($0) }, weekDistance: weekStarts.map { amount(totalsByUnit[.week]?[$0]?.distance) },
                                months: monthStarts.map { calendar.monthLabel($0) },
                                monthDistance: monthStarts.map { amount(totalsByUnit[.month]?[$0]?.distance) })

        // Goals against the current week and month.
        let goals: [[String: Any]] = try await plans.goals(accountID: account.id).map { goal in
            let unit: RunnerCalendar.Unit = goal.period == .week ? .week : .month
            let start = calendar.periodStartMs(now, unit)
            // The period tables' sums: the same runs added in the same order.
            let done = totalsByUnit[unit]?[start]?.distance ?? 0
            let percent = goal.distanceM > 0 ? Int((100 * done / goal.distanceM).rounded(.down)) : 0
            return ["id": goal.id, "label": goal.period == .week ? "This week" : "This month", "done": RunnerFormat.distance(done),
                    "target": RunnerFormat.distance(goal.distanceM), "percent": String(percent), "bar": String(min(percent, 100)),
                    "km": RunnerFormat.number(distanceUnit.amount(metres: goal.distanceM)), "week": goal.period == .week]
        }
        return WebPage.stats.response(status, values: ["goals": goals, "records": records, "periods": periods, "timezone": account.timezone, "other_sports": otherSports, "has_other_sports": !otherSports.isEmpty,
                                                       "uncounted": uncounted, "unit": distanceUnit.symbol, "unit_name": distanceUnit.name.lowercased(),
                                                       "has_runs": !runs.isEmpty, "volume": try PageData.script(volume)],
                                      csrf: session.csrf, error: error,
                                      // Its volume charts: Chart.js and stats.js, from this server only.
                                      headers: SecurityHeaders.html(style: WebPage.style, formAction: "'self'", scripts: true))
    }

    /// A goal from the form; `id` nil: a new one. Refusals name the field, on the statistics page.
    private func saveGoal(_ request: Request, _ context: SignedInContext, id: String?) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let account = context.account
        if let id, UUID(uuidString: id) == nil || id != id.lowercased() { throw WebRefusal.plain(.notFound, "no goal \(id.prefix(40)) of yours") }
        // In the account's unit (the field keeps its name: forms and clients already post it).
        let unit = account.units
        let kmText = (form["distance_km"] ?? "").replacingOccurrences(of: ",", with: ".").trimmingSpaces
        guard let amount = Double(kmText), amount.isFinite, (0.1...100_000).contains(amount) else {
            return try await statsPage(context, error: "distance_km: '\(kmText.prefix(20))' is not a distance in \(unit.name.lowercased()) from 0.1 to 100000",
                                       status: .badRequest)
        }
        guard let period = Goal.Period(rawValue: form["period"] ?? "") else {
            return try await statsPage(context, error: "period: choose week or month", status: .badRequest)
        }
        let goal = Goal(id: id ?? UUID().uuidString.lowercased(), accountID: account.id, period: period, distanceM: amount * unit.metres)
        guard try await (id == nil ? plans.addGoal(goal) : plans.updateGoal(goal)) else { throw WebRefusal.plain(.notFound, "no goal \(goal.id) of yours") }
        return Response(status: .seeOther, headers: [.location: "/stats", .cacheControl: "no-store"])
    }

    private func deleteGoal(_ request: Request, _ context: SignedInContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        let account = context.account
        let id = context.parameters.get("goal_id") ?? ""
        guard try await plans.deleteGoal(accountID: account.id, id: id) else { throw WebRefusal.plain(.notFound, "no goal \(id.prefix(40)) of yours") }
        return Response(status: .seeOther, headers: [.location: "/stats", .cacheControl: "no-store"])
    }
}

extension StatisticsController {
    static let volumeWeeks = 26
    static let volumeMonths = 12
}

/// The statistics page's data block: what stats.js draws (distances in `unit`).
struct VolumeData: Encodable {
    var unit: String
    var weeks: [String]
    var weekDistance: [Double]
    var months: [String]
    var monthDistance: [Double]
}
