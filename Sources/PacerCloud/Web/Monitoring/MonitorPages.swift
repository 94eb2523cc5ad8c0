import Foundation
import Hummingbird
import Mustache

/// The monitoring pages: who watches me and whom I watch (invite, accept, end), and the live
/// dashboard. The account pages' head, foot, error and csrf partials frame them; the dashboard
/// alone has script (its own file and Leaflet, both from this server) and a map.
enum MonitorPage {
    static let monitoring = "monitoring"
    static let accept = "monitor_accept"
    static let dashboard = "dashboard"
    static let deviceCard = "device_card"

    private static let templates = [
        monitoring: """
            {{> head}}<h1>Monitoring</h1>{{> error}}{{#notice}}<p class="notice">{{notice}}</p>{{/notice}}
            <p><a href="/watch">Open my dashboard</a> · <a href="/account">My account</a></p>
            <h2>Who watches over me</h2>
            {{#monitors}}<form method="post" action="/monitoring/end">{{> csrf}}<input type="hidden" name="monitor" value="{{id}}">
            <p>{{name}} ({{email}}) <button>End</button></p></form>{{/monitors}}{{^monitors}}<p>Nobody yet.</p>{{/monitors}}
            {{#invites}}<p>Invited: {{email}} (the link works until {{until}})</p>{{/invites}}
            <form method="post" action="/monitoring/invite">{{> csrf}}
            <label>Invite a person by e-mail <input type="email" name="email" required autocomplete="off"></label>
            <button>Send the invitation</button></form>
            <p>Each person you invite sees where you are while you run, your device's state and your alerts, until you or they end it.</p>
            <h2>Whom I watch over</h2>
            {{#runners}}<form method="post" action="/monitoring/end">{{> csrf}}<input type="hidden" name="runner" value="{{id}}">
            <p>{{name}} ({{email}}) <button>Stop watching</button></p></form>{{/runners}}{{^runners}}<p>Nobody yet.</p>{{/runners}}{{> foot}}
            """,
        accept: """
            {{> head}}<h1>Watch over {{runner}}</h1>{{> error}}
            <p>{{runner}} asks you to watch over them: you would see where they are while they run, their device's state and their alerts,
            and could answer an alert. Either of you can end it at any time.</p>
            {{#signed_in}}<form method="post" action="/monitoring/accept">{{> csrf}}<input type="hidden" name="token" value="{{token}}">
            <button>Accept</button></form>{{/signed_in}}
            {{^signed_in}}<p>The invitation was sent to {{email}}. Log in with that address, or create an account with it, then open
            this link again.</p><p><a href="/login">Log in</a> · <a href="/signup">Create an account</a></p>{{/signed_in}}{{> foot}}
            """,
        deviceCard: """
            <h2>{{runner}} <small>· {{device}}</small></h2>
            <p class="state">{{state}}</p>
            {{#position}}<p>Last position: {{lat}}, {{lon}}{{#accuracy}} (within {{accuracy}} m){{/accuracy}}, {{age}}</p>{{/position}}
            {{^position}}{{#private}}<p class="private">Position: in a private place.</p>{{/private}}{{^private}}<p>No position yet.</p>{{/private}}{{/position}}
            <dl>{{#facts}}<dt>{{label}}</dt><dd>{{value}}</dd>{{/facts}}</dl>
            <form method="post" action="/watch/devices/{{id}}/where">{{> csrf}}<button name="kind" value="where_are_you">Where are you?</button></form>
            {{#alerts}}<div class="alert{{#open}} open{{/open}}" data-alert="{{alert_id}}"><h3>{{#test}}TEST · {{/test}}SOS: {{kind}} · {{state}}</h3>
            <ol>{{#messages}}<li>{{.}}</li>{{/messages}}</ol>
            {{#has_answers}}<ul class="answers">{{#answers}}<li>{{.}}</li>{{/answers}}</ul>{{/has_answers}}
            {{#open}}<p><a href="{{page}}">The alert's page</a></p>{{/open}}
            {{#open}}<form method="post" action="/watch/alerts/{{device_id}}/{{alert_id}}/answer">{{> csrf}}
            <button name="kind" value="on_my_way">I am on my way</button></form>
            <form method="post" action="/watch/alerts/{{device_id}}/{{alert_id}}/answer">{{> csrf}}<input type="hidden" name="kind" value="text">
            <label>Or a short message (100 characters) <input name="text" maxlength="100" required></label><button>Send</button></form>{{/open}}
            </div>{{/alerts}}
            """,
        dashboard: """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="robots" content="noindex"><meta name="referrer" content="strict-origin"><title>Dashboard · Pacer</title>
            <link rel="icon" href="{{assets.icon}}" type="image/svg+xml">
            <style>\(dashboardStyle)</style>{{> map_assets}}</head><body>{{> nav}}
            <h1>Runners I watch over</h1><p><span id="live">connecting…</span> · <a href="/monitoring">Monitoring</a></p>
            <main id="cards" data-tiles="{{tiles}}" data-attribution="{{attribution}}">{{#cards}}<section class="card{{#alert_open}} alert-open{{/alert_open}}" id="card-{{id}}">
            <div id="body-{{id}}">{{{html}}}</div><div class="map" id="map-{{id}}" data-map="{{map_json}}"></div></section>{{/cards}}
            {{^cards}}<p>You watch over nobody yet: a runner invites you from their Monitoring page.</p>{{/cards}}</main>
            </body></html>

            """,
        // The dashboard's script and map, from the one asset server the runner's pages use.
        "map_assets": """
            <link rel="stylesheet" href="{{assets.leaflet_css}}"><script src="{{assets.leaflet_js}}" defer></script>
            <script src="{{assets.dashboard_js}}" defer></script>
            """,
    ]

