import CloudModel
import Foundation
import Gzip
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PacerContract
@testable import PacerCloud
import Testing

/// Issue 33, "one app": one layout on every page, error pages included; `/`; HTML errors for
/// browsers and JSON for the API; the favicon; a log-in that brings the runner back with what
/// they had typed; sessions judged by their real idle time.
@Suite("pacer-cloud: one app (layout, nav, errors, home, log-in again, idle time)", .timeLimit(.minutes(10)))
struct AppLayoutTests {
    /// A request as a browser navigating sends it (Accept: text/html), with the browser's cookies.
    static func page(_ browser: Browser, _ uri: String, method: HTTPRequest.Method = .get, accept: String = "text/html,*/*;q=0.8") async throws
        -> TestResponse {
        var headers: HTTPFields = [.accept: accept]
        if !browser.cookieHeader.isEmpty { headers[.cookie] = browser.cookieHeader }
        return try await browser.cloud.client.execute(uri: uri, method: method, headers: headers, body: nil)
    }

    /// The labels of the nav's entries marked as the current page.
    static func currentEntries(_ html: String) -> [String] {
        html.components(separatedBy: #"aria-current="page">"#).dropFirst().map { String($0.prefix(while: { $0 != "<" })) }
    }

    @Test("every signed-in page has the nav with Devices, Import and Monitoring, and marks its own section", arguments: Backend.allCases)
    func navOnEveryPage(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            let pages = ["/runs": "Runs", "/stats": "Statistics", "/plan": "Plan", "/plan/new": "Plan", "/heart": "Health",
                         "/devices": "Devices", "/import": "Import", "/monitoring": "Monitoring", "/watch": "Watch",
                         "/account": "Account", "/account/delete": "Account"]
            for (path, section) in pages {
                let response = try await browser.get(path)
                #expect(response.status == .ok, "\(path): \(response.status)")
                let html = response.text
                for href in ["/runs", "/devices", "/import", "/monitoring", "/account"] {
                    #expect(html.contains(#"<a href="\#(href)""#), "\(path) lacks \(href) in its nav")
                }
                #expect(Self.currentEntries(html) == [section], "\(path): \(Self.currentEntries(html))")
                #expect(html.contains(#"<link rel="icon" href="/assets/pacer/icon.svg?v="#), "\(path)")
                #expect(response.headers[.contentSecurityPolicy]?.contains("img-src 'self'") == true, "\(path)")
            }
            // Signed out, the same frame offers the log-in and sign-up, marking the one shown.
            let login = try await Browser(cloud).get("/login")
            #expect(Self.currentEntries(login.text) == ["Log in"])
            #expect(!login.text.contains(#"href="/runs""#))
        }
    }

    @Test("the favicon is served as SVG and cached like the other assets")
    func favicon() async throws {
        try await Cloud.with(.sqlite, configuration: WebConfig.make()) { cloud in
            let icon = try await Browser(cloud).get("/assets/pacer/icon.svg")
            #expect(icon.status == .ok && icon.headers[.contentType] == "image/svg+xml")
            #expect(icon.text.hasPrefix("<svg") && icon.headers[.eTag] != nil)
        }
    }

