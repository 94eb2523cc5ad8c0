@testable import CloudModel
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// The runner managing a run (#33): name, notes, sport and visibility; deleting after a
/// confirmation; share links (shown once, revocable) opened signed out; a monitor's view.
@Suite("pacer-cloud: managing runs and sharing them", .timeLimit(.minutes(10)))
struct RunManagementTests {
    static func sharePath(in html: String) -> String? {
        guard let range = html.range(of: "/s/") else { return nil }
        return "/s/" + html[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
    }

    @Test("name, notes, sport and visibility are saved and shown; the figures take the sport; bad fields are 400 naming them, what was typed kept",
          arguments: Backend.allCases)
    func editing(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, _) = try await RunnerPageTests.runner(cloud, browser)
            let run = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 2_000))
            let page = try await browser.get("/runs/\(run)")
            #expect(page.status == .ok && page.text.contains("href=\"/runs/\(run)/edit\""))
            #expect(page.text.contains("Only me"), "a run is private until its runner says otherwise")
            _ = try await browser.get("/stats")  // the figures are counted
            let saved = try await browser.post("/runs/\(run)/edit", ["title": "  Sunday  long run ", "notes": "Windy.\r\nLegs <heavy>.",
                                                                    "sport": "hike", "visibility": "monitors"])
            #expect(saved.status == .seeOther && saved.headers[.location] == "/runs/\(run)")
            let shown = try await browser.get("/runs/\(run)").text
            #expect(shown.contains("<h1>Sunday  long run</h1>") && shown.contains("Hike ·") && shown.contains("Windy.\nLegs &lt;heavy&gt;."))
            #expect(shown.contains("Me and the people who watch over me"))
            let ann = try #require(try await cloud.store.accounts.account(email: "ann@example.org")).account
            let stored = try #require(try await cloud.store.runs.ownRun(accountID: ann.id, runID: run))
            #expect(stored.details == RunDetails(title: "Sunday  long run", notes: "Windy.\nLegs <heavy>.", sport: .hike, visibility: .monitors))
            let figuresSport = try await cloud.store.database.read { db in
                try await db.raw("SELECT sport FROM run_figures WHERE run_id = \(bind: run)").first()?.decode(column: "sport", as: String.self)
            }
            #expect(figuresSport == "hike", "the statistics see the new sport at once")

            // Each bad field: 400 naming it in the runner's words, the form again with what was typed.
            let bad: [([String: String], String)] = [
                (["title": "Evil \u{202E}gnp.exe", "sport": "run", "visibility": "private"], "Name: one line"),
                (["title": "two\nlines", "sport": "run", "visibility": "private"], "Name: one line"),
                (["title": String(repeating: "a", count: 101), "sport": "run", "visibility": "private"], "Name: one line of up to 100 characters"),
                (["title": "Ok", "notes": String(repeating: "n", count: 4_001), "sport": "run", "visibility": "private"], "Notes: at most 4000 characters"),
                (["title": "Ok", "notes": "bell \u{07}", "sport": "run", "visibility": "private"], "Notes: an invisible or control character"),
                (["title": "Kept title", "sport": "car", "visibility": "private"], "Sport: choose one of Run, Walk"),
                (["title": "Kept title", "sport": "run", "visibility": "public"], "Who sees it: choose who sees it"),
                (["title": "Kept title", "visibility": "private"], "Sport: choose"),
            ]
            for (fields, message) in bad {
                let refused = try await browser.post("/runs/\(run)/edit", fields, formPage: "/runs/\(run)/edit")
                #expect(refused.status == .badRequest && refused.text.contains(message), "\(fields): \(refused.status) \(refused.text.prefix(300))")
                if fields["title"] == "Kept title" { #expect(refused.text.contains("value=\"Kept title\""), "what was typed is kept") }
                if fields["title"] == "two\nlines" {
                    #expect(refused.text.contains(#"aria-invalid="true" aria-describedby="title-error">"#), "the field is marked, its error beside it")
                }
            }
            #expect(try await cloud.store.runs.ownRun(accountID: stored.accountID, runID: run)?.details == stored.details, "nothing refused was stored")
            // Without the form's token: 403, nothing changed.
            #expect(try await browser.post("/runs/\(run)/edit", ["title": "x", "sport": "run", "visibility": "private"], csrf: "forged").status == .forbidden)
            // An empty name is no name: the heading says what the run is and when.
            #expect(try await browser.post("/runs/\(run)/edit", ["title": "", "sport": "walk", "visibility": "private"]).status == .seeOther)
            #expect(try await browser.get("/runs/\(run)").text.contains("<h1>Walk of "))
        }
    }

    @Test("deleting asks first, then removes the run, its track, figures and the plan mark it made; another account's run is 404",
          arguments: Backend.allCases)
    func deleting(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await RunnerPageTests.runner(cloud, browser)
            let run = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 1_500))
            let kept = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 1_000, startMs: Track.start + 86_400_000))
            let device = try #require(try await cloud.store.devices.devices().first { $0.name == "ann-pacer" })
            let session = PlanSession(id: Track.runID(), accountID: account.id, name: "Easy", stepsJSON: #"[{"distance_m":1500,"type":"run"}]"#,
                                      startDate: "2026-05-10", weekdays: 0, weeks: 1)
            #expect(try await cloud.store.plans.addPlanSession(session, limit: PlanSession.maxPerAccount))
            #expect(try await cloud.store.plans.markPlanDone(PlanDone(sessionID: session.id, date: "2026-05-10", accountID: account.id,
                                                                      runDeviceID: device.id, runID: run, doneMs: 1)))
            _ = try await browser.get("/stats")

            // Bob cannot see, ask to delete, or delete Ann's run.
            let bob = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, bob, email: "bob@example.org", device: "bob-pacer")
            #expect(try await bob.get("/runs/\(run)/delete").status == .notFound)
            #expect(try await bob.post("/runs/\(run)/delete", [:], formPage: "/runs").status == .notFound)

            let confirm = try await browser.get("/runs/\(run)/delete")
            #expect(confirm.status == .ok && confirm.text.contains("cannot be undone") && confirm.text.contains("1.50 km"))
            #expect(try await cloud.store.runs.ownRun(accountID: account.id, runID: run) != nil, "asking deletes nothing")
            let deleted = try await browser.post("/runs/\(run)/delete", [:])
            #expect(deleted.status == .seeOther && deleted.headers[.location] == "/runs")
            #expect(try await browser.get("/runs/\(run)").status == .notFound)
            #expect(try await browser.post("/runs/\(run)/delete", [:], formPage: "/runs").status == .notFound, "twice is 404, not a 500")
            let left = try await cloud.store.database.read { db in
                var counts: [String: Int] = [:]
                for table in ["chunk", "run", "run_figures", "run_view"] {
                    counts[table] = try await db.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: table) WHERE run_id = \(bind: run)").first()?
                        .decode(column: "n", as: Int.self)
                }
                counts["plan_done"] = try await db.raw("SELECT COUNT(*) AS n FROM plan_done WHERE run_id = \(bind: run)").first()?.decode(column: "n", as: Int.self)
                return counts
            }
            #expect(left.values.allSatisfy { $0 == 0 }, "\(left)")
            #expect(try await browser.get("/runs/\(kept)").status == .ok, "the other run stays")
            #expect(try await browser.get("/runs").text.contains("/runs/\(kept)"))
        }
    }

    @Test("a share link shows the run signed out, with nothing of the account; ending it, a new one or making the run private makes it 404",
          arguments: Backend.allCases)
    func sharing(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await RunnerPageTests.runner(cloud, browser)
            let run = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 3_000))
            #expect(try await browser.post("/runs/\(run)/edit", ["title": "Lakeside", "notes": "With Bea", "sport": "run", "visibility": "private"])
                .status == .seeOther)
            let made = try await browser.post("/runs/\(run)/share", [:], formPage: "/runs/\(run)/edit")
            #expect(made.status == .ok && made.text.contains("shown only"))
            let link = try #require(Self.sharePath(in: made.text))
            #expect(made.text.contains("http://127.0.0.1:8080" + link) || made.text.contains(link))
            // The secret itself is stored nowhere.
            let stored = try await cloud.store.database.read { db in
                try await db.raw("SELECT share_sha256, visibility FROM run WHERE run_id = \(bind: run)").first()
            }
            #expect(try stored?.decode(column: "share_sha256", as: String.self) == Tokens.hash(String(link.dropFirst(3))))
            #expect(try stored?.decode(column: "visibility", as: String.self) == "link")

            // Signed out, a stranger sees the run and nothing of the account.
            let stranger = Browser(cloud)
            let shared = try await stranger.get(link)
            #expect(shared.status == .ok)
            #expect(shared.text.contains("<h1>Lakeside</h1>") && shared.text.contains("3.00 km") && shared.text.contains("With Bea"))
            #expect(shared.text.contains("id=\"run-data\"") && shared.text.contains("UTC"))
            for secret in [account.email, "ann@example.org", "Ann", "ann-pacer", "/export.", "/edit", "csrf", "/account", run] {
                #expect(!shared.text.contains(secret), "the shared page shows \(secret)")
            }
            #expect(shared.headers[.cacheControl] == "no-store")
            #expect(shared.headers[.init("Referrer-Policy")!] == PageData.mapReferrer, "the tile server never sees the secret path")

            // Unknown and malformed links: 404, the same page.
            #expect(try await stranger.get("/s/" + Tokens.random()).status == .notFound)
            #expect(try await stranger.get("/s/not%20a%20secret").status == .notFound)
            #expect(try await stranger.get("/s/" + String(link.dropFirst(3)).uppercased()).status == .notFound)

            // A new link ends the old one.
            let again = try await browser.post("/runs/\(run)/share", [:], formPage: "/runs/\(run)/edit")
            let second = try #require(Self.sharePath(in: again.text))
            #expect(second != link)
            #expect(try await stranger.get(link).status == .notFound)
            #expect(try await stranger.get(second).status == .ok)
            // Ending it: 404, and the run is shown to monitors at most.
            #expect(try await browser.post("/runs/\(run)/share/end", [:], formPage: "/runs/\(run)/edit").status == .seeOther)
            #expect(try await stranger.get(second).status == .notFound)
            #expect(try await cloud.store.runs.ownRun(accountID: account.id, runID: run)?.details.visibility == .monitors)
            // Making the run private through the form ends a live link too.
            let third = try #require(Self.sharePath(in: try await browser.post("/runs/\(run)/share", [:], formPage: "/runs/\(run)/edit").text))
            #expect(try await stranger.get(third).status == .ok)
            #expect(try await browser.post("/runs/\(run)/edit", ["title": "Lakeside", "sport": "run", "visibility": "private"]).status == .seeOther)
            #expect(try await stranger.get(third).status == .notFound)
            // A deleted run's link is gone with it.
            let fourth = try #require(Self.sharePath(in: try await browser.post("/runs/\(run)/share", [:], formPage: "/runs/\(run)/edit").text))
            #expect(try await browser.post("/runs/\(run)/delete", [:]).status == .seeOther)
            #expect(try await stranger.get(fourth).status == .notFound)
            // Another account cannot make or end a link of Ann's run.
            let bob = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, bob, email: "bob@example.org", device: "bob-pacer")
            let bobs = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 500, startMs: Track.start + 7_200_000))
            #expect(try await bob.post("/runs/\(bobs)/share", [:], formPage: "/runs").status == .notFound)
            #expect(try await bob.post("/runs/\(bobs)/share/end", [:], formPage: "/runs").status == .notFound)
        }
    }

    @Test("share pages are limited per address, as alert pages", arguments: [Backend.sqlite])
    func sharePagesAreLimited(backend: Backend) async throws {
        var limits = RateLimits.defaults
        limits.alertPagePerAddress = RateLimit(burst: 3, period: .seconds(3_600))
        try await Cloud.with(backend, configuration: WebConfig.make(limits: limits)) { cloud in
            var answers: [HTTPResponse.Status] = []
            for _ in 0..<4 { answers.append(try await Browser(cloud).get("/s/" + Tokens.random()).status) }
            #expect(answers == [.notFound, .notFound, .notFound, .tooManyRequests])
        }
    }

    @Test("a consented monitor sees a run its runner shows monitors, without its settings or files; a private run, another account or an ended consent: 404",
          arguments: Backend.allCases)
    func monitorsView(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, ann) = try await RunnerPageTests.runner(cloud, browser)
            let run = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 2_500))
            let mona = Browser(cloud)
            let (_, monaAccount) = try await RunnerPageTests.runner(cloud, mona, email: "mona@example.org", device: "mona-pacer")
            let invite = Tokens.random(), now = SessionSettings.systemClock()
            try await cloud.store.monitoring.addMonitorInvite(
                MonitorInvite(hash: Tokens.hash(invite), runnerID: ann.id, email: monaAccount.email, createdMs: now, expiresMs: now + 3_600_000),
                mail: OutboxMail(to: monaAccount.email, payload: #"{"from":"p@example.org","subject":"i","text":"-","to":"mona@example.org"}"#))
            #expect(try await cloud.store.monitoring.acceptMonitorInvite(hash: Tokens.hash(invite), monitorID: monaAccount.id, nowMs: now) == ann.id)
            let bob = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, bob, email: "bob@example.org", device: "bob-pacer")

            #expect(try await mona.get("/runs/\(run)").status == .notFound, "private: the runner only")
            #expect(try await browser.post("/runs/\(run)/edit", ["title": "Hills", "sport": "run", "visibility": "monitors"]).status == .seeOther)
            let seen = try await mona.get("/runs/\(run)")
            #expect(seen.status == .ok && seen.text.contains("<h1>Hills</h1>") && seen.text.contains("2.50 km"))
            #expect(!seen.text.contains("/edit") && !seen.text.contains("/export."), "no settings nor downloads for a monitor")
            #expect(try await mona.get("/runs/\(run)/export.gpx").status == .notFound)
            #expect(try await mona.get("/runs/\(run)/edit").status == .notFound)
            #expect(try await mona.post("/runs/\(run)/delete", [:], formPage: "/runs").status == .notFound)
            #expect(try await bob.get("/runs/\(run)").status == .notFound, "not a monitor of Ann's")
            #expect(try await cloud.store.monitoring.endConsent(runnerID: ann.id, monitorID: monaAccount.id))
            #expect(try await mona.get("/runs/\(run)").status == .notFound, "the consent ended")
        }
    }
}
