@testable import CloudModel
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Synchronization
import Testing

/// Issue 31, deliverable 5: the account findings, each shown through the routes an attacker
/// would use (log-in limits that other traffic cannot reset, reset links that die with a reset,
/// dashboard streams that end with the session, normalised addresses, plain inviter names,
/// neutral link answers).
@Suite("pacer-cloud: accounts hardened (issue 31)", .timeLimit(.minutes(10)))
struct AccountHardeningTests {
    static let password = AccountTests.password

    /// A `now` the test steps: the limiters refill by it, so one that barely moves barely refills.
    final class SteppedClock: Sendable {
        private let time = Mutex<Duration>(.seconds(1))
        var now: @Sendable () -> Duration { { self.time.withLock { $0 } } }
        func advance(_ duration: Duration) { time.withLock { $0 += duration } }
    }

    static func confirmedAccount(_ cloud: Cloud, _ email: String, displayName: String? = nil) async throws -> Account {
        try await Accounts.create(store: cloud.store, email: email, password: password, displayName: displayName, confirmed: true,
                                  cost: AccountTests.cost)
    }

    /// The e-mails queued to `address`, decoded.
    static func mails(_ cloud: Cloud, to address: String) async throws -> [(subject: String, text: String)] {
        try await cloud.store.outbox.outbox().filter { $0.channel == "email" && $0.target == address }.compactMap { item in
            guard let mail = try JSONSerialization.jsonObject(with: Data(item.payload.utf8)) as? [String: Any],
                  let subject = mail["subject"] as? String, let text = mail["text"] as? String else { return nil }
            return (subject, text)
        }
    }

    // MARK: Log-in limits

    @Test("a victim's spent log-in budget survives 10,000 resets of made-up addresses: the right password is still 429")
    func accountLimitIsNotEvicted() async throws {
        var limits = RateLimits.defaults
        limits.loginPerAddress = nil  // the attacker has addresses to spare; the account's limit is what is tested
        let clock = SteppedClock()  // a second passes: 1/90 of a try refills, only eviction could give the budget back
        try await Cloud.with(.sqlite, configuration: WebConfig.make(limits: limits), now: clock.now) { cloud in
            _ = try await Self.confirmedAccount(cloud, "ann@example.org")
            let attacker = Browser(cloud)
            for index in 1...10 {
                let wrong = try await attacker.post("/login", ["email": "ann@example.org", "password": "wrong guess number \(index)"])
                #expect(wrong.status == .unauthorized, "guess \(index): \(wrong.status)")
            }
            #expect(try await attacker.post("/login", ["email": "ann@example.org", "password": Self.password]).status == .tooManyRequests)
            // A second later (the victim's bucket is the least recently used, as in a real attack),
            // `/reset`, which costs no bcrypt, with fresh made-up addresses: each a new key of the log-in limit.
            clock.advance(.seconds(1))
            let csrf = try #require(Browser.csrf(in: try await attacker.get("/reset").text))
            for index in 0..<10_050 {
                let flood = try await attacker.post("/reset", ["email": "made-up-\(index)@example.net"], csrf: csrf)
                if flood.status != .ok { Issue.record("reset \(index): \(flood.status)"); break }
            }
            let after = try await attacker.post("/login", ["email": "ann@example.org", "password": Self.password])
            #expect(after.status == .tooManyRequests, "the account's budget was reset by other keys: \(after.status)")
            #expect(after.text.contains("too many log-in attempts for this account"))
        }
    }

    @Test("an account's limiter never drops a bucket in use, however many keys come; an address limiter drops the oldest")
    func tableOfAccountsKeepsBucketsInUse() {
        let limit = RateLimit(burst: 3, period: .seconds(900))
        var accounts = TokenBuckets<String>(limit: limit, maxKeys: 8, evictsInUse: false)
        var addresses = TokenBuckets<String>(limit: limit, maxKeys: 8)
        for _ in 0..<3 {
            _ = accounts.take("victim", now: .zero)
            _ = addresses.take("victim", now: .zero)
        }
        for index in 0..<1_000 {
            _ = accounts.take("other \(index)", now: .seconds(1))
            _ = addresses.take("other \(index)", now: .seconds(1))
        }
        #expect(accounts.take("victim", now: .seconds(1)) != .allowed)
        #expect(addresses.take("victim", now: .seconds(1)) == .allowed, "the address table does evict (and stays small)")
        #expect(addresses.count <= 8)
        // Full buckets (keys seen once and refilled) still go, so the table holds what is in use.
        var refilled = TokenBuckets<String>(limit: limit, maxKeys: 8, evictsInUse: false)
        for index in 0..<1_000 { _ = refilled.take("k\(index)", now: .seconds(Int64(index) * 1_000)) }
        #expect(refilled.count <= 16)
    }