    @Test("/ leads to the runs when signed in and to the log-in page when not", arguments: Backend.allCases)
    func home(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let out = try await browser.get("/")
            #expect(out.status == .seeOther && out.headers[.location] == "/login")
            try await browser.signUpAndLogIn("ann@example.org")
            let signedIn = try await browser.get("/")
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/runs")
        }
    }

    @Test("unknown URLs and errors: an HTML page in the layout for browsers, the API's JSON for /v1 and JSON clients", arguments: Backend.allCases)
    func htmlAndJSONErrors(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let signedOut = try await Self.page(browser, "/no/such/page")
            #expect(signedOut.status == .notFound)
            #expect(signedOut.headers[.contentType] == "text/html; charset=utf-8")
            #expect(signedOut.text.contains("<h1>No such page</h1>") && signedOut.text.contains("There is no page at /no/such/page."))
            #expect(signedOut.text.contains(#"<a href="/">Back to Pacer</a>"#) && signedOut.text.contains(#"<a href="/login">Log in</a>"#))
            #expect(signedOut.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)

            try await browser.signUpAndLogIn("ann@example.org")
            let signedIn = try await Self.page(browser, "/runs/x/y/z")
            #expect(signedIn.status == .notFound && signedIn.text.contains(#"<a href="/devices">Devices</a>"#))
            #expect(Self.currentEntries(signedIn.text) == ["Runs"])
            // Escaped, never echoed as markup.
            let hostile = try await Self.page(browser, "/%3Cscript%3Ealert(1)%3C/script%3E")
            #expect(hostile.status == .notFound && !hostile.text.contains("<script>alert"))

            // A known path with another method: 405 with its Allow, as a page too.
            let wrongMethod = try await Self.page(browser, "/signup", method: .delete)
            #expect(wrongMethod.status == .methodNotAllowed && wrongMethod.headers[.allow] == "GET, POST")
            #expect(wrongMethod.headers[.contentType] == "text/html; charset=utf-8")

            // The API keeps its JSON, whatever the Accept, and so does any client not asking for HTML.
            for (uri, accept) in [("/v1/nothing", "text/html"), ("/no/such/page", "application/json"), ("/no/such/page", "*/*")] {
                let json = try await Self.page(browser, uri, accept: accept)
                #expect(json.status == .notFound && json.headers[.contentType] == "application/json", "\(uri) \(accept)")
                #expect(json.text.hasPrefix(#"{"error":{"code":"not_found","message":"404 Not Found: GET \#(uri)"}}"#), "\(json.text)")
            }
            let api = try await Self.page(browser, "/v1/runs", accept: "text/html")
            #expect(api.status == .unauthorized && api.headers[.contentType] == "application/json")
        }
    }

    @Test("a page asked for without a session is the log-in form, which leads back to it; a foreign next is ignored", arguments: Backend.allCases)
    func logInLeadsBack(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            try await browser.post("/logout", [:], formPage: "/account")
            let asked = try await browser.get("/stats?x=1")
            #expect(asked.status == .unauthorized && asked.text.contains(#"<form method="post" action="/login">"#))
            #expect(asked.text.contains(#"<input type="hidden" name="next" value="/stats?x&#61;1">"#) || asked.text.contains(#"name="next" value="/stats?x=1""#),
                    "\(asked.text)")
            let csrf = try #require(Browser.csrf(in: asked.text))
            let login = try await browser.post("/login", ["email": "ann@example.org", "password": AccountTests.password, "next": "/stats?x=1"],
                                               csrf: csrf)
            #expect(login.status == .seeOther && login.headers[.location] == "/stats?x=1")
            for foreign in ["//evil.example.org/", "https://evil.example.org/", "/\\evil.example.org"] {
                let elsewhere = try await browser.post("/login", ["email": "ann@example.org", "password": AccountTests.password, "next": foreign],
                                                       formPage: "/login")
                #expect(elsewhere.status == .seeOther && elsewhere.headers[.location] == "/account", "\(foreign)")
            }
        }
    }

    @Test("a form sent after the session ended keeps what was typed: log in, and send it again", arguments: Backend.allCases)
    func typedSurvivesExpiry(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(sessions: SessionSettings(idle: .seconds(600), absolute: .seconds(3600))),
                             wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            let form = try await browser.get("/account")
            let oldCSRF = try #require(Browser.csrf(in: form.text))
            clock.advance(.seconds(700))
            let sent = try await browser.post("/account/settings", ["timezone": "Europe/Rome", "max_hr": "181"], csrf: oldCSRF)
            #expect(sent.status == .unauthorized && sent.text.contains("what you typed is kept"))
            #expect(sent.text.contains(#"name="resume" value="max_hr&#61;181&amp;timezone&#61;Europe%2FRome""#)
                    || sent.text.contains(#"name="resume" value="max_hr=181&amp;timezone=Europe%2FRome""#), "\(sent.text)")
            #expect(sent.text.contains(#"name="next" value="/account/settings""#))
            #expect(!sent.text.contains(oldCSRF))
            // The log-in form as the browser would send it, the kept fields included.
            let csrf = try #require(Browser.csrf(in: sent.text))
            let login = try await browser.post("/login", ["email": "ann@example.org", "password": AccountTests.password, "next": "/account/settings",
                                                          "resume": "max_hr=181&timezone=Europe%2FRome&csrf=stale"], csrf: csrf)
            #expect(login.status == .ok && login.text.contains(#"<form method="post" action="/account/settings">"#), "\(login.text)")
            #expect(login.text.contains(#"<input type="hidden" name="timezone" value="Europe/Rome">"#))
            #expect(!login.text.contains("stale"))
            let newCSRF = try #require(Browser.csrf(in: login.text))
            let saved = try await browser.post("/account/settings", ["timezone": "Europe/Rome", "max_hr": "181"], csrf: newCSRF)
            #expect(saved.status == .seeOther)
            let account = try #require(try await cloud.store.accounts.account(email: "ann@example.org")?.account)
            #expect(account.timezone == "Europe/Rome" && account.maxHeartRate == 181)
        }
    }

    @Test("times: the viewer's zone, one format, the year only when it is not this year's, ages in minutes not hundreds of seconds")
    func timeFormats() {
        let now: Int64 = 1_795_797_600_000  // Fri 27 Nov 2026, 16:40 UTC
        let rome = RunnerCalendar("Europe/Rome", nowMs: now)
        let at: Int64 = 1_795_797_300_000  // 16:35 UTC, 17:35 in Rome
        #expect(rome.dateTime(at) == "Fri 27 Nov, 17:35")
        #expect(RunnerCalendar("America/New_York", nowMs: now).dateTime(at) == "Fri 27 Nov, 11:35")
        #expect(rome.dateTime(at - 365 * 86_400_000) == "Thu 27 Nov 2025, 17:35")
        #expect(rome.dateTimeAndAge(at) == "Fri 27 Nov, 17:35 (5 min ago)")
        #expect(rome.clockTime(at, nowMs: now) == "17:35" && rome.clockTime(at - 86_400_000, nowMs: now) == "Thu 26 Nov, 17:35")
        #expect(RunnerFormat.age(milliseconds: 393_000) == "6 min ago")
        #expect(RunnerFormat.age(milliseconds: 3 * 60_000) == "3 min ago" && RunnerFormat.age(milliseconds: 2_000) == "just now")
    }

    @Test("the calendar's own date writing agrees with ICU's (DateFormatter, en) in every kind of zone, across DST changes and years")
    func datesAgreeWithICU() {
        let zones = ["UTC", "Europe/Rome", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham", "America/St_Johns",
                     "Pacific/Kiritimati", "Pacific/Pago_Pago"]
        let patterns: [(String, (RunnerCalendar, Int64) -> String)] = [
            ("d MMM yyyy", { $0.date($1) }), ("yyyy-MM-dd", { $0.day($1) }), ("d MMM", { $0.shortDate($1) }),
            ("EEE d MMM yyyy, HH:mm", { $0.dateTime($1) }), ("MMM yy", { $0.monthLabel($1) }),
        ]
        var generator = SystemRandomNumberGenerator()
        // Instants from 1972 to 2098, and the hours around 2026's DST changes in Europe and the US.
        var instants: [Int64] = (0..<400).map { _ in Int64.random(in: 63_072_000_000...4_070_908_800_000, using: &generator) }
        for change: Int64 in [1_774_746_000_000, 1_792_890_000_000, 1_772_953_200_000, 1_793_512_800_000] {
            instants += stride(from: change - 7_200_000, through: change + 7_200_000, by: 900_000).map { $0 }
        }
        for zone in zones {
            // nowMs nil: never "this year", so dateTime writes the year and matches the pattern with it.
            let calendar = RunnerCalendar(zone, nowMs: nil)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: zone)
            for (pattern, write) in patterns {
                formatter.dateFormat = pattern
                let wrong = instants.filter { write(calendar, $0) != formatter.string(from: Date(timeIntervalSince1970: Double($0) / 1_000)) }
                #expect(wrong.isEmpty, "\(zone) \(pattern): \(wrong.prefix(3).map { "\($0): \(write(calendar, $0))" })")
            }
        }
    }

    @Test("the devices page says when a device was last seen in the account's zone and format, and how long ago", arguments: Backend.allCases)
    func devicesPageTimes(backend: Backend) async throws {
        let clock = SteppedWallClock()  // Sunday 10 May 2026, 07:30 UTC
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            #expect(try await browser.post("/account/settings", ["timezone": "Europe/Rome", "max_hr": ""], formPage: "/account").status == .seeOther)
            let account = try #require(try await cloud.store.accounts.account(email: "ann@example.org")?.account)
            let token = try await cloud.addDevice("ann-pi")
            #expect(try await cloud.store.devices.assignDevice(name: "ann-pi", accountID: account.id))
            #expect(try await cloud.request(.get, "/v1/runs", token: token).status == .ok)
            clock.advance(.seconds(393))
            let page = try await browser.get("/devices")
            #expect(page.text.contains("Last seen: Sun 10 May, 09:30 (6 min ago)"), "\(page.text)")
            #expect(!page.text.contains("UTC") && !page.text.contains("393"))
            let code = try await browser.post("/devices/link", [:], formPage: "/devices")
            #expect(code.text.contains("(until 09:46)"), "\(code.text)")
        }
    }

    @Test("the time zone comes from the tz database's list: places and UTC, no offsets")
    func timeZoneList() {
        let names = TimeZoneNames.all
        #expect(names.count > 300 && names.contains("Europe/Rome") && names.contains("America/New_York") && names.contains("UTC"))
        #expect(!names.contains { $0.hasPrefix("Etc/") || $0.hasPrefix("GMT") } && names == names.sorted())
        #expect(TimeZoneNames.canonical("europe/rome") == "Europe/Rome" && TimeZoneNames.canonical(" America/New York ") == "America/New_York")
        #expect(TimeZoneNames.canonical("utc") == "UTC")
        for refused in ["GMT+1", "Etc/GMT-1", "CET+1", "Mars/Olympus", "", String(repeating: "a/", count: 40)] {
            #expect(TimeZoneNames.canonical(refused) == nil, "\(refused)")
        }
    }

    @Test("form errors: beside their field in the runner's words, the field aria-invalid; the zone is a select, 'europe/rome' taken",
          arguments: Backend.allCases)
    func formErrors(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let form = try await browser.get("/signup")
            #expect(form.text.contains(#"<select name="timezone">"#) && form.text.contains("<option selected>UTC</option>"))
            #expect(form.text.contains("<option>Europe/Rome</option>") && !form.text.contains("GMT+1"))
            let refused = try await browser.post("/signup", ["email": "ann@example.org", "password": AccountTests.password, "timezone": "GMT+1"])
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains(#"<select name="timezone" aria-invalid="true" aria-describedby="timezone-error">"#), "\(refused.text)")
            #expect(refused.text.contains(#"<span class="field-error" id="timezone-error">"#) && refused.text.contains("Time zone: "))
            #expect(!refused.text.contains("timezone: ") && refused.text.contains(#"value="ann@example.org""#))
            #expect(!refused.text.contains(#"name="email" value="ann@example.org" required autocomplete="username" aria-invalid"#))
            #expect(try await cloud.store.accounts.account(email: "ann@example.org") == nil)

            try await browser.signUpAndLogIn("ann@example.org")
            let settings = try await browser.post("/account/settings", ["timezone": "europe/rome", "max_hr": ""], formPage: "/account")
            #expect(settings.status == .seeOther)
            #expect(try await cloud.store.accounts.account(email: "ann@example.org")?.account.timezone == "Europe/Rome")
            #expect(try await browser.get("/account").text.contains("<option selected>Europe/Rome</option>"))
            let badHR = try await browser.post("/account/settings", ["timezone": "Europe/Rome", "max_hr": "300"], formPage: "/account")
            #expect(badHR.status == .badRequest && badHR.text.contains("Maximum heart rate: "))
            #expect(badHR.text.contains(#"maxlength="3" aria-invalid="true" aria-describedby="max_hr-error">"#), "\(badHR.text)")

            // A step of the plan form: its row's field is marked, its words are the labels'.
            let plan = ["name": "Tempo", "date": "2026-05-10", "step1_type": "run", "step1_end": "distance", "step1_amount": "5 km",
                        "step1_target": "pace", "step1_value": "4:00"]
            let step = try await browser.post("/plan/sessions", plan, formPage: "/plan/new")
            #expect(step.status == .badRequest && step.text.contains("Step 1, range: "), "\(step.text)")
            #expect(step.text.contains(#"name="step1_value" value="4:00" placeholder="3:10-3:30" aria-invalid="true" aria-describedby="step1_value-error">"#))
            #expect(step.text.contains(#"id="step1_value-error""#) && !step.text.contains("step1_value:") && !step.text.contains("steps[0]"))
            #expect(step.text.components(separatedBy: #"aria-invalid="true""#).count == 2, "one field marked")
        }
    }

    @Test("gzip when the client accepts it: pages, assets (ETag of their own) and error pages; never for a cross-site page or q=0",
          arguments: Backend.allCases)
    func compression(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            _ = try await browser.get("/signup")  // the form cookie, so both fetches render the same page
            func fetch(_ uri: String, _ extra: HTTPFields) async throws -> TestResponse {
                var headers = extra
                headers[.cookie] = browser.cookieHeader
                return try await cloud.client.execute(uri: uri, method: .get, headers: headers, body: nil)
            }
            let plain = try await fetch("/signup", [:])
            #expect(plain.headers[.contentEncoding] == nil && plain.headers[.vary]?.contains("Accept-Encoding") == true)
            let zipped = try await fetch("/signup", [.acceptEncoding: "gzip, deflate, br, zstd"])
            #expect(zipped.status == .ok && zipped.headers[.contentEncoding] == "gzip" && zipped.headers[.vary]?.contains("Accept-Encoding") == true)
            let inflated = try Gzip.decompress(Array(zipped.body.readableBytesView))
            #expect(inflated == Array(plain.body.readableBytesView))
            #expect(zipped.body.readableBytes * 3 < plain.body.readableBytes, "\(zipped.body.readableBytes) of \(plain.body.readableBytes)")
            for refused in ["gzip;q=0", "identity", "br", "*;q=0"] {
                #expect(try await fetch("/signup", [.acceptEncoding: refused]).headers[.contentEncoding] == nil, "\(refused)")
            }
            #expect(try await fetch("/signup", [.acceptEncoding: "*"]).headers[.contentEncoding] == "gzip")
            // A page a browser fetches for another site stays plain (BREACH: its CSRF token).
            let crossSite = try await fetch("/signup", [.acceptEncoding: "gzip", .init("Sec-Fetch-Site")!: "cross-site"])
            #expect(crossSite.headers[.contentEncoding] == nil)

            let script = try await fetch("/assets/chart.js/chart.min.js", [.acceptEncoding: "gzip"])
            let plainScript = try await fetch("/assets/chart.js/chart.min.js", [:])
            #expect(script.headers[.contentEncoding] == "gzip" && script.body.readableBytes * 2 < plainScript.body.readableBytes)
            #expect(try Gzip.decompress(Array(script.body.readableBytesView)) == Array(plainScript.body.readableBytesView))
            let tag = try #require(script.headers[.eTag])
            #expect(tag.hasSuffix("-gzip\"") && tag != plainScript.headers[.eTag])
            let revalidated = try await fetch("/assets/chart.js/chart.min.js", [.acceptEncoding: "gzip", .ifNoneMatch: tag])
            #expect(revalidated.status == .notModified && revalidated.headers[.eTag] == tag)

            let missing = try await fetch("/no/such/page", [.acceptEncoding: "gzip", .accept: "text/html"])
            #expect(missing.status == .notFound && missing.headers[.contentEncoding] == "gzip")
            #expect(String(decoding: try Gzip.decompress(Array(missing.body.readableBytesView)), as: UTF8.self).contains("No such page"))
        }
    }

    @Test("pages link the assets by version; a versioned URL is cached for a year, immutable")
    func versionedAssets() async throws {
        try await Cloud.with(.sqlite, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let page = try await browser.get("/login")
            let icon = try #require(page.text.range(of: #"/assets/pacer/icon\.svg\?v=[A-Za-z0-9_-]+"#, options: .regularExpression))
            let versioned = try await browser.get(String(page.text[icon]))
            #expect(versioned.status == .ok && versioned.headers[.cacheControl] == "public, max-age=31536000, immutable")
            let stale = try await browser.get("/assets/pacer/icon.svg?v=old")
            #expect(stale.status == .ok && stale.headers[.cacheControl] == Assets.cacheControl)
        }
    }

    @Test("with a 60 s idle time an active browser stays signed in, and 61 s of idleness ends it", arguments: Backend.allCases)
    func shortIdleTime(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(sessions: SessionSettings(idle: .seconds(60), absolute: .seconds(3600))),
                             wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            try await browser.signUpAndLogIn("ann@example.org")
            // Quick requests, then pauses just under the idle time: the pauses count from the
            // last request, not from the last minute's write.
            for step in [2, 1, 57, 2, 58, 30, 59, 1, 1, 58] {
                clock.advance(.seconds(step))
                #expect(try await browser.get("/account").status == .ok, "after a pause of \(step) s")
            }
            clock.advance(.seconds(61))
            #expect(try await browser.get("/account").status == .unauthorized)
        }
    }
}

