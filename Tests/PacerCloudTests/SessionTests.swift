import CloudModel
import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PacerCloud
import PacerTestSupport
import Testing

@Suite("pacer-cloud: sign-up, log-in and sessions", .timeLimit(.minutes(10)))
struct SessionTests {
    static let password = AccountTests.password

    @Test("sign up, confirm by the e-mailed link, log in, see the account, log out", arguments: Backend.allCases)
    func signUpFlow(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let signup = try await browser.get("/signup")
            #expect(signup.status == .ok && signup.text.contains(#"<form method="post" action="/signup">"#))
            #expect(!signup.text.contains("<script"))
            #expect(signup.headers[.contentSecurityPolicy]?.contains("form-action 'self'") == true)
            let created = try await browser.post("/signup", ["email": "Ann@Example.org", "password": Self.password, "display_name": "Ann"])
            #expect(created.status == .ok && created.text.contains("We sent a link to ann@example.org"), "\(created.text)")
            // Not confirmed yet: log-in is refused, naming the address.
            let early = try await browser.post("/login", ["email": "ann@example.org", "password": Self.password])
            #expect(early.status == .forbidden && early.text.contains("E-mail: confirm this address first"))
            let token = try await cloud.mailedToken(to: "ann@example.org", path: "/confirm")
            // The link's GET only shows the button (a mail scanner following it confirms nothing).
            let page = try await browser.get("/confirm?token=\(token)")
            #expect(page.status == .ok && page.text.contains(#"name="token" value="\#(token)""#))
            #expect(try await cloud.store.accounts.account(email: "ann@example.org")?.account.confirmed == false)
            #expect(try await browser.post("/confirm", ["token": token], formPage: "/confirm?token=\(token)").status == .ok)
            #expect(try await cloud.store.accounts.account(email: "ann@example.org")?.account.confirmed == true)
            // Single use.
            let again = try await browser.post("/confirm", ["token": token], formPage: "/confirm?token=\(token)")
            #expect(again.status == .badRequest && again.text.contains("Link: this link is not valid"))

            let wrong = try await browser.post("/login", ["email": "ann@example.org", "password": Self.password + "x"])
            #expect(wrong.status == .unauthorized && wrong.text.contains("the address or the password is wrong"))
            #expect(!wrong.text.contains(Self.password))
            let login = try await browser.post("/login", ["email": "ann@example.org", "password": Self.password])
            #expect(login.status == .seeOther && login.headers[.location] == "/account")
            let account = try await browser.get("/account")
            #expect(account.status == .ok && account.text.contains("ann@example.org") && account.text.contains("<h1>Ann</h1>"))

            #expect(try await browser.post("/logout", [:], formPage: "/account").status == .seeOther)
            let after = try await browser.get("/account")
            #expect(after.status == .unauthorized && after.text.contains(#"<a href="/login">Log in</a>"#))
            #expect(try await cloud.store.counts().sessions == 0)
        }
    }

    @Test("cookies are HttpOnly and SameSite=Lax, Secure only with an https public URL")
    func cookieAttributes() async throws {
        for publicURL in [nil, "https://cloud.example.org"] {
            try await Cloud.with(.sqlite, configuration: WebConfig.make(publicURL: publicURL)) { cloud in
                let browser = Browser(cloud)
                try await browser.signUpAndLogIn("ann@example.org")
                let lines = browser.receivedSetCookies
                let session = try #require(lines.last { $0.hasPrefix("pacer_session=") })
                #expect(lines.contains { $0.hasPrefix("pacer_form=") })
                for line in lines {
                    #expect(line.contains("; HttpOnly") && line.contains("; SameSite=Lax"), "\(line)")
                    #expect(line.contains("; Secure") == (publicURL != nil), "\(line)")
                }
                #expect(session.contains("; Max-Age=43200"))
            }
        }
    }

    @Test("the session id is new at every log-in: a planted or earlier id signs nobody in", arguments: Backend.allCases)
    func rotatedAtLogIn(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            // An attacker's chosen id, planted before log-in (session fixation).
            let planted = Tokens.random()
            browser.setCookie("pacer_session", planted)
            try await browser.signUpAndLogIn("ann@example.org")
            let first = try #require(browser.cookies["pacer_session"])
            #expect(first != planted)
            #expect(try await cloud.store.accounts.session(idHash: Tokens.hash(first)) != nil)
            #expect(try await browser.post("/login", ["email": "ann@example.org", "password": Self.password]).status == .seeOther)
            let second = try #require(browser.cookies["pacer_session"])
            #expect(second != first)
            // The earlier session ended at the new log-in.
            let old = Browser(cloud)
            old.setCookie("pacer_session", first)
            #expect(try await old.get("/account").status == .unauthorized)
            let fixated = Browser(cloud)
            fixated.setCookie("pacer_session", planted)
            #expect(try await fixated.get("/account").status == .unauthorized)
            // Only the hash is stored.
            #expect(try await cloud.store.accounts.session(idHash: second) == nil)
        }
    }

    @Test("a session ends after its idle time, and after its absolute time however busy", arguments: Backend.allCases)
    func expiry(backend: Backend) async throws {
        let clock = SteppedWallClock()
        let sessions = SessionSettings(idle: .seconds(600), absolute: .seconds(3600))
        try await Cloud.with(backend, configuration: WebConfig.make(sessions: sessions), wallClock: clock.now) { cloud in
            let idle = Browser(cloud)
            try await idle.signUpAndLogIn("ann@example.org")
            clock.advance(.seconds(599))
            #expect(try await idle.get("/account").status == .ok)
            clock.advance(.seconds(601))
            #expect(try await idle.get("/account").status == .unauthorized)
            // A form posted on an ended session is 401, not done.
            let logout = try await idle.post("/logout", [:], csrf: "anything")
            #expect(logout.status == .unauthorized)

            let busy = Browser(cloud)
            #expect(try await busy.post("/login", ["email": "ann@example.org", "password": Self.password]).status == .seeOther)
            for _ in 0..<7 {
                clock.advance(.seconds(500))
                #expect(try await busy.get("/account").status == .ok)
            }
            clock.advance(.seconds(200))  // 3,700 s after log-in, 200 s after the last request
            #expect(try await busy.get("/account").status == .unauthorized)
            // An ended session nobody comes back to is deleted at the next log-in.
            let forgotten = Browser(cloud)
            #expect(try await forgotten.post("/login", ["email": "ann@example.org", "password": Self.password]).status == .seeOther)
            clock.advance(.seconds(601))
            #expect(try await cloud.store.counts().sessions == 1)
            #expect(try await Browser(cloud).post("/login", ["email": "ann@example.org", "password": Self.password]).status == .seeOther)
            #expect(try await cloud.store.counts().sessions == 1)
            #expect(try await forgotten.get("/account").status == .unauthorized)
        }
    }

    @Test("two instances on one PostgreSQL share sessions: log in on one, use and end it on the other")
    func sharedAcrossInstances() async throws {
        let url = try await Cloud.freshPostgresDatabase()
        let configuration = WebConfig.make()
        let first = try CloudApplication.make(store: try await CloudStore.open(DatabaseURL(url)), configuration: configuration)
        let second = try CloudApplication.make(store: try await CloudStore.open(DatabaseURL(url)), configuration: configuration)
        try await first.test(.router) { one async throws -> Void in
            try await second.test(.router) { two async throws -> Void in
                let store = try await CloudStore.open(DatabaseURL(url))
                let onFirst = Browser(Cloud(client: one, store: store))
                try await store.withRunning {
                    try await onFirst.signUpAndLogIn("ann@example.org")
                }
                let onSecond = Browser(Cloud(client: two, store: store))
                onSecond.setCookie("pacer_session", try #require(onFirst.cookies["pacer_session"]))
                let page = try await onSecond.get("/account")
                #expect(page.status == .ok && page.text.contains("ann@example.org"))
                #expect(try await onSecond.post("/logout", [:], formPage: "/account").status == .seeOther)
                #expect(try await onFirst.get("/account").status == .unauthorized)
            }
        }
    }

    @Test("every form's POST needs its CSRF token: none, a wrong one, or the form cookie's once signed in are 403",
          arguments: Backend.allCases)
    func csrf(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let stranger = Browser(cloud)
            _ = try await stranger.get("/signup")
            for token in ["", "wrong-token-wrong-token"] {
                let refused = try await stranger.post("/signup", ["email": "ann@example.org", "password": Self.password, "csrf": token])
                #expect(refused.status == .forbidden && refused.text.contains("csrf field does not match"), "\(refused.text)")
            }
            // A page of another site cannot read the cookie, so it cannot know the token either.
            let noCookie = Browser(cloud)
            let forged = try await noCookie.post("/login", ["email": "ann@example.org", "password": Self.password, "csrf": "x"])
            #expect(forged.status == .forbidden)
            #expect(try await cloud.store.accounts.accounts().isEmpty)

            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            let formToken = try #require(browser.cookies["pacer_form"])
            let withFormToken = try await browser.post("/logout", [:], csrf: formToken)
            #expect(withFormToken.status == .forbidden)
            #expect(try await browser.get("/account").status == .ok)
            let deletion = try await browser.post("/account/delete", ["password": Self.password], csrf: "wrong")
            #expect(deletion.status == .forbidden)
            #expect(try await cloud.store.accounts.accounts().count == 1)
        }
    }

    @Test("10 wrong passwords for one account from 10 addresses: the 11th try is 429, even with the right password")
    func logInLimitPerAccount() async throws {
        let configuration = WebConfig.make(proxies: ["127.0.0.1", "::1"])
        try await Cloud.with(.sqlite, configuration: configuration, testing: .live) { cloud in
            _ = try await Accounts.create(store: cloud.store, email: "ann@example.org", password: Self.password, displayName: nil,
                                          confirmed: true, cost: AccountTests.cost)
            for index in 1...10 {
                let wrong = try await Browser(cloud, address: "198.51.100.\(index)").post("/login", ["email": "ann@example.org", "password": "wrong password \(index)"])
                #expect(wrong.status == .unauthorized, "try \(index): \(wrong.status)")
            }
            let eleventh = Browser(cloud, address: "203.0.113.77")
            let limited = try await eleventh.post("/login", ["email": "Ann@example.org", "password": Self.password])
            #expect(limited.status == .tooManyRequests, "\(limited.status)")
            #expect(limited.text.contains("too many log-in attempts for this account"))
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(eleventh.cookies["pacer_session"] == nil)
            // Another account is not held up by it.
            try await Browser(cloud, address: "203.0.113.78").signUpAndLogIn("bob@example.org")
        }
    }

    @Test("10 wrong passwords from one address across 10 accounts: the 11th try is 429")
    func logInLimitPerAddress() async throws {
        let configuration = WebConfig.make(proxies: ["127.0.0.1", "::1"])
        try await Cloud.with(.sqlite, configuration: configuration, testing: .live) { cloud in
            for index in 0..<11 {
                _ = try await Accounts.create(store: cloud.store, email: "runner\(index)@example.org", password: Self.password,
                                              displayName: nil, confirmed: true, cost: AccountTests.cost)
            }
            let attacker = Browser(cloud, address: "198.51.100.9")
            for index in 0..<10 {
                let wrong = try await attacker.post("/login", ["email": "runner\(index)@example.org", "password": "password guess 1"])
                #expect(wrong.status == .unauthorized, "try \(index): \(wrong.status)")
            }
            let limited = try await attacker.post("/login", ["email": "runner10@example.org", "password": Self.password])
            #expect(limited.status == .tooManyRequests && limited.text.contains("for this address"), "\(limited.status)")
            // The accounts themselves are fine from elsewhere.
            let owner = try await Browser(cloud, address: "203.0.113.5").post("/login", ["email": "runner10@example.org", "password": Self.password])
            #expect(owner.status == .seeOther)
        }
    }

    @Test("sign-ups cost a bcrypt hash and an e-mail: 10 from one address, and the 11th is 429 with nothing created")
    func signUpLimitPerAddress() async throws {
        let configuration = WebConfig.make(proxies: ["127.0.0.1", "::1"])
        // The limiter's clock stands still: on a loaded machine ten bcrypt hashes took long
        // enough for the bucket to refill, and the 11th sign-up went through.
        let clock = SteppedClock()
        try await Cloud.with(.sqlite, configuration: configuration, now: clock.now, testing: .live) { cloud in
            let flooder = Browser(cloud, address: "198.51.100.44")
            for index in 0..<10 {
                let made = try await flooder.post("/signup", ["email": "new\(index)@example.org", "password": Self.password])
                #expect(made.status == .ok, "sign-up \(index): \(made.status)")
            }
            let limited = try await flooder.post("/signup", ["email": "new10@example.org", "password": Self.password])
            #expect(limited.status == .tooManyRequests && limited.text.contains("too many sign-up attempts for this address"), "\(limited.status)")
            #expect(try await cloud.store.accounts.account(email: "new10@example.org") == nil)
            // Someone else signs up as usual.
            try await Browser(cloud, address: "203.0.113.6").signUpAndLogIn("eve@example.org")
        }
    }
}