    @Test("an IPv6 client is counted by its /64: 10 log-ins from 10 addresses of one /64, and the 11th is 429")
    func ipv6BySlash64() async throws {
        #expect(ClientAddress.rateKey("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(ClientAddress.rateKey("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64")
        #expect(ClientAddress.rateKey("2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(ClientAddress.rateKey("198.51.100.7") == "198.51.100.7")
        #expect(ClientAddress.rateKey("unknown") == "unknown")
        let configuration = WebConfig.make(proxies: ["127.0.0.1", "::1"])
        try await Cloud.with(.sqlite, configuration: configuration, testing: .live) { cloud in
            for index in 0..<11 { _ = try await Self.confirmedAccount(cloud, "runner\(index)@example.org") }
            for index in 0..<10 {
                let wrong = try await Browser(cloud, address: "2001:db8:1:2::\(index + 1)")
                    .post("/login", ["email": "runner\(index)@example.org", "password": "password guess 1"])
                #expect(wrong.status == .unauthorized, "try \(index): \(wrong.status)")
            }
            let limited = try await Browser(cloud, address: "2001:db8:1:2:abcd::99").post("/login", ["email": "runner10@example.org", "password": Self.password])
            #expect(limited.status == .tooManyRequests && limited.text.contains("for this address"), "\(limited.status)")
            // Another /64 is another client.
            let neighbour = try await Browser(cloud, address: "2001:db8:1:3::1").post("/login", ["email": "runner10@example.org", "password": Self.password])
            #expect(neighbour.status == .seeOther)
        }
    }

    // MARK: Reset links

