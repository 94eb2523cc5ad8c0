import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract

/// The runner managing a run (#33): its name, notes, sport and who sees it; a share link (a
/// secret URL, revocable, whose secret is shown once and stored only as its hash); deletion,
/// after a confirmation. And the run as others see it: a consented monitor (when the runner shows
/// it to monitors) on `/runs/{id}`, anyone with the link on `/s/{secret}`, neither with anything
/// of the account but the run.
struct RunManagementController: Sendable {
    let runs: RunRepository
    /// The shoes a run may be run in.
    let shoes: ShoeRepository
    let analysis: RunAnalysis
    let map: MapSettings
    /// "https://cloud.example.org": what share links start with.
    let linkBase: String

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "runs/:run_id/edit", SignedInAccess()) { _, context in try await editPage(context) }
        web.on(.post, "runs/:run_id/edit", SignedInAccess()) { request, context in try await save(request, context) }
        web.on(.get, "runs/:run_id/delete", SignedInAccess()) { _, context in try await deletePage(context) }
        web.on(.post, "runs/:run_id/delete", SignedInAccess()) { request, context in try await delete(request, context) }
        web.on(.post, "runs/:run_id/share", SignedInAccess()) { request, context in try await makeShareLink(request, context) }
        web.on(.post, "runs/:run_id/share/end", SignedInAccess()) { request, context in try await endShareLink(request, context) }
    }

    /// `/s/{secret}`: outside the session middleware, so a signed-in viewer's account plays no part.
    func addSharedRoutes(to pages: PolicedRoutes<CloudRequestContext>) {
        pages.on(.get, ":secret", PublicAccess(why: "a share link's secret is the credential (256 random bits, stored hashed); "
                                                    + "a revoked or unknown one is 404; limited per address")) { _, context in
            try await sharedPage(context)
        }
    }

    // MARK: the runner's own run

    /// The signed-in account's run `run_id`; 404 for another account's run as for none.
    private func ownRun(_ context: SignedInContext) async throws -> ManagedRun {
        let text = context.parameters.get("run_id") ?? ""
        guard let runID = try? Identifiers.runID(text), let run = try await runs.ownRun(accountID: context.account.id, runID: runID) else {
            throw WebRefusal.plain(.notFound, "no run \(WireLimits.quoted(text)) among your runs")
        }
        return run
    }

    private func date(_ run: ManagedRun, _ account: Account) -> String {
        RunnerCalendar(account.timezone).dateTime(run.run.summary.startMs)
    }

    private func editValues(_ run: ManagedRun, _ account: Account, title: String?, notes: String?, sport: Sport,
                            visibility: RunVisibility, shoes: [Shoe], shoeID: String?) -> [String: Any] {
        let date = date(run, account)
        // Shoes in use, and the run's own even when retired.
        let choices = shoes.filter { !$0.retired || $0.id == shoeID }
        return [
            "shoes": choices.map { ["value": $0.id, "label": $0.name, "selected": $0.id == shoeID] }, "no_shoe": shoeID == nil,
            "has_shoes": !shoes.isEmpty,
            "run_id": run.run.summary.runID, "heading": RunPageValues.heading(run.details, date: date),
            "default_title": "\(sport.label) of \(date)", "title": title ?? "", "notes": notes ?? "", "shared": run.details.shared,
            "sports": Sport.allCases.map { ["value": $0.rawValue, "label": $0.label, "selected": $0 == sport] },
            "visibilities": RunVisibility.allCases.map { ["value": $0.rawValue, "label": Self.label($0), "selected": $0 == visibility] },
        ]
    }

    static func label(_ visibility: RunVisibility) -> String {
        switch visibility {
        case .private: "Only me"
        case .monitors: "Me and the people who watch over me"
        case .link: "Also anyone with its share link"
        }
    }

    private func editPage(_ context: SignedInContext) async throws -> Response {
        let run = try await ownRun(context)
        let details = run.details
        let shoeID = try await shoes.runShoe(device: run.run.deviceID, runID: run.run.summary.runID)
        return WebPage.runEdit.response(values: editValues(run, context.account, title: details.title, notes: details.notes, sport: details.sport,
                                                           visibility: details.visibility, shoes: try await shoes.shoes(accountID: context.account.id),
                                                           shoeID: shoeID),
                                        csrf: context.session.csrf, headers: Self.headers)
    }

    private func save(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let run = try await ownRun(context)
        let form = try await WebForm.read(request, context: context, maxBytes: 32 * 1024)
        let sport = Sport(rawValue: form["sport"] ?? "")
        let visibility = RunVisibility(rawValue: form["visibility"] ?? "")
        let accountShoes = try await shoes.shoes(accountID: context.account.id)
        let shoeText = form["shoe"] ?? ""
        let shoe = accountShoes.first { $0.id == shoeText }
        // The form again with what was typed and the first problem.
        let refuse = { (message: String) -> WebRefusal in
            var values: [String: String] = [:]
            for (key, value) in self.editValues(run, context.account, title: form["title"], notes: form["notes"], sport: sport ?? run.details.sport,
                                                visibility: visibility ?? run.details.visibility, shoes: accountShoes, shoeID: shoe?.id) {
                if let text = value as? String { values[key] = text }
            }
            return WebRefusal.form(.badRequest, page: .runEdit, message: message, values: values)
        }
        guard let sport else { throw refuse("sport: choose one of \(Sport.allCases.map(\.label).joined(separator: ", "))") }
        guard let visibility else { throw refuse("visibility: choose who sees it, one of the three") }
        guard shoeText.isEmpty || shoe != nil else { throw refuse("shoe: choose a pair of yours, or none") }
        let title: String?, notes: String?
        switch RunDetails.validatedTitle(form["title"] ?? "") {
        case .success(let value): title = value
        case .failure(let error): throw refuse(error.message)
        }
        switch RunDetails.validatedNotes(form["notes"] ?? "") {
        case .success(let value): notes = value
        case .failure(let error): throw refuse(error.message)
        }
        guard try await runs.updateDetails(device: run.run.deviceID, runID: run.run.summary.runID, title: title, notes: notes, sport: sport,
                                           visibility: visibility) else {
            throw WebRefusal.plain(.notFound, "this run was deleted meanwhile")
        }
        // A pair deleted since the form was read: the run keeps no shoe rather than failing.
        _ = try await shoes.setRunShoe(device: run.run.deviceID, runID: run.run.summary.runID, shoeID: shoe?.id, accountID: context.account.id)
        return Self.seeOther("/runs/\(run.run.summary.runID)")
    }

    private func deletePage(_ context: SignedInContext) async throws -> Response {
        let run = try await ownRun(context)
        let date = date(run, context.account)
        let summary = (try? RunItem(run.run.summary).summary).map { "\(RunnerFormat.distance($0.distance_m)) in \(RunnerFormat.duration($0.moving_time_s))" }
        return WebPage.runDelete.response(values: ["run_id": run.run.summary.runID, "heading": RunPageValues.heading(run.details, date: date),
                                                   "summary": summary.map { "\(date): \($0)" } ?? date],
                                          csrf: context.session.csrf)
    }

    private func delete(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let run = try await ownRun(context)
        _ = try await WebForm.read(request, context: context)
        _ = try await runs.deleteRun(device: run.run.deviceID, runID: run.run.summary.runID)
        return Self.seeOther("/runs")
    }

    private func makeShareLink(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let run = try await ownRun(context)
        _ = try await WebForm.read(request, context: context)
        let secret = Tokens.random()
        guard try await runs.setShareLink(device: run.run.deviceID, runID: run.run.summary.runID, hash: Tokens.hash(secret)) else {
            throw WebRefusal.plain(.notFound, "this run was deleted meanwhile")
        }
        return WebPage.runShareLink.response(values: ["run_id": run.run.summary.runID, "link": "\(linkBase)/s/\(secret)",
                                                      "heading": RunPageValues.heading(run.details, date: date(run, context.account))],
                                             csrf: context.session.csrf)
    }

    private func endShareLink(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let run = try await ownRun(context)
        _ = try await WebForm.read(request, context: context)
        _ = try await runs.setShareLink(device: run.run.deviceID, runID: run.run.summary.runID, hash: nil)
        return Self.seeOther("/runs/\(run.run.summary.runID)/edit")
    }

    // MARK: others' view

    /// A monitor's view of a runner's run they may see (`RunsController` asks when the run is
    /// not the viewer's own): with the nav, in the monitor's time zone.
    func monitoredPage(_ run: ManagedRun, viewer: Account) async throws -> Response {
        try await othersPage(run, timezone: viewer.timezone)
    }

    private func sharedPage(_ context: CloudRequestContext) async throws -> Response {
        let secret = context.parameters.get("secret") ?? ""
        guard Tokens.isWellFormedSecret(secret), let run = try await runs.sharedRun(shareHash: Tokens.hash(secret)) else {
            throw WebRefusal.plain(.notFound, "this share link does not exist or was ended by its runner")
        }
        // UTC: nothing of the runner's account, its time zone included; the page says so.
        return try await othersPage(run, timezone: "UTC")
    }

    private func othersPage(_ run: ManagedRun, timezone: String) async throws -> Response {
        let summary = try RunItem(run.run.summary).summary
        let view: RunView
        do { view = try await analysis.runView(run.run) } catch let busy as WorkQueue.Busy { return busy.page() }
        let date = RunnerCalendar(timezone).dateTime(run.run.summary.startMs) + (timezone == "UTC" ? " UTC" : "")
        var values = try RunPageValues.common(summary: summary, view: view, date: date, sport: run.details.sport)
        values["heading"] = RunPageValues.heading(run.details, date: date)
        values["title"] = values["heading"]
        values["sport"] = run.details.sport.label
        values["tiles"] = map.tileURL ?? ""
        values["attribution"] = map.tileAttribution
        if let notes = run.details.notes { values["notes"] = notes }
        return WebPage.runShared.response(values: values, csrf: nil, headers: RunsController.pageHeaders(map: map))
    }

    static var headers: HTTPFields {
        SecurityHeaders.html(style: WebPage.style, formAction: "'self'")
    }

    static func seeOther(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }
}