@Suite("pacer-cloud: password reset and account deletion", .timeLimit(.minutes(10)))
struct ResetAndDeletionTests {
    static let password = AccountTests.password

    @Test("reset by e-mail: the link works once and ends every session; an unknown address gets the same answer",
          arguments: Backend.allCases)
    func reset(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let signedIn = Browser(cloud)
            try await signedIn.signUpAndLogIn("ann@example.org")
            let browser = Browser(cloud)
            let known = try await browser.post("/reset", ["email": "ann@example.org"])
            let unknown = try await browser.post("/reset", ["email": "nobody@example.org"])
            #expect(known.status == .ok && unknown.status == .ok)
            #expect(known.text.replacingOccurrences(of: "ann@", with: "") == unknown.text.replacingOccurrences(of: "nobody@", with: ""))
            let token = try await cloud.mailedToken(to: "ann@example.org", path: "/reset/password")
            // Stored hashed only.
            #expect(try await cloud.store.accounts.takeAccountToken(hash: token, purpose: AccountToken.reset, nowMs: clock.now()) == nil)

            let form = "/reset/password?token=\(token)"
            let weak = try await browser.post("/reset/password", ["token": token, "password": "password1234"], formPage: form)
            #expect(weak.status == .badRequest && weak.text.contains("password is one of the most common"))
            let newPassword = "a brand new passphrase"
            let done = try await browser.post("/reset/password", ["token": token, "password": newPassword], formPage: form)
            #expect(done.status == .ok && done.text.contains("Password changed"), "\(done.text)")
            #expect(try await signedIn.get("/account").status == .unauthorized)
            let reused = try await browser.post("/reset/password", ["token": token, "password": "yet another passphrase"], formPage: form)
            #expect(reused.status == .badRequest && reused.text.contains("Link: this link is not valid"))
            #expect(try await browser.post("/login", ["email": "ann@example.org", "password": Self.password]).status == .unauthorized)
            #expect(try await browser.post("/login", ["email": "ann@example.org", "password": newPassword]).status == .seeOther)

            // A link older than its hour is refused.
            _ = try await Browser(cloud).post("/reset", ["email": "ann@example.org"])
            let late = try await cloud.mailedToken(to: "ann@example.org", path: "/reset/password")
            #expect(late != token)
            clock.advance(.seconds(3601))
            let expired = try await browser.post("/reset/password", ["token": late, "password": "late passphrase here"],
                                                 formPage: "/reset/password?token=\(late)")
            #expect(expired.status == .badRequest)
        }
    }

    @Test("links nobody followed in time are purged, and an account's sent e-mail keeps no link", arguments: Backend.allCases)
    func linksDoNotOutliveTheirUse(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let account = try await Accounts.create(store: cloud.store, email: "ann@example.org", password: Self.password, displayName: nil,
                                                    cost: AccountTests.cost)
            let mail = OutboxMail(to: "ann@example.org", payload: #"{"text":"https://x/confirm?token=secret"}"#)
            for (hash, expiresMs) in [("early", Int64(1_000)), ("late", Int64(10_000))] {
                try await cloud.store.accounts.addAccountToken(AccountToken(hash: hash, accountID: account.id, purpose: AccountToken.confirm,
                                                                   expiresMs: expiresMs), mail: mail)
            }
            #expect(try await cloud.store.counts().accountTokens == 2)
            // Any link followed later purges the expired ones; the live one stays usable.
            #expect(try await cloud.store.accounts.takeAccountToken(hash: "forged", purpose: AccountToken.confirm, nowMs: 2_000) == nil)
            #expect(try await cloud.store.counts().accountTokens == 1)
            #expect(try await cloud.store.accounts.takeAccountToken(hash: "late", purpose: AccountToken.confirm, nowMs: 2_000) == account.id)

            let queued = try await cloud.store.outbox.outbox()
            #expect(queued.count == 2 && queued.allSatisfy { $0.payload.contains("token=secret") })
            try await cloud.store.outbox.outboxDelivered(id: queued[0].id, nowMs: 3_000)
            let after = try await cloud.store.outbox.outbox()
            #expect(after.first { $0.id == queued[0].id }?.payload == "")
            #expect(after.first { $0.id == queued[1].id }?.payload.contains("token=secret") == true)
        }
    }

    @Test("deleting the account needs its password, then removes every device, run and alert of it", arguments: Backend.allCases)
    func deletion(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let ann = Browser(cloud)
            try await ann.signUpAndLogIn("ann@example.org")
            let bob = Browser(cloud)
            try await bob.signUpAndLogIn("bob@example.org")
            let annToken = try await cloud.addDevice("ann-pacer")
            let bobToken = try await cloud.addDevice("bob-pacer")
            let annID = try #require(try await cloud.store.accounts.account(email: "ann@example.org")?.account.id)
            let bobID = try #require(try await cloud.store.accounts.account(email: "bob@example.org")?.account.id)
            #expect(try await cloud.store.devices.assignDevice(name: "ann-pacer", accountID: annID))
            #expect(try await cloud.store.devices.assignDevice(name: "bob-pacer", accountID: bobID))
            for token in [annToken, bobToken] {
                #expect(try await cloud.putChunk(Track.runID(), 0, Track.chunk(Track.samples(3)), token: token).status == .created)
                #expect(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0)).status == .created)
            }
            let page = try await ann.get("/account")
            #expect(page.text.contains("ann-pacer") && !page.text.contains("bob-pacer"))

            let wrong = try await ann.post("/account/delete", ["password": "not my password at all"])
            #expect(wrong.status == .unauthorized && wrong.text.contains("Password: this is not your password"))
            // The form shown again carries the session's CSRF token, so sending it again works
            // (the refusal was once rendered with the pre-log-in form token, and refused as forged).
            let again = try await ann.post("/account/delete", ["password": "still not my password"], csrf: Browser.csrf(in: wrong.text))
            #expect(again.status == .unauthorized && again.text.contains("Password: this is not your password"))
            // Bob's session with Ann's password deletes nothing: the route acts on the caller's account only.
            let bobTries = try await bob.post("/account/delete", ["password": "not bob's password"])
            #expect(bobTries.status == .unauthorized)
            #expect(try await cloud.store.accounts.accounts().count == 2)

            let deleted = try await ann.post("/account/delete", ["password": Self.password])
            #expect(deleted.status == .ok && deleted.text.contains("Account deleted"))
            #expect(try await cloud.store.accounts.account(email: "ann@example.org") == nil)
            #expect(try await cloud.request(.get, "/v1/runs", token: annToken).status == .unauthorized)
            #expect(try await ann.get("/account").status == .unauthorized)
            let left = try await cloud.store.counts()
            #expect(left.accounts == 1 && left.devices == 1 && left.chunks == 1 && left.alerts == 1 && left.sessions == 1)
            #expect(try await bob.get("/account").status == .ok)
        }
    }

    @Test("no password, token, session id or link token reaches the logs, whatever fails")
    func noSecretsInLogs() async throws {
        let log = LogCapture()
        try await Cloud.with(.sqlite, configuration: WebConfig.make(), logger: Logger(label: "pacer-cloud") { _ in CapturingLogHandler(sink: log) }) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            _ = try await browser.post("/login", ["email": "ann@example.org", "password": "wrong password here"])
            _ = try await browser.post("/reset", ["email": "ann@example.org"])
            let reset = try await cloud.mailedToken(to: "ann@example.org", path: "/reset/password")
            _ = try await browser.get("/reset/password?token=\(reset)")
            _ = try await browser.post("/reset/password", ["token": reset, "password": "short"], formPage: "/reset/password?token=\(reset)")
            _ = try await browser.post("/account/delete", ["password": "guessed password 1"])
            let confirm = try await cloud.mailedToken(to: "ann@example.org", path: "/confirm")
            let secrets = [Self.password, "wrong password here", "guessed password 1", reset, confirm,
                           try #require(browser.cookies["pacer_session"]), try #require(browser.cookies["pacer_form"])]
            let lines = log.lines
            #expect(!lines.isEmpty)
            for secret in secrets {
                #expect(!lines.contains { $0.contains(secret) }, "\(secret) in \(lines.filter { $0.contains(secret) })")
            }
        }
    }
}
