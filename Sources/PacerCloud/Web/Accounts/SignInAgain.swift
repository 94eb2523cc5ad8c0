import CloudModel
import Foundation
import Hummingbird

/// What a signed-in page answers a browser whose session has ended (or that never logged in):
/// the log-in form itself (401), which brings the runner back afterwards. A page that was
/// asked for (GET) is where the log-in leads; a form that was sent keeps what was typed
/// (every field but the CSRF token and passwords) in the log-in form, and after the log-in the
/// runner is asked to send it again (`resumePage`), with the new session's token.
extension Sessions {
    /// The log-in page in place of a signed-in page.
    func signInAgain(_ request: Request) async -> Response {
        var values: [String: String] = [:]
        if request.method == .get || request.method == .head {
            values["next"] = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        } else if let form = await Self.sentForm(request) {
            // The form goes to where it was sent, once the runner says so; with nothing to keep
            // (a log-out, a password) there is nothing to go back to: the path takes no GET.
            let kept = form.filter { $0.name != "csrf" && !$0.name.contains("password") }
            if !kept.isEmpty {
                values["resume"] = Self.encode(kept)
                values["next"] = request.uri.path
            }
        }
        if let next = values["next"], !Self.isLocalPath(next) { values["next"] = nil }
        values["notice"] = values["resume"] != nil
            ? "Your session ended before this was saved. Log in, and what you typed is kept for you to send again."
            : "Your session has ended or you are not logged in. Log in, and you are brought back to this page."
        if let existing = request.cookies[Sessions.formCookieName]?.value, Tokens.isWellFormedSecret(existing) {
            return WebPage.login.response(.unauthorized, values: values, csrf: existing)
        }
        let token = Tokens.random()
        return WebPage.login.response(.unauthorized, values: values, csrf: token,
                                      extraHeaders: [.setCookie: cookie(Sessions.formCookieName, value: token, maxAge: nil)])
    }

    /// The fields of a form-encoded body, in order; nil when the body is none, too large or not a form.
    private static func sentForm(_ request: Request) async -> [(name: String, value: String)]? {
        let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/x-www-form-urlencoded",
              let body = try? await request.body.collect(upTo: WebForm.maxBytes),
              let text = String(validating: body.readableBytesView, as: UTF8.self) else { return nil }
        return WebForm.orderedFields(text)
    }

    static func encode(_ fields: [(name: String, value: String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0.name.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")="
            + "\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    /// A path on this server, never another site's ("//host", "/\host", "https://…") nor a
    /// line break: where a log-in may lead.
    static func isLocalPath(_ path: String) -> Bool {
        path.hasPrefix("/") && !path.hasPrefix("//") && !path.hasPrefix("/\\") && path.utf8.count <= 2_000
            && !path.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }
}
