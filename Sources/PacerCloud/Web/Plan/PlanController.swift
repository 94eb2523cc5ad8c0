import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract

/// The training plan's pages: a month calendar and the upcoming sessions, the session form
/// (new, edit, delete), and marking an occurrence done by hand. Another account's session is
/// 404, the same as none. A run that names an occurrence marks it done (`markFollowedSession`).
struct PlanController: Sendable {
    let plans: PlanRepository
    /// Milliseconds since 1970: today, and when an occurrence is marked done by hand.
    let wallClock: @Sendable () -> Int64

    /// Days the upcoming list covers, from today.
    static let upcomingDays = 28
    /// Occurrences listed on a session's page: from 4 weeks back to 8 weeks ahead.
    static let sessionPageDays = (back: 28, ahead: 56)

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "plan", SignedInAccess()) { request, context in try await planPage(request, context) }
        web.on(.get, "plan/new", SignedInAccess()) { request, context in try await newSessionPage(request, context) }
        web.on(.post, "plan/sessions", SignedInAccess()) { request, context in try await saveSession(request, context, id: nil) }
        web.on(.get, "plan/sessions/:session_id", SignedInAccess()) { _, context in try await sessionPage(context) }
        web.on(.post, "plan/sessions/:session_id", SignedInAccess()) { request, context in
            try await saveSession(request, context, id: context.parameters.get("session_id") ?? "")
        }
        web.on(.post, "plan/sessions/:session_id/delete", SignedInAccess()) { request, context in try await deleteSession(request, context) }
        web.on(.post, "plan/sessions/:session_id/done", SignedInAccess()) { request, context in try await markSession(request, context, done: true) }
        web.on(.post, "plan/sessions/:session_id/undone", SignedInAccess()) { request, context in
            try await markSession(request, context, done: false)
        }
    }

    /// The account's session named in the path; 404 for another account's as for none.
    private func ownSession(_ context: SignedInContext, _ account: Account) async throws -> PlanSession {
        let id = context.parameters.get("session_id") ?? ""
        guard WireLimits.isLowercaseUUID(id), let session = try await plans.planSession(accountID: account.id, id: id) else {
            throw WebRefusal.plain(.notFound, "no planned session \(id.prefix(40)) of yours")
        }
        return session
    }

    /// Today in the account's time zone, as a plan day.
    private func today(_ account: Account) -> Int { PlanFollowing.today(account, nowMs: wallClock()) }

    // MARK: the calendar

    private func planPage(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let today = today(account)
        let grid = try MonthGrid.asked(request.uri.queryParameters["month"].map(String.init), today: today)
        let upcomingEnd = today + Self.upcomingDays - 1
        // Two reads, so a month far from today does not make one long range.
        var byDay: [Int: [PlanOccurrence]] = [:]
        for occurrence in try await plans.planOccurrences(accountID: account.id, from: grid.gridStart, through: grid.gridEnd) {
            byDay[occurrence.day, default: []].append(occurrence)
        }
        let weeks = grid.weeks(today: today) { day in
            ["sessions": (byDay[day] ?? []).map { item -> [String: Any] in ["id": item.session.id, "name": item.session.name, "done": item.done != nil] }]
        }
        let upcoming = try await plans.planOccurrences(accountID: account.id, from: today, through: upcomingEnd)
            .prefix(PlanSection.maxSessions).map { occurrenceItem($0, today: today) }
        var values: [String: Any] = ["weeks": weeks, "upcoming": Array(upcoming), "timezone": account.timezone,
                                     "month_label": grid.label, "days_ahead": String(PlanSection.days)]
        if let previous = grid.previous { values["prev"] = previous }
        if let next = grid.next { values["next"] = next }
        return WebPage.plan.response(values: values, csrf: session.csrf)
    }


    /// An occurrence as the lists show it, with its done state and the form to change it.
    private func occurrenceItem(_ occurrence: PlanOccurrence, today: Int, back: String = "plan") -> [String: Any] {
        let (year, month, day) = PlanDates.civil(occurrence.day)
        var item: [String: Any] = [
            "session": occurrence.session.id, "name": occurrence.session.name, "iso": occurrence.date, "back": back,
            "date": PlanForm.weekdayNames[PlanDates.weekday(occurrence.day)] + " \(day) " + MonthGrid.monthNames[month - 1].prefix(3) + " \(year)",
            "today": occurrence.day == today, "steps": PlanForm.describe(occurrence.session.steps), "done": occurrence.done != nil,
        ]
        if let run = occurrence.done?.runID { item["run"] = run }
        return item
    }

    // MARK: the session form

    private func newSessionPage(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        var form = PlanForm()
        let asked = request.uri.queryParameters["date"].map(String.init) ?? ""
        form.date = PlanDates.day(asked) != nil ? asked : PlanDates.text(today(account))
        // A first row to start from.
        form.rows = [PlanForm.Row(type: "run")]
        return sessionForm(form, id: nil, csrf: session.csrf)
    }

    private func sessionPage(_ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let planned = try await ownSession(context, account)
        return sessionForm(PlanForm(session: planned), id: planned.id, csrf: session.csrf,
                           occurrences: try await sessionOccurrences(planned, account))
    }

    /// The session's occurrences around today, for its page's done buttons.
    private func sessionOccurrences(_ planned: PlanSession, _ account: Account) async throws -> [[String: Any]] {
        let today = today(account)
        return try await plans.planOccurrences(accountID: account.id, from: today - Self.sessionPageDays.back, through: today + Self.sessionPageDays.ahead)
            .filter { $0.session.id == planned.id }.map { occurrenceItem($0, today: today, back: "session") }
    }

    private func sessionForm(_ form: PlanForm, id: String?, csrf: String, occurrences: [[String: Any]] = [], error: String? = nil,
                             status: HTTPResponse.Status = .ok) -> Response {
        var values = form.values
        values["title"] = id == nil ? "New session" : "Edit " + form.name
        values["heading"] = id == nil ? "New session" : "Edit session"
        values["action"] = id.map { "/plan/sessions/\($0)" } ?? "/plan/sessions"
        if let id { values["existing"] = ["id": id] }
        values["occurrences"] = occurrences
        return WebPage.planSession.response(status, values: values, csrf: csrf, error: error, headers: Self.planFormHeaders)
    }

    /// The form page loads /assets/pacer/plan.js (adding and removing step rows), nothing inline.
    static let planFormHeaders = SecurityHeaders.html(style: WebPage.style, formAction: "'self'", scripts: true)

    /// A session from the form; `id` nil: a new one. A refusal is the form again, as sent, with
    /// the message naming the field (400).
    private func saveSession(_ request: Request, _ context: SignedInContext, id: String?) async throws -> Response {
        let fields = try await WebForm.read(request, context: context, maxBytes: PlanForm.maxBytes)
        let (account, session) = (context.account, context.session)
        if id != nil { _ = try await ownSession(context, account) }
        let form = PlanForm(fields: fields)
        let planned: PlanSession
        do {
            planned = try form.session(id: id ?? UUID().uuidString.lowercased(), accountID: account.id)
        } catch {
            return sessionForm(form, id: id, csrf: session.csrf, error: error.message, status: .badRequest)
        }
        if id == nil {
            guard try await plans.addPlanSession(planned, limit: PlanSession.maxPerAccount) else {
                return sessionForm(form, id: nil, csrf: session.csrf, error: "the plan holds at most \(PlanSession.maxPerAccount) sessions: "
                                       + "delete old ones first", status: .conflict)
            }
        } else if try await !plans.updatePlanSession(planned) {
            throw WebRefusal.plain(.notFound, "no planned session \(planned.id) of yours")
        }
        return Self.seeOther("/plan?month=" + planned.startDate.prefix(7))
    }

    private func deleteSession(_ request: Request, _ context: SignedInContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        let account = context.account
        let planned = try await ownSession(context, account)
        guard try await plans.deletePlanSession(accountID: account.id, id: planned.id) else {
            throw WebRefusal.plain(.notFound, "no planned session \(planned.id) of yours")
        }
        return Self.seeOther("/plan")
    }

    /// Marks the occurrence on the form's `date` done by hand, or takes its mark off.
    private func markSession(_ request: Request, _ context: SignedInContext, done: Bool) async throws -> Response {
        let fields = try await WebForm.read(request, context: context)
        let account = context.account
        let planned = try await ownSession(context, account)
        let date = (fields["date"] ?? "").trimmingSpaces
        guard let day = PlanDates.day(date) else { throw WebRefusal.plain(.badRequest, "date: '\(date.prefix(20))' is not a date like 2026-05-10") }
        guard !planned.days(from: day, through: day).isEmpty else {
            throw WebRefusal.plain(.badRequest, "date: the session \(planned.name) is not planned on \(date)")
        }
        if done {
            _ = try await plans.markPlanDone(PlanDone(sessionID: planned.id, date: date, accountID: account.id, doneMs: wallClock()))
        } else {
            _ = try await plans.unmarkPlanDone(accountID: account.id, sessionID: planned.id, date: date)
        }
        return Self.seeOther(fields["back"] == "session" ? "/plan/sessions/\(planned.id)" : "/plan?month=" + date.prefix(7))
    }

    static func seeOther(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }
}
