import CloudModel
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PacerCloud
import Testing

/// "My devices" and `POST /v1/link`: a signed-in account gets a one-time code, a device
/// exchanges it for its own token, and what that device uploads is the account's.
@Suite("pacer-cloud: linking a device by a one-time code", .timeLimit(.minutes(10)))
struct DeviceLinkTests {
    /// Presses "Link a device" on the page; the code it shows ("ABCD-EFGH").
    static func newCode(_ browser: Browser) async throws -> String {
        let page = try await browser.post("/devices/link", [:], formPage: "/devices")
        guard page.status == .ok, let range = page.text.range(of: #"id="link-code">"#) else {
            throw WebTestError("no code on the page: \(page.status) \(page.text.prefix(500))")
        }
        return String(page.text[range.upperBound...].prefix(while: { $0 != "<" }))
    }

    static func link(_ cloud: Cloud, _ code: String, name: String? = nil, address: String? = nil) async throws -> (TestResponse, [String: Any]) {
        var body: [String: Any] = ["code": code]
        if let name { body["name"] = name }
        let headers: HTTPFields = address.map { [.init("X-Forwarded-For")!: $0] } ?? [:]
        let response = try await cloud.json(.post, "/v1/link", token: nil, body, headers: headers)
        return (response, (try? JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any]) ?? [:])
    }

    static func errorCode(_ json: [String: Any]) -> String? { (json["error"] as? [String: Any])?["code"] as? String }

    @Test("the page's code links a device once; its runs are the account's; unlinking revokes the token; re-linking keeps the runs",
          arguments: Backend.allCases)
    func linkUploadUnlinkRelink(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            let empty = try await browser.get("/devices")
            #expect(empty.status == .ok && empty.text.contains("No device yet") && empty.text.contains(#"action="/devices/link""#))

            let code = try await Self.newCode(browser)
            #expect(code.count == 9 && code.dropFirst(4).first == "-", "\(code)")
            #expect(code.allSatisfy { $0 == "-" || LinkCodes.alphabet.contains($0) })
            let (linked, grant) = try await Self.link(cloud, code, name: "ann-pi")
            #expect(linked.status == .created, "\(linked.text)")
            #expect(grant["device"] as? String == "ann-pi" && grant["account"] as? String == "Runner")
            let token = try #require(grant["token"] as? String)
            let account = try #require(try await cloud.store.accounts.account(email: "ann@example.org")).account
            let device = try #require(try await cloud.store.devices.devices().first { $0.name == "ann-pi" })
            #expect(device.accountID == account.id && !device.revoked && device.lastSeenMs != nil, "seen when it linked")

            // Uploads with the new token belong to the device, and so to the account.
            let run = Track.runID()
            #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(5)), token: token).status == .created)
            #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: token, Track.summary(chunks: 1)).status == .created)
            #expect(try await cloud.request(.get, "/v1/runs", token: token).text.contains(run))
            let page = try await browser.get("/devices")
            // In the account's zone and the pages' one format, with its age: "Sat 28 Nov, 14:05 (just now)" (or a
            // minute or two later on the wall clock, in a loaded run).
            #expect(page.text.contains("ann-pi") && page.text.range(of: #"Last seen: [A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2}, \d\d:\d\d \((just now|\d{1,2} s ago|\d{1,2} min ago)\)"#,
                                                                    options: .regularExpression) != nil, "\(page.text)")
            #expect(!page.text.contains(" UTC"))

            // The code works once, in any case and spacing.
            let (again, refusal) = try await Self.link(cloud, " " + code.lowercased() + "\r\n", name: "ann-other")
            // Said as a wrong code is (issue 31: one answer for unknown, used and expired).
            #expect(again.status == .notFound && Self.errorCode(refusal) == "code_invalid", "\(again.text)")
            #expect(again.text.contains("used already"))

            // Unlinking: a confirmation page, then the token is refused; the runs stay.
            let confirm = try await browser.get("/devices/\(device.id)/unlink")
            #expect(confirm.status == .ok && confirm.text.contains("Unlink ann-pi?"))
            let unlinked = try await browser.post("/devices/\(device.id)/unlink", [:])
            #expect(unlinked.status == .seeOther)
            #expect(try await cloud.request(.get, "/v1/runs", token: token).status == .unauthorized)
            #expect(try await browser.get("/devices").text.contains("Unlinked"))

            // Re-linked by its name: a new token, the same device and runs.
            let (relinked, regrant) = try await Self.link(cloud, try await Self.newCode(browser), name: "ann-pi")
            #expect(relinked.status == .ok, "\(relinked.text)")
            let newToken = try #require(regrant["token"] as? String)
            #expect(newToken != token)
            #expect(try await cloud.request(.get, "/v1/runs", token: newToken).text.contains(run))
            #expect(try await cloud.store.devices.devices().filter { $0.accountID == account.id }.map(\.id) == [device.id])

            // Without a name the cloud picks one; the device can unlink itself.
            let (picked, pickedGrant) = try await Self.link(cloud, try await Self.newCode(browser))
            #expect(picked.status == .created && (pickedGrant["device"] as? String)?.hasPrefix("pacer-") == true, "\(picked.text)")
            let pickedToken = try #require(pickedGrant["token"] as? String)
            #expect(try await cloud.request(.delete, "/v1/link", token: pickedToken).status == .noContent)
            #expect(try await cloud.request(.get, "/v1/runs", token: pickedToken).status == .unauthorized)
        }
    }

    @Test("wrong, malformed and replaced codes, and a name of another account's device, are 4xx naming the problem",
          arguments: Backend.allCases)
    func badCodes(backend: Backend) async throws {
        var limits = RateLimits.defaults
        limits.linkPerAddress = nil  // more tries than the limit allows; `rateLimited` tests it
        try await Cloud.with(backend, configuration: WebConfig.make(limits: limits)) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            _ = try await cloud.addDevice("bob-pi")
            let counts = try await cloud.store.counts()

            let (unknown, unknownBody) = try await Self.link(cloud, "2345-6789")
            #expect(unknown.status == .notFound && Self.errorCode(unknownBody) == "code_invalid", "\(unknown.text)")
            for junk in ["hello", "", "ABCD-EFGO", "ABCD-EFGH-J", String(repeating: "A", count: 5000)] {
                let (response, body) = try await Self.link(cloud, junk)
                #expect(response.status == .badRequest && Self.errorCode(body) == "invalid_field" && response.text.contains("'code'"), "\(junk.prefix(20)): \(response.text)")
            }
            for body in [#"{"name":"x"}"#, #"{"code":12345678}"#, "not json"] {
                let response = try await cloud.request(.post, "/v1/link", token: nil, body: Array(body.utf8), headers: [.contentType: "application/json"])
                #expect(response.status == .badRequest, "\(body): \(response.text)")
            }
            let (badName, badNameBody) = try await Self.link(cloud, "2345-6789", name: "../etc")
            #expect(badName.status == .badRequest && Self.errorCode(badNameBody) == "invalid_field" && badName.text.contains("'name'"))

            // A second press replaces the first code.
            let first = try await Self.newCode(browser)
            let second = try await Self.newCode(browser)
            #expect(first != second)
            #expect(Self.errorCode(try await Self.link(cloud, first).1) == "code_invalid")

            // Another account's device name: refused, and the code is not used up.
            let (taken, takenBody) = try await Self.link(cloud, second, name: "bob-pi")
            #expect(taken.status == .conflict && Self.errorCode(takenBody) == "name_unavailable", "\(taken.text)")
            #expect(try await cloud.store.devices.devices().first { $0.name == "bob-pi" }?.accountID == nil)
            #expect(try await Self.link(cloud, second, name: "ann-pi").0.status == .created)
            var expected = counts
            expected.devices += 1
            expected.linkCodes = 1  // the used one, kept to say "used" rather than "unknown"
            #expect(try await cloud.store.counts() == expected)
        }
    }

    @Test("store: of devices racing for one code exactly one is linked; unlinking is the owner's only; deleting the account takes its codes",
          arguments: Backend.allCases)
    func storeSemantics(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let store = cloud.store
            let ann = try await Accounts.create(store: store, email: "ann@example.org", password: AccountTests.password, displayName: "Ann",
                                                confirmed: true, cost: AccountTests.cost)
            let bob = try await Accounts.create(store: store, email: "bob@example.org", password: AccountTests.password, displayName: "Bob",
                                                confirmed: true, cost: AccountTests.cost)
            let hash = LinkCodes.hash("ABCDEFGH")
            try await store.devices.addLinkCode(hash: hash, accountID: ann.id, expiresMs: 2_000, nowMs: 1_000)
            let outcomes = try await withThrowingTaskGroup(of: LinkOutcome.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let device = Device(id: "d\(index)", name: "racer-\(index)", email: nil, webhook: nil, createdAt: "2026-05-10T07:30:00.000Z")
                        return try await store.devices.linkDevice(codeHash: hash, nowMs: 1_500, device: device, tokenHash: "token-\(index)")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let linked = outcomes.compactMap { outcome -> Device? in if case .linked(let device, _) = outcome { device } else { nil } }
            #expect(linked.count == 1 && outcomes.filter { $0 == .usedCode }.count == 7, "\(outcomes)")
            #expect(linked.first?.lastSeenMs == 1_500)
            let winner = try #require(linked.first)
            #expect(try await store.devices.devices().map(\.name) == [winner.name] && winner.accountID == ann.id)

            #expect(try await store.devices.unlinkDevice(id: winner.id, accountID: bob.id) == false)
            #expect(try await store.devices.device(tokenHash: "token-" + winner.id.dropFirst()) != nil)
            #expect(try await store.devices.unlinkDevice(id: winner.id, accountID: ann.id))
            #expect(try await store.devices.device(tokenHash: "token-" + winner.id.dropFirst()) == nil)

            // One live code per account; deleting the account deletes its codes with its devices.
            try await store.devices.addLinkCode(hash: LinkCodes.hash("BBBBBBBB"), accountID: ann.id, expiresMs: 9_000, nowMs: 2_000)
            try await store.devices.addLinkCode(hash: LinkCodes.hash("CCCCCCCC"), accountID: ann.id, expiresMs: 9_000, nowMs: 2_000)
            try await store.devices.addLinkCode(hash: LinkCodes.hash("DDDDDDDD"), accountID: bob.id, expiresMs: 9_000, nowMs: 2_000)
            #expect(try await store.counts().linkCodes == 3, "the used one, ann's newest and bob's")
            let deleted = try #require(try await store.deleteAccount(id: ann.id))
            #expect(deleted.linkCodes == 2 && deleted.devices == 1)
            let device = Device(id: "late", name: "late", email: nil, webhook: nil, createdAt: "2026-05-10T07:30:00.000Z")
            #expect(try await store.devices.linkDevice(codeHash: LinkCodes.hash("CCCCCCCC"), nowMs: 3_000, device: device, tokenHash: "t") == .unknownCode)
            // Codes expired a day ago are purged when another is made.
            try await store.devices.addLinkCode(hash: LinkCodes.hash("EEEEEEEE"), accountID: bob.id, expiresMs: 99_999_999, nowMs: 9_000 + 86_400_001)
            #expect(try await store.counts().linkCodes == 1)
        }
    }

    @Test("a code is good for 10 minutes of wall time", arguments: Backend.allCases)
    func expiry(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            let code = try await Self.newCode(browser)
            clock.advance(.seconds(599))
            let (linked, grant) = try await Self.link(cloud, code, name: "in-time")
            #expect(linked.status == .created)
            // Last seen: at the link, then at its requests, to the minute.
            let linkedAt = clock.now()
            #expect(try await cloud.store.devices.devices().first?.lastSeenMs == linkedAt)
            clock.advance(.seconds(30))
            #expect(try await cloud.request(.get, "/v1/runs", token: grant["token"] as? String).status == .ok)
            #expect(try await cloud.store.devices.devices().first?.lastSeenMs == linkedAt, "not written more than once a minute")
            clock.advance(.seconds(90))
            #expect(try await cloud.request(.get, "/v1/runs", token: grant["token"] as? String).status == .ok)
            #expect(try await cloud.store.devices.devices().first?.lastSeenMs == clock.now())
            let late = try await Self.newCode(browser)
            clock.advance(.seconds(600))
            let (expired, body) = try await Self.link(cloud, late, name: "too-late")
            #expect(expired.status == .notFound && Self.errorCode(body) == "code_invalid", "\(expired.text)")
            #expect(expired.text.contains("older than 10 minutes"))
            #expect(try await cloud.store.devices.devices().map(\.name) == ["in-time"])
        }
    }

    @Test("link attempts are limited per client address, right code or not")
    func rateLimited() async throws {
        var limits = RateLimits.defaults
        limits.linkPerAddress = RateLimit(burst: 3, period: .seconds(600))
        try await Cloud.with(.sqlite, configuration: WebConfig.make(limits: limits, proxies: ["127.0.0.1", "::1"]), testing: .live) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            let code = try await Self.newCode(browser)
            for guess in ["2222-2222", "3333-3333", "4444-4444"] {
                #expect(try await Self.link(cloud, guess, address: "198.51.100.7").0.status == .notFound)
            }
            let (limited, body) = try await Self.link(cloud, code, address: "198.51.100.7")
            #expect(limited.status == .tooManyRequests && Self.errorCode(body) == "rate_limited" && limited.headers[.retryAfter] != nil)
            // Another address still links, with the same code (the limited try used nothing).
            #expect(try await Self.link(cloud, code, address: "198.51.100.8").0.status == .created)
        }
    }

    @Test("neither a code nor a device token reaches the logs")
    func noSecretsInLogs() async throws {
        let log = LogCapture()
        try await Cloud.with(.sqlite, configuration: WebConfig.make(), logger: Logger(label: "pacer-cloud") { _ in CapturingLogHandler(sink: log) }) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            let code = try await Self.newCode(browser)
            let (_, grant) = try await Self.link(cloud, code, name: "ann-pi")
            let token = try #require(grant["token"] as? String)
            _ = try await Self.link(cloud, code)
            _ = try await cloud.request(.delete, "/v1/link", token: token)
            let lines = log.lines
            #expect(lines.contains { $0.contains("ann-pi") && $0.contains("linked") })
            for secret in [code, code.replacingOccurrences(of: "-", with: ""), token] {
                #expect(!lines.contains { $0.contains(secret) }, "\(secret) in \(lines.filter { $0.contains(secret) })")
            }
        }
    }
}
