import Crypto
import Foundation
import Hummingbird
import Mustache

/// The account pages, server-rendered from Mustache templates compiled into the binary (no
/// resource files to lose): readable on a phone, no script at all, one stylesheet allowed by
/// its hash, and the security headers every HTML answer has (`SecurityHeaders`).
enum WebPage: String, CaseIterable, Sendable {
    case signup, confirm, login, reset, resetPassword = "reset_password", account, accountDelete = "account_delete", message
    case devices, deviceUnlink = "device_unlink", importFile = "import"

    /// The page's template; `{{> head}}` and `{{> foot}}` frame each one. `{{ }}` escapes HTML.
    var template: String {
        switch self {
        case .signup:
            return """
                {{> head}}<h1>Create an account</h1>{{> error}}
                <form method="post" action="/signup">{{> csrf}}
                <label>E-mail <input type="email" name="email" value="{{email}}" required autocomplete="username"></label>
                <label>Your name <input name="display_name" value="{{display_name}}" maxlength="64" autocomplete="name"></label>
                <label>Time zone <input name="timezone" value="{{timezone}}{{^timezone}}UTC{{/timezone}}" maxlength="64"></label>
                <label>Password (12 characters or more) <input type="password" name="password" required minlength="12" autocomplete="new-password"></label>
                <button>Create account</button></form>
                <p><a href="/login">I have an account</a></p>{{> foot}}
                """
        case .confirm:
            return """
                {{> head}}<h1>Confirm your address</h1>{{> error}}
                <form method="post" action="/confirm">{{> csrf}}<input type="hidden" name="token" value="{{token}}">
                <button>Confirm</button></form>{{> foot}}
                """
        case .login:
            return """
                {{> head}}<h1>Log in</h1>{{> error}}
                <form method="post" action="/login">{{> csrf}}
                <label>E-mail <input type="email" name="email" value="{{email}}" required autocomplete="username"></label>
                <label>Password <input type="password" name="password" required autocomplete="current-password"></label>
                <button>Log in</button></form>
                <p><a href="/signup">Create an account</a> · <a href="/reset">Forgot the password?</a></p>{{> foot}}
                """
        case .reset:
            return """
                {{> head}}<h1>Reset the password</h1>{{> error}}
                <form method="post" action="/reset">{{> csrf}}
                <label>E-mail <input type="email" name="email" value="{{email}}" required autocomplete="username"></label>
                <button>Send me a link</button></form>{{> foot}}
                """
        case .resetPassword:
            return """
                {{> head}}<h1>Choose a new password</h1>{{> error}}
                <form method="post" action="/reset/password">{{> csrf}}<input type="hidden" name="token" value="{{token}}">
                <label>New password (12 characters or more) <input type="password" name="password" required minlength="12" autocomplete="new-password"></label>
                <button>Set the password</button></form>{{> foot}}
                """
        case .account:
            return """
                {{> head}}<h1>{{display_name}}</h1>
                <dl><dt>E-mail</dt><dd>{{email}}</dd><dt>Time zone</dt><dd>{{timezone}}</dd></dl>
                <h2>My devices</h2>{{#devices}}<p>{{name}}</p>{{/devices}}{{^devices}}<p>No device yet.</p>{{/devices}}
                <p><a href="/devices">Link a device, or unlink one</a></p>
                <form method="post" action="/logout">{{> csrf}}<button>Log out</button></form>
                <p><a href="/account/delete">Delete my account</a></p>{{> foot}}
                """
        case .accountDelete:
            return """
                {{> head}}<h1>Delete my account</h1>{{> error}}
                <p>This deletes your account, every device of it, and all their runs, positions and alerts. It cannot be undone.</p>
                <form method="post" action="/account/delete">{{> csrf}}
                <label>Your password <input type="password" name="password" required autocomplete="current-password"></label>
                <button>Delete everything</button></form>
                <p><a href="/account">Keep my account</a></p>{{> foot}}
                """
        case .devices:
            return """
                {{> head}}<h1>My devices</h1>{{> error}}
                {{#link}}<p>On the device, within 10 minutes (until {{until}}), type this code; it works once:</p>
                <p class="code" id="link-code">{{code}}</p>
                <p>with <code>pacerctl cloud link {{base}} {{code}}</code></p>{{/link}}
                {{#devices}}<div class="device"><h2>{{name}}</h2><p>Last seen: {{last_seen}}</p>
                {{#linked}}<p><a href="/devices/{{id}}/unlink">Unlink {{name}}</a></p>{{/linked}}{{^linked}}<p>Unlinked: it uploads nothing until it is linked again.</p>{{/linked}}</div>{{/devices}}
                {{^devices}}<p>No device yet.</p>{{/devices}}
                <form method="post" action="/devices/link">{{> csrf}}<button>Link a device</button></form>
                <p><a href="/account">My account</a></p>{{> foot}}
                """
        case .deviceUnlink:
            return """
                {{> head}}<h1>Unlink {{name}}?</h1>{{> error}}
                <p>Its token stops working at once: it uploads nothing more until it is linked again with a new code. Its runs stay in your account.</p>
                <form method="post" action="/devices/{{id}}/unlink">{{> csrf}}<button>Unlink {{name}}</button></form>
                <p><a href="/devices">Keep it linked</a></p>{{> foot}}
                """
        case .importFile:
            return """
                {{> head}}<h1>Import a run</h1>{{> error}}
                <p>A run recorded with another watch or app: a GPX, TCX or FIT file of up to {{max_mb}} MB.</p>
                <form method="post" action="/import" enctype="multipart/form-data">{{> csrf}}
                <label>File <input type="file" name="file" accept=".gpx,.tcx,.fit" required></label>
                <button>Import</button></form>
                <p><a href="/account">My account</a></p>{{> foot}}
                """
        case .message:
            return "{{> head}}<h1>{{title}}</h1>{{> error}}<p>{{text}}</p>{{#link}}<p><a href=\"{{href}}\">{{label}}</a></p>{{/link}}{{> foot}}"
        }
    }

