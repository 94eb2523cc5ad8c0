import CloudModel
import CloudStore
import Foundation
import Hummingbird

/// The runner's shoes (#33): each with its distance (what it had when added, plus the believed
/// runs run in it, chosen on each run's settings), a reminder distance after which the pages say
/// it is time to replace it, retired or in use.
struct ShoesController: Sendable {
    let shoes: ShoeRepository
    let wallClock: @Sendable () -> Int64

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "shoes", SignedInAccess()) { _, context in try await shoesPage(context) }
        web.on(.post, "shoes", SignedInAccess()) { request, context in try await add(request, context) }
        web.on(.post, "shoes/:shoe_id", SignedInAccess()) { request, context in try await update(request, context) }
        web.on(.post, "shoes/:shoe_id/delete", SignedInAccess()) { request, context in try await delete(request, context) }
    }

    /// A distance in the viewer's unit, for a form field.
    static func km(_ meters: Double) -> String { RunnerFormat.number(PageLayout.units.amount(metres: meters)) }

    private func values(_ list: [Shoe], typed: [String: String] = [:]) -> [String: Any] {
        var values: [String: Any] = [
            "unit": PageLayout.units.symbol,
            "shoes": list.map { shoe -> [String: Any] in
                ["id": shoe.id, "name": shoe.name, "distance": RunnerFormat.distance(shoe.distanceM), "start_km": Self.km(shoe.startM),
                 "remind_km": shoe.remindM.map(Self.km) ?? "", "retired": shoe.retired, "due": shoe.isDue,
                 "remind": shoe.remindM.map { RunnerFormat.distance($0) } ?? ""]
            },
            "max": String(Shoe.maxPerAccount),
        ]
        for (key, value) in typed { values[key] = value }
        return values
    }

    private func shoesPage(_ context: SignedInContext) async throws -> Response {
        WebPage.shoes.response(values: values(try await shoes.shoes(accountID: context.account.id)), csrf: context.session.csrf)
    }

    /// The form's name and distances, or the page again naming the first wrong field, with what was typed.
    private func fields(_ form: WebForm, _ context: SignedInContext, prefix: String) async throws -> (name: String, startM: Double, remindM: Double?) {
        let typed = ["\(prefix)name": form["name"] ?? "", "\(prefix)start_km": form["start_km"] ?? "", "\(prefix)remind_km": form["remind_km"] ?? ""]
        let list = try await shoes.shoes(accountID: context.account.id)
        func refuse(_ error: AccountInputError) -> WebRefusal {
            // The add form's fields are new_*: only they are marked beside (a pair's own form shows it at the top).
            return WebRefusal.form(.badRequest, page: .shoes, message: prefix + error.message, values: values(list, typed: typed).strings)
        }
        let name = try Shoe.validatedName(form["name"] ?? "").mapError(refuse).get()
        let unit = context.account.units
        let start = try Shoe.validatedKm(form["start_km"] ?? "", field: "start_km", label: "Distance already run", optional: false, unit: unit)
            .mapError(refuse).get() ?? 0
        let remind = try Shoe.validatedKm(form["remind_km"] ?? "", field: "remind_km", label: "Remind me at", optional: true, unit: unit)
            .mapError(refuse).get()
        return (name, start, remind)
    }

    private func add(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let (name, start, remind) = try await fields(form, context, prefix: "new_")
        let shoe = Shoe(id: UUID().uuidString.lowercased(), accountID: context.account.id, name: name, startM: start, remindM: remind, retired: false,
                        createdMs: wallClock())
        guard try await shoes.addShoe(shoe, limit: Shoe.maxPerAccount) else {
            throw WebRefusal.plain(.conflict, "You have \(Shoe.maxPerAccount) shoes, the most an account keeps: delete one first")
        }
        return RunManagementController.seeOther("/shoes")
    }

    private func shoeID(_ context: SignedInContext) throws -> String {
        let text = context.parameters.get("shoe_id") ?? ""
        guard CloudRoutes.isLowercaseUUID(text) else { throw WebRefusal.plain(.notFound, "no shoes \(text.prefix(40)) among yours") }
        return text
    }

    private func update(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try shoeID(context)
        let form = try await WebForm.read(request, context: context)
        let (name, start, remind) = try await fields(form, context, prefix: "")
        guard try await shoes.updateShoe(id: id, accountID: context.account.id, name: name, startM: start, remindM: remind,
                                         retired: form["retired"] == "1") else {
            throw WebRefusal.plain(.notFound, "no shoes \(id) among yours")
        }
        return RunManagementController.seeOther("/shoes")
    }

    private func delete(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let id = try shoeID(context)
        _ = try await WebForm.read(request, context: context)
        guard try await shoes.deleteShoe(id: id, accountID: context.account.id) else { throw WebRefusal.plain(.notFound, "no shoes \(id) among yours") }
        return RunManagementController.seeOther("/shoes")
    }
}

/// The shoes page (`WebPage.shoes`).
enum ShoesTemplates {
    static let page = """
        {{> head}}<h1>My shoes</h1>{{> error}}
        {{#shoes}}<div class="shoe{{#retired}} retired{{/retired}}" id="shoe-{{id}}"><h2>{{name}}{{#retired}} (retired){{/retired}}</h2>
        <p class="summary"><b>{{distance}}</b>{{#remind}} · reminder at {{.}}{{/remind}}</p>
        {{#due}}<p class="due" role="status">Time to replace them: they have run past your reminder.</p>{{/due}}
        <form method="post" action="/shoes/{{id}}" class="shoe-form">{{> csrf}}
        <label>Name <input name="name" value="{{name}}" maxlength="64" required></label>
        <label>Distance already run when added, {{unit}} <input name="start_km" value="{{start_km}}" inputmode="decimal" maxlength="12"></label>
        <label>Remind me at, {{unit}} (empty: never) <input name="remind_km" value="{{remind_km}}" inputmode="decimal" maxlength="12"></label>
        <label class="choice"><input type="checkbox" name="retired" value="1"{{#retired}} checked{{/retired}}> Retired</label>
        <button>Save</button></form>
        <form method="post" action="/shoes/{{id}}/delete">{{> csrf}}<button>Delete (their runs keep their distance)</button></form></div>{{/shoes}}
        {{^shoes}}<p>No shoes yet. Add a pair, then choose it on a run's settings to count its distance.</p>{{/shoes}}
        <h2>Add a pair</h2>
        <form method="post" action="/shoes" id="new-shoe">{{> csrf}}
        <label>Name <input name="name" value="{{new_name}}" maxlength="64" required placeholder="Blue trainers"\(WebPage.invalid("new_name"))>\(WebPage.fieldError("new_name"))</label>
        <label>Distance already run, {{unit}} <input name="start_km" value="{{new_start_km}}" inputmode="decimal" maxlength="12" placeholder="0"\(WebPage.invalid("new_start_km"))>\(WebPage.fieldError("new_start_km"))</label>
        <label>Remind me at, {{unit}} (empty: never) <input name="remind_km" value="{{new_remind_km}}" inputmode="decimal" maxlength="12" placeholder="700"\(WebPage.invalid("new_remind_km"))>\(WebPage.fieldError("new_remind_km"))</label>
        <button>Add</button></form>
        <p class="note">Up to {{max}} pairs. A pair's distance counts the runs you chose it for, except runs marked as not believable.</p>{{> foot}}
        """

    static let style = ".shoe{border-top:1px solid var(--line)}.shoe.retired h2{color:var(--muted)}.due{color:var(--error);font-weight:bold}"
}
