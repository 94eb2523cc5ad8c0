import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PacerCloud
import Testing

@Suite("pacer-cloud: account pages", .timeLimit(.minutes(10)))
struct PageTests {
    @Test("every page: security headers, no script, a phone's viewport, and what was typed escaped", arguments: Backend.allCases)
    func pages(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            var seen: [TestResponse] = []
            for path in ["/signup", "/confirm?token=x%22%3E%3Cb%3E", "/login", "/reset", "/reset/password?token=abc"] {
                seen.append(try await browser.get(path))
            }
            let hostile = #""><script>alert(1)</script>"#
            let refused = try await browser.post("/signup", ["email": hostile + "@example.org", "password": AccountTests.password,
                                                             "display_name": hostile])
            #expect(refused.status == .badRequest && refused.text.contains("email is not an e-mail address"))
            #expect(refused.text.contains("&lt;script&gt;") && !refused.text.contains(hostile))
            seen.append(refused)
            try await browser.signUpAndLogIn("ann@example.org")
            seen.append(try await browser.get("/account"))
            seen.append(try await browser.get("/account/delete"))
            #expect(seen[2].text.contains("<h1>Log in</h1>") && seen[1].text.contains(#"value="x&quot;&gt;&lt;b&gt;""#))
            for page in seen {
                #expect(page.headers[.contentType] == "text/html; charset=utf-8")
                let policy = page.headers[.contentSecurityPolicy] ?? ""
                #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'") && !policy.contains("script-src"))
                #expect(page.headers[.init("X-Frame-Options")!] == "DENY" && page.headers[.init("X-Content-Type-Options")!] == "nosniff")
                #expect(page.headers[.init("Referrer-Policy")!] == "no-referrer" && page.headers[.cacheControl] == "no-store")
                #expect(!page.text.contains("<script") && !page.text.contains(" style=") && !page.text.contains("onclick"))
                #expect(page.text.contains(#"<meta name="viewport" content="width=device-width, initial-scale=1">"#))
            }
        }
    }

    @Test("malformed forms are a 4xx naming what is wrong, never a 5xx, and store nothing", arguments: Backend.allCases)
    func malformed(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let csrf = try #require(Browser.csrf(in: try await browser.get("/signup").text))
            let cookie = "pacer_form=\(csrf)"
            func post(_ body: [UInt8], type: String = "application/x-www-form-urlencoded") async throws -> TestResponse {
                try await cloud.client.execute(uri: "/signup", method: .post, headers: [.contentType: type, .cookie: cookie],
                                               body: ByteBuffer(bytes: body))
            }
            // Each case's parts typed one by one: as one literal of tuples it took the compiler 9 s.
            let form = "application/x-www-form-urlencoded"
            func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
            let cases: [(body: [UInt8], type: String, status: HTTPResponse.Status, says: String)] = [
                (bytes(#"{"email":"a@b.org"}"#), "application/json", HTTPResponse.Status.unsupportedMediaType, form),
                ([UInt8](repeating: UInt8(ascii: "a"), count: 17_000), form, HTTPResponse.Status.contentTooLarge, "larger than 16384"),
                (bytes("csrf=\(csrf)&email=%ZZ"), form, HTTPResponse.Status.badRequest, "not valid percent-encoded"),
                (bytes("csrf=\(csrf)&email=") + [UInt8(0xFF), UInt8(0xFE)], form, HTTPResponse.Status.badRequest, "not UTF-8"),
                (bytes("csrf=\(csrf)&email=a%00b"), form, HTTPResponse.Status.badRequest, "email contains a NUL"),
                (bytes("csrf=\(csrf)&email=a%40b.org"), form, HTTPResponse.Status.badRequest, "Password: fill it in"),
                (bytes("csrf=\(csrf)&password=correct+horse+battery"), form, HTTPResponse.Status.badRequest, "E-mail: fill it in"),
                (bytes("csrf=\(csrf)&email=a%40b.org&password=correct+horse+battery&timezone=Nowhere"), form,
                 HTTPResponse.Status.badRequest, "Time zone: &#39;Nowhere&#39; is not in the list"),
            ]
            for item in cases {
                let response = try await post(item.body, type: item.type)
                #expect(response.status == item.status, "\(item.says): \(response.status)")
                #expect(response.text.contains(item.says), "\(item.says): \(response.text)")
            }
            #expect(try await cloud.store.accounts.accounts().isEmpty)
            // A taken address gets the page a new one gets (sign-up tells nobody who has an
            // account), no second account, and its owner an e-mail about the attempt.
            _ = try await Accounts.create(store: cloud.store, email: "a@b.org", password: AccountTests.password, displayName: nil, cost: AccountTests.cost)
            let taken = try await post(Array("csrf=\(csrf)&email=A%40b.org&password=another+long+password".utf8))
            let fresh = try await post(Array("csrf=\(csrf)&email=c%40d.org&password=another+long+password".utf8))
            #expect(taken.status == .ok && fresh.status == .ok)
            #expect(taken.text.replacingOccurrences(of: "a@b.org", with: "X") == fresh.text.replacingOccurrences(of: "c@d.org", with: "X"))
            #expect(try await cloud.store.accounts.accounts().map(\.email).sorted() == ["a@b.org", "c@d.org"])
            let mails = try await cloud.store.outbox.outbox().filter { $0.target == "a@b.org" }
            #expect(mails.count == 1 && mails[0].payload.contains("has one already") && !mails[0].payload.contains("token="))
        }
    }
}