    @Test("a reset ends every other reset link of the account: the older link is refused afterwards", arguments: Backend.allCases)
    func olderResetLinksDie(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let account = try await Self.confirmedAccount(cloud, "ann@example.org")
            let browser = Browser(cloud)
            #expect(try await browser.post("/reset", ["email": "ann@example.org"]).status == .ok)
            let older = try await cloud.mailedToken(to: "ann@example.org", path: "/reset/password")
            #expect(try await browser.post("/reset", ["email": "ann@example.org"]).status == .ok)
            let newer = try await cloud.mailedToken(to: "ann@example.org", path: "/reset/password")
            #expect(older != newer)
            let done = try await browser.post("/reset/password", ["token": newer, "password": "the first new passphrase"],
                                              formPage: "/reset/password?token=\(newer)")
            #expect(done.status == .ok && done.text.contains("Password changed"))
            let stale = try await browser.post("/reset/password", ["token": older, "password": "an attacker's passphrase"],
                                               formPage: "/reset/password?token=\(older)")
            #expect(stale.status == .badRequest && stale.text.contains("Link: this link is not valid"), "\(stale.status)")
            #expect(try await browser.post("/login", ["email": "ann@example.org", "password": "the first new passphrase"]).status == .seeOther)

            // The store's rule, whatever path changes the password: no token of the account outlives it.
            let mail = OutboxMail(to: "ann@example.org", payload: "{}")
            for hash in ["reset-1", "reset-2"] {
                try await cloud.store.accounts.addAccountToken(AccountToken(hash: hash, accountID: account.id, purpose: AccountToken.reset,
                                                                   expiresMs: Int64.max / 2), mail: mail)
            }
            try await cloud.store.accounts.setPassword(accountID: account.id, passwordHash: await Passwords.hash("another new passphrase", cost: AccountTests.cost))
            #expect(try await cloud.store.counts().accountTokens == 0)
            #expect(try await cloud.store.accounts.takeAccountToken(hash: "reset-1", purpose: AccountToken.reset, nowMs: 0) == nil)
        }
    }

    // MARK: Streams

    /// A position at the server's (stepped) time.
    static func position(at milliseconds: Int64) -> [String: Any] {
        ["time": WireTime.text(milliseconds: milliseconds), "lat": 45.4, "lon": 9.2, "accuracy_m": 6.0, "heart_rate": 150]
    }

    static func ended(_ reader: EventStreamReader, within seconds: Int64) async throws -> String {
        try await offPool { reader.read(until: .now + .seconds(seconds)) { $0.hasSuffix("\r\n0\r\n\r\n") } }
    }

    @Test("a dashboard's stream ends at log-out, and a position sent after it is never delivered", arguments: Backend.allCases)
    func streamEndsAtLogOut(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: MonitorTests.config(lifetime: .seconds(60)), wallClock: clock.now, testing: .live) { cloud in
            let pair = try await MonitorTests.pair(cloud)
            let stream = try await MonitorTests.stream(cloud, pair.monitor)
            #expect(try await pair.monitor.post("/logout", [:], formPage: "/account").status == .seeOther)
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(at: clock.now())).status == .ok)
            // The stream lives 60 s; it ends within a few heartbeats (0.4 s) of the log-out.
            let text = try await Self.ended(stream, within: 10)
            #expect(text.hasSuffix("\r\n0\r\n\r\n"), "the stream went on after log-out")
            #expect(MonitorTests.deviceEvents(text).isEmpty, "a position reached a logged-out dashboard")
        }
    }

    @Test("a dashboard's stream ends when its session expires, with no request to notice it", arguments: Backend.allCases)
    func streamEndsAtExpiry(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: MonitorTests.config(lifetime: .seconds(60)), wallClock: clock.now, testing: .live) { cloud in
            let pair = try await MonitorTests.pair(cloud)
            let stream = try await MonitorTests.stream(cloud, pair.monitor)
            // A position while the session lives comes through.
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(at: clock.now())).status == .ok)
            #expect(try await MonitorTests.events(stream, count: 1).count == 1)
            clock.advance(SessionSettings.defaults.idle + .seconds(1))
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(at: clock.now())).status == .ok)
            let text = try await Self.ended(stream, within: 10)
            #expect(text.hasSuffix("\r\n0\r\n\r\n"), "the stream went on after its session expired")
            #expect(MonitorTests.deviceEvents(text).count == 1, "a position reached a dashboard whose session had expired")
        }
    }

    // MARK: Addresses

    @Test("addresses are NFKC-normalised and lower-cased; control and format characters are refused, naming the field")
    func addressRules() throws {
        #expect(try EmailAddress.normalized(" Ann@Example.ORG ").get() == "ann@example.org")
        #expect(try EmailAddress.normalized("\u{FF41}\u{FF4E}\u{FF4E}@example.org").get() == "ann@example.org")  // full-width
        #expect(try EmailAddress.normalized("ann@ex\u{FF41}mple.org").get() == "ann@example.org")
        #expect(try EmailAddress.normalized("\u{212B}sa@example.org").get() == "\u{E5}sa@example.org")  // Ångström sign
        for bad in ["ann\u{202E}gro.elpmaxe@example.org", "ann\u{200B}@example.org", "ann\u{7F}@example.org", "ann\u{85}@example.org",
                    "ann\u{2066}@example.org", "ann\u{FEFF}@example.org", "ann@example.org\u{E000}", "ann\u{2028}x@example.org"] {
            guard case .failure(let error) = EmailAddress.normalized(bad) else {
                Issue.record("\(bad.unicodeScalars.map { String($0.value, radix: 16) }) accepted")
                continue
            }
            #expect(error.field == "email" && error.message.hasPrefix("email "), "\(error.message)")
        }
        #expect(EmailAddress.migrated("ann\u{200B}@example.org") == "ann@example.org")
        #expect(EmailAddress.migrated("\u{FF41}nn@example.org") == "ann@example.org")
        #expect(EmailAddress.migrated("no address") == nil)
    }

    @Test("one account per normalised address: a full-width look-alike signs up nothing and logs in to the same account; RLO and ZWSP are 400",
          arguments: Backend.allCases)
    func oneAccountPerNormalisedAddress(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            try await Browser(cloud).signUpAndLogIn("ann@example.org")
            let lookalike = try await Browser(cloud).post("/signup", ["email": "\u{FF41}nn@Example.org", "password": Self.password,
                                                                      "display_name": "Not Ann"])
            #expect(lookalike.status == .ok && lookalike.text.contains("ann@example.org"))
            #expect(try await cloud.store.accounts.accounts().map(\.email) == ["ann@example.org"])
            let login = try await Browser(cloud).post("/login", ["email": "\u{FF41}nn@example.org", "password": Self.password])
            #expect(login.status == .seeOther)
            for bad in ["ann\u{200B}@example.org", "ann@exa\u{202E}mple.org", "ann\u{7F}@example.org"] {
                let refused = try await Browser(cloud).post("/signup", ["email": bad, "password": Self.password])
                #expect(refused.status == .badRequest && refused.text.contains("it contains an invisible or control character"), "\(refused.text)")
            }
            #expect(try await cloud.store.counts().accounts == 1)
            #expect(try await cloud.store.outbox.outbox().allSatisfy { $0.target.unicodeScalars.allSatisfy { !EmailAddress.isInvisible($0) } })
        }
    }

    @Test("accounts stored before normalisation are found by the normalised address; a look-alike of another keeps its row",
          arguments: Backend.allCases)
    func existingRowsAreNormalised(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let hash = await Passwords.hash(Self.password, cost: AccountTests.cost)
            // As the old rules stored them: lower-cased only.
            for (id, email) in [("1", "\u{FF42}ob@example.org"), ("2", "eve\u{200B}@example.org"), ("3", "carl@example.org"),
                                ("4", "\u{FF43}arl@example.org")] {
                try await cloud.store.accounts.addAccount(Account(id: id, email: email, confirmed: true, displayName: "Old \(id)", timezone: "UTC",
                                                         createdAt: "2026-01-01T00:00:00.000Z"), passwordHash: hash)
            }
            // Those rows were stored by pacer-cloud 8, before its first named migration: the
            // database as it left it (version 8, no migration recorded), as the upgrade finds it.
            try await cloud.store.database.transaction { db in
                try await db.raw("DELETE FROM pacer_migration").run()
                try await db.raw("UPDATE schema_version SET version = 8").run()
                // What the migrations after 0001 added, a version-8 database has not.
                try await db.raw("ALTER TABLE run DROP COLUMN complete").run()
                try await db.raw("DROP INDEX run_by_share").run()
                try await db.raw("DROP INDEX run_by_identity").run()
                for column in ["sport", "title", "notes", "visibility", "share_sha256", "doubt", "identity"] {
                    try await db.raw("ALTER TABLE run DROP COLUMN \(unsafeRaw: column)").run()
                }
                try await db.raw("ALTER TABLE run_figures DROP COLUMN sport").run()
                try await db.raw("DROP TABLE shoe").run()
                try await db.raw("ALTER TABLE run DROP COLUMN shoe_id").run()
                try await db.raw("ALTER TABLE account DROP COLUMN units").run()
                for table in ["race", "race_organiser", "race_entry", "race_position", "race_observer"] {
                    try await db.raw("DROP TABLE \(unsafeRaw: table)").run()
                }
            }
            try await cloud.store.migrate()  // what the next start does
            try await cloud.store.migrate()  // and the one after: nothing more changes
            #expect(try await cloud.store.accounts.account(email: "bob@example.org")?.account.id == "1")
            #expect(try await cloud.store.accounts.account(email: "eve@example.org")?.account.id == "2")
            #expect(try await cloud.store.accounts.account(email: "carl@example.org")?.account.id == "3")
            #expect(try await cloud.store.accounts.account(id: "4")?.email == "\u{FF43}arl@example.org", "carl's look-alike is not merged into carl")
            // No second account for a normalised address that has one.
            _ = try await Browser(cloud).post("/signup", ["email": "bob@example.org", "password": Self.password])
            #expect(try await cloud.store.counts().accounts == 4)
            #expect(try await Browser(cloud).post("/login", ["email": "\u{FF42}ob@example.org", "password": Self.password]).status == .seeOther)
        }
    }

    // MARK: Inviter names

    @Test("a display name with a control, format or bidirectional character is refused at sign-up, naming the field")
    func displayNameRules() async throws {
        try await Cloud.with(.sqlite, configuration: WebConfig.make()) { cloud in
            for bad in ["Ann\u{202E}moc.live", "Ann\u{200B}", "Ann\u{7F}", "Ann\u{2067}x", "Ann\u{0}", String(repeating: "a", count: 65)] {
                let refused = try await Browser(cloud).post("/signup", ["email": "ann@example.org", "password": Self.password, "display_name": bad])
                #expect(refused.status == .badRequest && refused.text.contains("display_name"), "\(bad.debugDescription): \(refused.status)")
            }
            #expect(try await cloud.store.counts().accounts == 0)
        }
        #expect(DisplayName.plain("Visit evil.example.com now") == "Visit evil[.]example[.]com now")
        #expect(DisplayName.plain("https://x.io/a?b") == "https[:]//x[.]io/a?b")
        #expect(DisplayName.plain("J. R. Smith") == "J. R. Smith")
        #expect(DisplayName.plain("Ann\u{202E}moc\u{3002}live") == "Annmoc[.]live")
        #expect(DisplayName.plain("\u{200B}\u{202E}") == "A Pacer user")
    }

    @Test("the invitation e-mail names the inviter only in its body, as quoted plain text: no link, no bidirectional control",
          arguments: Backend.allCases)
    func invitationIsPlainText(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            // A name allowed at sign-up that reads like a link.
            let phisher = Browser(cloud)
            let created = try await phisher.post("/signup", ["email": "mallory@example.org", "password": Self.password,
                                                             "display_name": "Your bank: https://evil.example.com/login"])
            #expect(created.status == .ok)
            let confirm = try await cloud.mailedToken(to: "mallory@example.org", path: "/confirm")
            #expect(try await phisher.post("/confirm", ["token": confirm], formPage: "/confirm?token=\(confirm)").status == .ok)
            #expect(try await phisher.post("/login", ["email": "mallory@example.org", "password": Self.password]).status == .seeOther)
            #expect(try await phisher.post("/monitoring/invite", ["email": "carl@example.org"], formPage: "/monitoring").status == .ok)
            // One stored before names were checked, with a right-to-left override.
            let hash = await Passwords.hash(Self.password, cost: AccountTests.cost)
            try await cloud.store.accounts.addAccount(Account(id: "legacy", email: "old@example.org", confirmed: true, displayName: "Ann\u{202E}moc.live",
                                                     timezone: "UTC", createdAt: "2026-01-01T00:00:00.000Z"), passwordHash: hash)
            let legacy = Browser(cloud)
            #expect(try await legacy.post("/login", ["email": "old@example.org", "password": Self.password]).status == .seeOther)
            #expect(try await legacy.post("/monitoring/invite", ["email": "dora@example.org"], formPage: "/monitoring").status == .ok)

            let toCarl = try #require(try await Self.mails(cloud, to: "carl@example.org").first)
            #expect(!toCarl.subject.contains("evil") && !toCarl.subject.contains("bank") && !toCarl.subject.contains("mallory"), "\(toCarl.subject)")
            #expect(toCarl.text.contains(#""Your bank: https[:]//evil[.]example[.]com/login""#), "\(toCarl.text)")
            #expect(!toCarl.text.contains("evil.example.com") && !toCarl.text.contains("https://evil"))
            #expect(toCarl.text.contains("/monitoring/accept?token="), "the server's own link is still there")
            let toDora = try #require(try await Self.mails(cloud, to: "dora@example.org").first)
            for part in [toDora.subject, toDora.text] {
                #expect(!part.unicodeScalars.contains { $0.properties.generalCategory == .format || $0.properties.generalCategory == .control && $0 != "\n" })
            }
            #expect(toDora.text.contains(#""Annmoc[.]live""#), "\(toDora.text)")
        }
    }

    // MARK: Device links

    @Test("POST /v1/link answers unknown, used and expired codes alike, and never names another account's device",
          arguments: Backend.allCases)
    func neutralLinkAnswers(backend: Backend) async throws {
        var limits = RateLimits.defaults
        limits.linkPerAddress = nil
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(limits: limits), wallClock: clock.now) { cloud in
            let ann = Browser(cloud)
            try await ann.signUpAndLogIn("ann@example.org")
            let bob = Browser(cloud)
            try await bob.signUpAndLogIn("bob@example.org")
            let bobCode = try await DeviceLinkTests.newCode(bob)
            #expect(try await DeviceLinkTests.link(cloud, bobCode, name: "bobs-secret-watch").0.status == .created)

            let (unknown, _) = try await DeviceLinkTests.link(cloud, "2345-6789", name: "x1")
            let (used, _) = try await DeviceLinkTests.link(cloud, bobCode, name: "x2")
            let late = try await DeviceLinkTests.newCode(ann)
            clock.advance(.seconds(601))
            let (expired, _) = try await DeviceLinkTests.link(cloud, late, name: "x3")
            for response in [used, expired] {
                #expect(response.status == unknown.status && response.text == unknown.text, "\(response.status) \(response.text)")
            }
            #expect(unknown.status == .notFound)

            // Bob's device's name, asked for with Ann's code: refused, saying nothing of Bob or his device.
            let code = try await DeviceLinkTests.newCode(ann)
            let (taken, body) = try await DeviceLinkTests.link(cloud, code, name: "bobs-secret-watch")
            #expect(taken.status == .conflict && DeviceLinkTests.errorCode(body) == "name_unavailable", "\(taken.text)")
            for secret in ["bobs-secret-watch", "another account", "bob", "Runner"] {
                #expect(!taken.text.contains(secret), "\(secret) in \(taken.text)")
            }
            #expect(try await DeviceLinkTests.link(cloud, code, name: "ann-watch").0.status == .created, "the code was not used up")
        }
    }
}