    var title: String {
        switch self {
        case .signup: "Create an account"
        case .confirm: "Confirm your address"
        case .login: "Log in"
        case .reset, .resetPassword: "Reset the password"
        case .account: "My account"
        case .accountDelete: "Delete my account"
        case .devices: "My devices"
        case .deviceUnlink: "Unlink a device"
        case .importFile: "Import a run"
        case .message: "Pacer"
        }
    }

    static let style = "body{font-family:sans-serif;max-width:32em;margin:1em auto;padding:0 1em;line-height:1.4}"
        + "label{display:block;margin:.8em 0}input{display:block;width:100%;box-sizing:border-box;font-size:1.1em;padding:.4em}"
        + "button{font-size:1.1em;padding:.5em 1em;margin:.5em 0}.error{color:#b00;font-weight:bold}.code{font:bold 2.2em monospace;letter-spacing:.1em}"
        + ".device{border-top:1px solid #ccc}dt{font-weight:bold}"

    static let partials = [
        "head": """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><title>{{page_title}} · Pacer</title>
            <style>\(style)</style></head><body>

            """,
        "foot": "\n</body></html>\n",
        "error": #"{{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}"#,
        "csrf": #"<input type="hidden" name="csrf" value="{{csrf}}">"#,
    ]

    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        // The templates are constants of this file: a parse error is a bug caught by any test.
        for (name, text) in partials { try! library.register(text, named: name) }
        for page in WebPage.allCases { try! library.register(page.template, named: page.rawValue) }
        return library
    }()

    static let headers = SecurityHeaders.html(style: style, formAction: "'self'")

    /// The page as a response. `values` fill its fields (never a password: forms are re-shown
    /// without them).
    func response(_ status: HTTPResponse.Status = .ok, values: [String: Any] = [:], csrf: String?, error: String? = nil,
                  extraHeaders: HTTPFields = [:]) -> Response {
        var context = values
        context["page_title"] = values["title"] ?? title
        context["csrf"] = csrf ?? ""
        if let error { context["error"] = error }
        let html = Self.library.render(context, withTemplate: rawValue) ?? ""
        var headers = Self.headers
        headers.append(contentsOf: extraHeaders)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}

/// Headers of every HTML answer (issue 19): a CSP with no script, its one style by hash and no
/// framing; nosniff; no referrer; no caching (pages show personal data and tokens).
enum SecurityHeaders {
    static func html(style: String, formAction: String) -> HTTPFields {
        let styleHash = Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString()
        let policy = "default-src 'none'; style-src 'sha256-\(styleHash)'; img-src 'none'; base-uri 'none'; form-action \(formAction); "
            + "frame-ancestors 'none'"
        var fields: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        fields[.contentSecurityPolicy] = policy
        fields[.init("X-Frame-Options")!] = "DENY"
        fields[.init("X-Content-Type-Options")!] = "nosniff"
        fields[.init("Referrer-Policy")!] = "no-referrer"
        return fields
    }
}

/// A refusal of a web route, answered as a page: the form again with the message (naming the
/// field), a plain message page, or the way to the log-in page (401).
enum WebRefusal: Error, HTTPResponseError, Sendable {
    case form(HTTPResponse.Status, page: WebPage, message: String, values: [String: String] = [:], csrf: String? = nil)
    case plain(HTTPResponse.Status, String)
    case signInFirst
    case tooManyAttempts(retryAfter: Int, message: String)

    var status: HTTPResponse.Status {
        switch self {
        case .form(let status, _, _, _, _), .plain(let status, _): status
        case .signInFirst: .unauthorized
        case .tooManyAttempts: .tooManyRequests
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let csrf = (context as? CloudRequestContext)?.session?.csrf ?? request.cookies[Sessions.formCookieName]?.value
        switch self {
        case .form(let status, let page, let message, let values, let formCSRF):
            return page.response(status, values: values, csrf: formCSRF ?? csrf, error: message)
        case .plain(let status, let message):
            return WebPage.message.response(status, values: ["title": "Not done"], csrf: nil, error: message)
        case .signInFirst:
            return WebPage.message.response(.unauthorized, values: ["title": "Log in first", "text": "Your session has ended or you are not logged in.",
                                                                    "link": ["href": "/login", "label": "Log in"]], csrf: nil)
        case .tooManyAttempts(let seconds, let message):
            return WebPage.message.response(.tooManyRequests, values: ["title": "Too many attempts"], csrf: nil, error: message,
                                            extraHeaders: [.retryAfter: String(seconds)])
        }
    }
}
