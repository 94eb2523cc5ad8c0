import CloudModel
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PacerCloud
import Synchronization

/// A browser for the account pages: keeps the cookies it is given, and posts forms with the
/// CSRF token read from the page it fetched them from.
final class Browser: Sendable {
    let cloud: Cloud
    /// The client address it claims (X-Forwarded-For; believed only from a trusted proxy).
    let address: String?
    private let jar = Mutex<[String: String]>([:])
    /// Every Set-Cookie line received, for checking their attributes.
    private let setCookies = Mutex<[String]>([])

    init(_ cloud: Cloud, address: String? = nil) {
        self.cloud = cloud
        self.address = address
    }

    var cookies: [String: String] { jar.withLock { $0 } }
    var receivedSetCookies: [String] { setCookies.withLock { $0 } }
    func setCookie(_ name: String, _ value: String) { jar.withLock { $0[name] = value } }

    /// The Cookie header this browser sends (empty when it has no cookie).
    var cookieHeader: String {
        cookies.filter { !$0.value.isEmpty }.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")
    }

    private var headers: HTTPFields {
        var fields: HTTPFields = [:]
        let cookie = cookieHeader
        if !cookie.isEmpty { fields[.cookie] = cookie }
        if let address { fields[.init("X-Forwarded-For")!] = address }
        return fields
    }

    private func keep(_ response: TestResponse) {
        for line in response.headers[values: .setCookie] {
            setCookies.withLock { $0.append(line) }
            let pair = line.split(separator: ";").first.map(String.init) ?? ""
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2 else { continue }
            jar.withLock { $0[parts[0]] = parts[1].isEmpty ? nil : parts[1] }
        }
    }

    @discardableResult
    func get(_ uri: String) async throws -> TestResponse {
        let response = try await cloud.client.execute(uri: uri, method: .get, headers: headers, body: nil)
        keep(response)
        return response
    }

    /// Posts `fields` (form-encoded) to `uri`, with the csrf field given or else the one of the
    /// page at `formPage` (default: `uri`), fetched first.
    @discardableResult
    func post(_ uri: String, _ fields: [String: String], formPage: String? = nil, csrf: String? = nil) async throws -> TestResponse {
        var fields = fields
        if fields["csrf"] == nil {
            if let csrf {
                fields["csrf"] = csrf
            } else {
                let page = try await get(formPage ?? uri)
                fields["csrf"] = Browser.csrf(in: page.text) ?? ""
            }
        }
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        let body = Browser.encode(fields)
        let response = try await cloud.client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
        keep(response)
        return response
    }

    static func encode(_ fields: [String: String]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
    }

    static func csrf(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix(while: { $0 != "\"" }))
    }

    /// Registers, confirms through the e-mailed link and logs in.
    func signUpAndLogIn(_ email: String, password: String = AccountTests.password) async throws {
        let created = try await post("/signup", ["email": email, "password": password, "display_name": "Runner"])
        guard created.status == .ok else { throw WebTestError("sign-up: \(created.status) \(created.text)") }
        let token = try await cloud.mailedToken(to: email, path: "/confirm")
        let confirmed = try await post("/confirm", ["token": token], formPage: "/confirm?token=\(token)")
        guard confirmed.status == .ok else { throw WebTestError("confirm: \(confirmed.status) \(confirmed.text)") }
        let loggedIn = try await post("/login", ["email": email, "password": password])
        guard loggedIn.status == .seeOther else { throw WebTestError("log-in: \(loggedIn.status) \(loggedIn.text)") }
    }
}

struct WebTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Cloud {
    /// The token of the newest e-mail to `to` whose link has `path`.
    func mailedToken(to address: String, path: String) async throws -> String {
        for item in try await store.outbox.outbox().reversed() where item.channel == "email" && item.target == address {
            guard let email = try JSONSerialization.jsonObject(with: Data(item.payload.utf8)) as? [String: Any],
                  let text = email["text"] as? String, let range = text.range(of: path + "?token=") else { continue }
            return String(text[range.upperBound...].prefix(while: { !$0.isWhitespace }))
        }
        throw WebTestError("no e-mail to \(address) with a \(path) link")
    }
}

/// A web configuration for tests: bcrypt at its minimum cost, a mail relay nobody listens on
/// (the e-mails wait in the outbox, where the tests read their links).
enum WebConfig {
    static func make(publicURL: String? = nil, limits: RateLimits = .defaults, proxies: Set<String> = [],
                     sessions: SessionSettings = .defaults) -> CloudConfiguration {
        // Dashboard streams end within a second, so a test that opens one reads it whole.
        CloudConfiguration(publicURL: publicURL, mail: MailSettings(host: "127.0.0.1", port: 9, from: "pacer@example.org"),
                           outboxPoll: .seconds(3600), rateLimits: limits, trustedProxies: proxies, sessions: sessions,
                           passwordCost: AccountTests.cost,
                           monitoring: MonitorSettings(streamLifetime: .seconds(1), heartbeat: .milliseconds(500)))
    }
}

/// A wall clock the test steps.
final class SteppedWallClock: Sendable {
    private let milliseconds = Mutex<Int64>(1_778_398_200_000)
    var now: @Sendable () -> Int64 { { self.milliseconds.withLock { $0 } } }
    func advance(_ duration: Duration) { milliseconds.withLock { $0 += Int64(duration.components.seconds) * 1000 } }
}
