import CloudModel
import Hummingbird

/// The frame every page shares: the nav (the runner's sections when signed in, log-in and
/// sign-up when not), with the page the viewer is on marked `aria-current="page"`. Who views
/// which path is set once per request, by `SessionMiddleware` for the pages and by
/// `ErrorMiddleware` for error pages, as a task-local: every page rendered while the request
/// is handled gets the same frame without each handler passing it along.
enum PageLayout {
    struct Viewer: Sendable {
        var signedIn: Bool
        /// The request's path: which nav entry is the current page.
        var path: String
        /// When the request is handled (the server's wall clock): what "this year" and "3 min
        /// ago" are measured from.
        var nowMs: Int64?
        /// The signed-in account's kilometres or miles (kilometres for a signed-out viewer, a
        /// shared run's page included: it shows nothing of the runner's account).
        var units: DistanceUnit = .km
    }

    @TaskLocal static var viewer: Viewer?

    /// The unit this request's pages write distances and paces in.
    static var units: DistanceUnit { viewer?.units ?? .km }

    /// The runner's sections, in the nav's order.
    static let sections: [(href: String, label: String)] = [
        ("/runs", "Runs"), ("/stats", "Statistics"), ("/plan", "Plan"), ("/heart", "Health"), ("/devices", "Devices"),
        ("/import", "Import"), ("/races", "Races"), ("/monitoring", "Monitoring"), ("/watch", "Watch"), ("/account", "Account"),
    ]
    static let signedOutSections: [(href: String, label: String)] = [("/login", "Log in"), ("/signup", "Create an account")]

    /// The section a path belongs to: itself or a path below it ("/runs/ID" is under Runs,
    /// "/plan/sessions/ID" under Plan), never a mere prefix ("/runsx").
    static func isUnder(_ path: String, _ section: String) -> Bool {
        path == section || path.hasPrefix(section + "/")
    }

    /// The template values of the nav (`layout_nav`), for the viewer of this request (signed
    /// out when no middleware said: a refusal rendered before the session was read), and the
    /// asset URLs (`assets`).
    static func values(_ viewer: Viewer? = PageLayout.viewer) -> [String: Any] {
        let signedIn = viewer?.signedIn ?? false
        let path = viewer?.path ?? ""
        let items: [[String: Any]] = (signedIn ? sections : signedOutSections).map { section in
            ["href": section.href, "label": section.label, "current": isUnder(path, section.href)]
        }
        return ["layout_nav": ["items": items, "signed_in": signedIn], "assets": Assets.urls()]
    }

    /// The nav partial: a brand link home and the sections.
    static let nav = #"<nav class="top" aria-label="Pacer">{{#layout_nav}}<a href="/" class="brand">Pacer</a>{{#items}}"#
        + #"<a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a>{{/items}}{{/layout_nav}}</nav>"#

    /// The nav's style: a row that wraps on a phone, the current page underlined.
    static let style = "nav.top{display:flex;flex-wrap:wrap;gap:.3em 1em;margin:.5em 0 1em;padding-bottom:.4em;border-bottom:1px solid var(--line)}"
        + "nav.top a{font-weight:bold;text-decoration:none;color:var(--link);padding:.15em 0}"
        + "nav.top a.brand{color:inherit;margin-right:auto;flex-basis:100%}"
        + "nav.top a[aria-current=page]{color:inherit;border-bottom:3px solid var(--accent)}"
}