    static let dashboardStyle = WebPage.style
        + "body{max-width:60em}.card{border:1px solid #999;border-radius:.4em;padding:.5em 1em;margin:1em 0}"
        + ".alert-open{border:3px solid #b00}.alert.open{color:#b00}.alert.open h3{background:#fdd;color:#600;padding:.3em}"
        + ".map{height:18em;margin:.5em 0}dl{display:grid;grid-template-columns:auto 1fr;gap:0 1em}dd{margin:0}"
        + "input{display:inline-block}"

    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        // The templates are constants of this file: a parse error is a bug caught by any test.
        for (name, text) in WebPage.partials { try! library.register(text, named: name) }
        for (name, text) in templates { try! library.register(text, named: name) }
        return library
    }()

    static func render(_ template: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: template) ?? ""
    }

    /// A monitoring page (not the dashboard) with the account pages' headers.
    static func response(_ template: String, _ status: HTTPResponse.Status = .ok, values: [String: Any], csrf: String,
                         error: String? = nil, title: String) -> Response {
        var context = PageLayout.values()
        context.merge(values) { _, given in given }
        context["page_title"] = title
        context["csrf"] = csrf
        if let error { context["error"] = error }
        return Response(status: status, headers: WebPage.headers, body: .init(byteBuffer: ByteBuffer(string: render(template, context))))
    }

    /// The dashboard's headers: script and styles from this server only, map tiles from the
    /// configured tile server (none: no tiles), the event stream from this server. The
    /// referrer is the origin only, as on the run page: tile servers want it.
    static func dashboardHeaders(map: MapSettings) -> HTTPFields {
        var fields = SecurityHeaders.html(style: dashboardStyle, formAction: "'self'", scripts: true,
                                          images: ["'self'", "data:"] + (map.tileOrigin.map { [$0] } ?? []), connect: "'self'")
        fields[.init("Referrer-Policy")!] = PageData.mapReferrer
        return fields
    }

    static func dashboardResponse(cards: [DeviceCard], csrf: String, map: MapSettings) -> Response {
        let encoder = JSONEncoder()
        let values: [[String: Any]] = cards.map { card in
            ["id": card.id, "html": card.html, "alert_open": card.alert_open,
             "map_json": card.map.flatMap { try? String(decoding: encoder.encode($0), as: UTF8.self) } ?? ""]
        }
        var context = PageLayout.values()
        context.merge(["cards": values, "csrf": csrf, "tiles": map.tileURL ?? "", "attribution": map.tileAttribution]) { _, given in given }
        let html = render(dashboard, context)
        return Response(status: .ok, headers: dashboardHeaders(map: map), body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