/// Issue 33: a planned session is done only when the run followed most of it.
@Suite("pacer-cloud: a planned session is done by a run that covered 80 % of it", .timeLimit(.minutes(10)))
struct PlanCompletionTests {
    /// A 10-minute warm-up, 5 × (1 km, 2 minutes' rest), a 10-minute cool-down.
    static let steps = [
        PlanStep(type: "warmup", time_s: 600),
        PlanStep(type: "repeat", times: 5, steps: [PlanStep(type: "run", distance_m: 1_000), PlanStep(type: "rest", time_s: 120)]),
        PlanStep(type: "cooldown", time_s: 600),
    ]

    @Test("the planned distance and time count repeats; 80 % of both is done, less is not; lap steps ask for nothing")
    func rule() {
        let planned = PlanCompletion.planned(Self.steps)
        #expect(planned.distanceM == 5_000 && planned.timeS == 1_800)
        #expect(!PlanCompletion.isDone(Self.steps, distanceM: 1_300, elapsedS: 460), "stopped 7:40 into the warm-up")
        #expect(!PlanCompletion.isDone(Self.steps, distanceM: 3_999, elapsedS: 3_000))
        #expect(!PlanCompletion.isDone(Self.steps, distanceM: 6_000, elapsedS: 1_439))
        #expect(PlanCompletion.isDone(Self.steps, distanceM: 4_000, elapsedS: 1_440))
        let warmUp = [PlanStep(type: "warmup", time_s: 600)]
        #expect(!PlanCompletion.isDone(warmUp, distanceM: 1_500, elapsedS: 460) && PlanCompletion.isDone(warmUp, distanceM: 1_500, elapsedS: 480))
        #expect(PlanCompletion.isDone([PlanStep(type: "run", lap: true)], distanceM: 10, elapsedS: 5))
    }

    @Test("a run stopped 7:40 into a 10-minute warm-up leaves its session open; the whole run marks it", arguments: Backend.allCases)
    func uploads(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            let (token, ann) = try await RunnerPageTests.runner(cloud, browser)
            let session = PlanSession(id: Track.runID(), accountID: ann.id, name: "Warm-up", stepsJSON: PlanTests.stepsJSON([PlanStep(type: "warmup", time_s: 600)]),
                                      startDate: "2026-05-10", weekdays: 0, weeks: 0)
            #expect(try await cloud.store.plans.addPlanSession(session, limit: 10))
            let occurrence = PlanDates.occurrenceID(sessionID: session.id, date: "2026-05-10")
            for (elapsed, done) in [(460.0, false), (610.0, true)] {
                let run = Track.runID()
                var summary = Track.summary(chunks: 1, distance: 1_400)
                summary["elapsed_time_s"] = elapsed
                summary["moving_time_s"] = elapsed
                summary["planned_session_id"] = occurrence
                #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(5)), token: token).status == .created)
                #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: token, summary).status == .created)
                let marked = try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-05-10", through: "2026-05-10").map(\.runID)
                #expect(marked == (done ? [run] : []), "elapsed \(elapsed) s: \(marked)")
            }
        }
    }
}
