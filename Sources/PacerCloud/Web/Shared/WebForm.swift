import CloudModel
import Foundation
import Hummingbird

/// A posted HTML form (application/x-www-form-urlencoded), its CSRF token checked.
struct WebForm {
    /// Forms hold an address, a name, a time zone and a password or two: 16 KiB is plenty.
    static let maxBytes = 16 * 1024
    private(set) var fields: [String: String] = [:]

    subscript(_ name: String) -> String? { fields[name] }

    /// The field's value, or a 400 naming it.
    func required(_ name: String, page: WebPage, values: [String: String] = [:]) throws -> String {
        guard let value = fields[name], !value.isEmpty else {
            throw WebRefusal.form(.badRequest, page: page, message: "\(name): fill it in", values: values)
        }
        return value
    }

    /// The fields of `text` in their order, duplicates too; those that do not decode are left out.
    static func orderedFields(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (raw: Substring) in String(raw).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = decode(parts.count == 2 ? parts[1] : ""), !value.contains("\0") else { return nil }
            return (name, value)
        }
    }

    /// Parses `text`; duplicate fields keep the first value.
    static func parse(_ text: String) -> Result<WebForm, WebRefusal> {
        var form = WebForm()
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (raw: Substring) in String(raw).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = decode(parts.count == 2 ? parts[1] : "") else {
                return .failure(.plain(.badRequest, "the form field '\(String(parts[0]).prefix(40))' is not valid percent-encoded UTF-8"))
            }
            if value.contains("\0") { return .failure(.plain(.badRequest, "the form field \(name.prefix(40)) contains a NUL character")) }
            if form.fields[name] == nil { form.fields[name] = value }
        }
        return .success(form)
    }

    /// The request's form, refused (4xx) when it is no form, too large, or its `csrf` field is not
    /// the session's token.
    static func read(_ request: Request, context: SignedInContext, maxBytes: Int = maxBytes) async throws -> WebForm {
        try await read(request, session: context.session, maxBytes: maxBytes)
    }

    /// A public route's form: its `csrf` field must be the session's token when the browser is
    /// signed in, else the form cookie's (double submit).
    static func read(_ request: Request, context: CloudRequestContext, maxBytes: Int = maxBytes) async throws -> WebForm {
        try await read(request, session: context.session, maxBytes: maxBytes)
    }

    private static func read(_ request: Request, session: StoredSession?, maxBytes: Int) async throws -> WebForm {
        let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/x-www-form-urlencoded" else {
            throw WebRefusal.plain(.unsupportedMediaType, "send the form as application/x-www-form-urlencoded (Content-Type)")
        }
        let body: ByteBuffer
        do { body = try await request.body.collect(upTo: maxBytes) } catch {
            throw WebRefusal.plain(.contentTooLarge, "the form is larger than \(maxBytes) bytes")
        }
        guard let text = String(validating: body.readableBytesView, as: UTF8.self) else {
            throw WebRefusal.plain(.badRequest, "the form is not UTF-8")
        }
        let form = try parse(text).get()
        let expected = session?.csrf ?? request.cookies[Sessions.formCookieName]?.value
        guard let expected, !expected.isEmpty, let sent = form["csrf"], constantTimeEqual(sent, expected) else {
            throw WebRefusal.plain(.forbidden, "the form's csrf field does not match this browser's session: reload the page and send it again")
        }
        return form
    }

    /// Compares without stopping at the first difference, so timing tells nothing of the token.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
