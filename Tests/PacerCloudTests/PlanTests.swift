@testable import CloudModel
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// The training plan: sessions and their occurrences on both stores, the `plan` sync section
/// (7 days in the account's time zone), the plan pages and their form, and a run that followed
/// a session marking it done.
@Suite("pacer-cloud: training plan", .timeLimit(.minutes(10)))
struct PlanTests {
    /// 6 × (400 m at 3:10–3:30, 200 m recover), as the web form makes it.
    static let intervals = [PlanStep(type: "repeat", times: 6, steps: [
        PlanStep(type: "run", distance_m: 400, pace_s_per_km: [190, 210]), PlanStep(type: "recover", distance_m: 200)])]

    static func stepsJSON(_ steps: [PlanStep] = intervals) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try! encoder.encode(steps), as: UTF8.self)
    }

    static func session(_ account: String, _ name: String, _ date: String, weekdays: Int = 0, weeks: Int = 0) -> PlanSession {
        PlanSession(id: Track.runID(), accountID: account, name: name, stepsJSON: stepsJSON(), startDate: date, weekdays: weekdays, weeks: weeks)
    }

    static func account(_ cloud: Cloud, _ email: String, timezone: String = "UTC") async throws -> Account {
        try await Accounts.create(store: cloud.store, email: email, password: AccountTests.password, displayName: "Ann", timezone: timezone,
                                  confirmed: true, cost: AccountTests.cost)
    }

    // MARK: dates and ids

    @Test("dates: day numbers round-trip, weekdays, the local date at an instant, and occurrence ids")
    func dates() throws {
        for text in ["1970-01-01", "2000-02-29", "2026-05-10", "2026-12-31", "2400-02-29", "9999-12-31"] {
            #expect(PlanDates.day(text).map(PlanDates.text) == text)
        }
        for bad in ["2026-02-29", "2026-13-01", "2026-04-31", "26-05-10", "2026-5-10", "", "2026-05-1x"] { #expect(PlanDates.day(bad) == nil, "\(bad)") }
        #expect(PlanDates.day("1970-01-01") == 0 && PlanDates.day("2026-05-10") == 20_583)
        #expect(PlanDates.weekday(PlanDates.day("2026-05-10")!) == 6 && PlanDates.weekday(PlanDates.day("2026-05-11")!) == 0)
        // 2026-05-10T11:59:59Z is 23:59:59 in Auckland (UTC+12); a second later it is the 11th there, still the 10th in UTC.
        let beforeMidnight: Int64 = 1_778_414_399_000
        #expect(PlanDates.text(PlanDates.day(atMs: beforeMidnight, timezone: "Pacific/Auckland")) == "2026-05-10")
        #expect(PlanDates.text(PlanDates.day(atMs: beforeMidnight + 1_000, timezone: "Pacific/Auckland")) == "2026-05-11")
        #expect(PlanDates.text(PlanDates.day(atMs: beforeMidnight + 1_000, timezone: "UTC")) == "2026-05-10")
        #expect(PlanDates.text(PlanDates.day(atMs: 1_778_400_000_000, timezone: "America/Los_Angeles")) == "2026-05-10")
        #expect(PlanDates.text(PlanDates.day(atMs: -1, timezone: "UTC")) == "1969-12-31")

        let session = "3f1c2a9e-8b7d-4c6e-9a5b-1d2e3f4a5b6c"
        let id = PlanDates.occurrenceID(sessionID: session, date: "2026-05-10")
        #expect(CloudRoutes.isLowercaseUUID(id) && Array(id)[14] == "8" && "89ab".contains(Array(id)[19]))
        #expect(id == PlanDates.occurrenceID(sessionID: session, date: "2026-05-10"))
        #expect(id != PlanDates.occurrenceID(sessionID: session, date: "2026-05-11"))
        #expect(id != PlanDates.occurrenceID(sessionID: "3f1c2a9e-8b7d-4c6e-9a5b-1d2e3f4a5b6d", date: "2026-05-10"))
        // The recipe pacerd may rely on, spelled out: SHA-256 of "pacer-plan-occurrence:<session>:<date>", 16 bytes,
        // version nibble 8, variant bits 10.
        let hex = Array(Tokens.digest(Array("pacer-plan-occurrence:\(session):2026-05-10".utf8)).prefix(32))
        let nibble = { (c: Character, mask: Int, bits: Int) in String((Int(String(c), radix: 16)! & mask) | bits, radix: 16) }
        // Joined, not one chain of +: that took the compiler 3 s.
        let parts: [String] = [String(hex[0..<8]), String(hex[8..<12]), nibble(hex[12], 0, 8) + String(hex[13..<16]),
                               nibble(hex[16], 3, 8) + String(hex[17..<20]), String(hex[20..<32])]
        let expected = parts.joined(separator: "-")
        #expect(id == expected)

        // Mondays and Thursdays for two weeks from Wednesday 6 May: 7, 11, 14 and 18 May.
        let weekly = PlanSession(id: session, accountID: "a", name: "Intervals", stepsJSON: "[]", startDate: "2026-05-06", weekdays: 0b1001, weeks: 2)
        let days = weekly.days(from: PlanDates.day("2026-05-01")!, through: PlanDates.day("2026-05-31")!).map(PlanDates.text)
        #expect(days == ["2026-05-07", "2026-05-11", "2026-05-14", "2026-05-18"])
        #expect(weekly.endDate == "2026-05-19")
        #expect(weekly.days(from: PlanDates.day("2026-05-12")!, through: PlanDates.day("2026-05-13")!) == [])
        let once = PlanSession(id: session, accountID: "a", name: "Long", stepsJSON: "[]", startDate: "2026-05-10")
        #expect(once.days(from: 20_583, through: 20_583) == [20_583] && once.days(from: 20_584, through: 20_590) == [] && once.endDate == "2026-05-10")
    }

    // MARK: the stores

    @Test("store: sessions per account, by the dates they can fall on; done marks by hand or by a run; deleted with the account",
          arguments: Backend.allCases)
    func store(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let ann = try await Self.account(cloud, "ann@example.org"), bob = try await Self.account(cloud, "bob@example.org")
            let weekly = Self.session(ann.id, "Intervals", "2026-05-06", weekdays: 0b1001, weeks: 2)
            let once = Self.session(ann.id, "Long run", "2026-06-01")
            #expect(try await cloud.store.plans.addPlanSession(weekly, limit: 10))
            #expect(try await cloud.store.plans.addPlanSession(once, limit: 10))
            #expect(try await !cloud.store.plans.addPlanSession(weekly, limit: 10), "an id taken")
            #expect(try await !cloud.store.plans.addPlanSession(Self.session(ann.id, "Third", "2026-06-02"), limit: 2), "the limit")
            #expect(try await cloud.store.plans.addPlanSession(Self.session(bob.id, "Bob's", "2026-05-10"), limit: 2), "Bob has his own limit")

            #expect(try await cloud.store.plans.planSession(accountID: ann.id, id: weekly.id) == weekly)
            #expect(try await cloud.store.plans.planSession(accountID: bob.id, id: weekly.id) == nil)
            // Only the sessions that can fall within the range, by start date.
            #expect(try await cloud.store.plans.planSessions(accountID: ann.id, from: "2026-05-01", through: "2026-12-31").map(\.id) == [weekly.id, once.id])
            #expect(try await cloud.store.plans.planSessions(accountID: ann.id, from: "2026-05-19", through: "2026-05-31").map(\.id) == [weekly.id])
            #expect(try await cloud.store.plans.planSessions(accountID: ann.id, from: "2026-05-20", through: "2026-05-31").map(\.id) == [])
            #expect(try await cloud.store.plans.planSessions(accountID: ann.id, from: "2026-04-01", through: "2026-05-05").map(\.id) == [])

            let occurrences = try await cloud.store.plans.planOccurrences(accountID: ann.id, from: PlanDates.day("2026-05-01")!,
                                                                    through: PlanDates.day("2026-06-30")!)
            #expect(occurrences.map(\.date) == ["2026-05-07", "2026-05-11", "2026-05-14", "2026-05-18", "2026-06-01"])

            // By hand, then by a run (which replaces the hand's mark); a second run does not take it over.
            let day = "2026-05-11"
            #expect(try await cloud.store.plans.markPlanDone(PlanDone(sessionID: weekly.id, date: day, accountID: ann.id, doneMs: 1)))
            #expect(try await cloud.store.plans.markPlanDone(PlanDone(sessionID: weekly.id, date: day, accountID: ann.id, runDeviceID: "d", runID: "r1", doneMs: 2)))
            #expect(try await !cloud.store.plans.markPlanDone(PlanDone(sessionID: weekly.id, date: day, accountID: ann.id, runDeviceID: "d", runID: "r2", doneMs: 3)))
            #expect(try await !cloud.store.plans.markPlanDone(PlanDone(sessionID: weekly.id, date: day, accountID: ann.id, doneMs: 4)))
            // Bob cannot mark Ann's session.
            #expect(try await !cloud.store.plans.markPlanDone(PlanDone(sessionID: weekly.id, date: "2026-05-14", accountID: bob.id, doneMs: 5)))
            let done = try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-05-01", through: "2026-05-31")
            #expect(done.count == 1 && done[0].runID == "r1" && done[0].runDeviceID == "d" && done[0].doneMs == 2
                    && done[0].occurrenceID == PlanDates.occurrenceID(sessionID: weekly.id, date: day))
            #expect(try await cloud.store.plans.planDone(accountID: bob.id, from: "2026-05-01", through: "2026-05-31").isEmpty)
            #expect(try await !cloud.store.plans.unmarkPlanDone(accountID: bob.id, sessionID: weekly.id, date: day))
            #expect(try await cloud.store.plans.planOccurrences(accountID: ann.id, from: PlanDates.day(day)!, through: PlanDates.day(day)!).first?.done?.runID == "r1")

            // An edit keeps the marks by date; Bob's edit or delete finds nothing.
            var edited = weekly
            edited.name = "Intervals on the track"
            edited.weeks = 3
            #expect(try await cloud.store.plans.updatePlanSession(edited))
            #expect(try await cloud.store.plans.planSession(accountID: ann.id, id: weekly.id)?.endDate == "2026-05-26")
            var stolen = edited
            stolen.accountID = bob.id
            #expect(try await !cloud.store.plans.updatePlanSession(stolen))
            #expect(try await !cloud.store.plans.deletePlanSession(accountID: bob.id, id: weekly.id))
            #expect(try await cloud.store.plans.planDone(accountID: ann.id, from: day, through: day).count == 1)

            #expect(try await cloud.store.plans.unmarkPlanDone(accountID: ann.id, sessionID: weekly.id, date: day))
            #expect(try await cloud.store.plans.markPlanDone(PlanDone(sessionID: weekly.id, date: day, accountID: ann.id, doneMs: 6)))
            #expect(try await cloud.store.plans.deletePlanSession(accountID: ann.id, id: weekly.id))
            #expect(try await cloud.store.plans.planDone(accountID: ann.id, from: day, through: day).isEmpty, "deleted with its session")
            #expect(try await !cloud.store.plans.deletePlanSession(accountID: ann.id, id: weekly.id))

            #expect(try await cloud.store.plans.markPlanDone(PlanDone(sessionID: once.id, date: "2026-06-01", accountID: ann.id, doneMs: 7)))
            #expect(try await cloud.store.deleteAccount(id: ann.id) != nil)
            #expect(try await cloud.store.plans.planSession(accountID: ann.id, id: once.id) == nil)
            #expect(try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-01-01", through: "2026-12-31").isEmpty)
            #expect(try await cloud.store.plans.planSessions(accountID: bob.id, from: "2026-01-01", through: "2026-12-31").count == 1)
        }
    }

    // MARK: the sync section

    static func plan(_ cloud: Cloud, _ token: String) async throws -> PlanSection? {
        let response = try await cloud.request(.get, "/v1/device/sync", token: token)
        #expect(response.status == .ok)
        return try JSONDecoder().decode(DeviceSync.self, from: Data(buffer: response.body)).sections.plan
    }

    @Test("sync: 7 days in the account's time zone, weekly repeats expanded, done ones left out; the version moves with plan and day",
          arguments: Backend.allCases)
    func syncSection(backend: Backend) async throws {
        // 2026-05-10T07:30Z: 19:30 on Sunday 10 May in Auckland (UTC+12).
        let clock = SteppedWallClock()
        try await Cloud.with(backend, wallClock: clock.now) { cloud in
            let ann = try await Self.account(cloud, "ann@example.org", timezone: "Pacific/Auckland")
            let token = try await cloud.addDevice("ann-pacer")
            #expect(try await Self.plan(cloud, token) == nil, "an unowned device")
            #expect(try await cloud.store.devices.assignDevice(name: "ann-pacer", accountID: ann.id))
            let empty = try #require(try await Self.plan(cloud, token))
            #expect(empty.sessions == [] && empty.timezone == "Pacific/Auckland" && empty.version.count == 16)

            let easy = Self.session(ann.id, "Easy <b>run</b>\nby the river", "2026-05-10")
            let weekly = Self.session(ann.id, "Intervals", "2026-05-04", weekdays: 0b1001, weeks: 2)  // Mondays and Thursdays
            let saturday = Self.session(ann.id, "Long run", "2026-05-16")
            let nextSunday = Self.session(ann.id, "Recovery", "2026-05-17")
            for session in [easy, weekly, saturday, nextSunday] { #expect(try await cloud.store.plans.addPlanSession(session, limit: 10)) }
            // Bob's session on the same day is not Ann's.
            let bob = try await Self.account(cloud, "bob@example.org", timezone: "Pacific/Auckland")
            #expect(try await cloud.store.plans.addPlanSession(Self.session(bob.id, "Bob's", "2026-05-10"), limit: 10))

            let first = try #require(try await Self.plan(cloud, token))
            let expected: [(PlanSession, String)] = [(easy, "2026-05-10"), (weekly, "2026-05-11"), (weekly, "2026-05-14"), (saturday, "2026-05-16")]
            #expect(first.sessions.map(\.date) == expected.map(\.1))
            #expect(first.sessions.map(\.id) == expected.map { PlanDates.occurrenceID(sessionID: $0.0.id, date: $0.1) })
            #expect(first.sessions.map(\.name) == ["Easy brun/b by the river", "Intervals", "Intervals", "Long run"])
            #expect(first.sessions.allSatisfy { $0.steps == Self.intervals })
            #expect(first.version != empty.version)

            // Nothing changed: the same version, and a 304 on the ETag.
            clock.advance(.seconds(16_199))  // 4 h 29 min 59 s later: 23:59:59 in Auckland
            let etag = try #require(try await cloud.request(.get, "/v1/device/sync", token: token).headers[.eTag])
            #expect(try await Self.plan(cloud, token)?.version == first.version)
            // Midnight in Auckland (noon UTC, still the 10th there): Monday is today, next Sunday is in.
            clock.advance(.seconds(1))
            #expect(try await cloud.request(.get, "/v1/device/sync", token: token, headers: [.ifNoneMatch: etag]).status == .ok)
            let monday = try #require(try await Self.plan(cloud, token))
            #expect(monday.sessions.map(\.date) == ["2026-05-11", "2026-05-14", "2026-05-16", "2026-05-17"])
            #expect(monday.version != first.version)

            // Done: left out; the version moves.
            #expect(try await cloud.store.plans.markPlanDone(PlanDone(sessionID: weekly.id, date: "2026-05-11", accountID: ann.id, doneMs: clock.now())))
            let done = try #require(try await Self.plan(cloud, token))
            #expect(done.sessions.map(\.date) == ["2026-05-14", "2026-05-16", "2026-05-17"] && done.version != monday.version)
            // An edit moves it too.
            var renamed = saturday
            renamed.name = "Long run, slow"
            #expect(try await cloud.store.plans.updatePlanSession(renamed))
            let edited = try #require(try await Self.plan(cloud, token))
            #expect(edited.sessions.map(\.name) == ["Intervals", "Long run, slow", "Recovery"] && edited.version != done.version)

            // At most PlanSection.maxSessions, the earliest.
            for index in 0..<PlanSection.maxSessions {
                #expect(try await cloud.store.plans.addPlanSession(Self.session(ann.id, "Extra \(index)", "2026-05-15"), limit: PlanSession.maxPerAccount))
            }
            let full = try #require(try await Self.plan(cloud, token))
            #expect(full.sessions.count == PlanSection.maxSessions && full.sessions.first?.date == "2026-05-14"
                    && full.sessions.last?.date == "2026-05-15")
        }
    }

    // MARK: the pages

    /// The form fields of a session with the step rows given as (type, end, amount, target, value, times, block).
    static func form(name: String, date: String, days: [Int] = [], weeks: String = "",
                     rows: [(String, String, String, String, String, String, String)]) -> [String: String] {
        var fields = ["name": name, "date": date, "weeks": weeks]
        for day in days { fields["day\(day)"] = "1" }
        for (index, row) in rows.enumerated() {
            let prefix = "step\(index + 1)_"
            fields[prefix + "type"] = row.0
            fields[prefix + "end"] = row.1
            fields[prefix + "amount"] = row.2
            fields[prefix + "target"] = row.3
            fields[prefix + "value"] = row.4
            fields[prefix + "times"] = row.5
            fields[prefix + "block"] = row.6
        }
        return fields
    }

    static let intervalRows = [("warmup", "time", "10", "zone", "2", "", ""), ("repeat", "distance", "", "none", "", "6", "2"),
                               ("run", "distance", "400 m", "pace", "3:10-3:30", "", ""), ("recover", "distance", "200", "none", "", "", ""),
                               ("cooldown", "lap", "", "bpm", "120-140", "", "")]

    @Test("pages: a session made with the form is the device's workout; month view and upcoming list; edit, mark done and undo, delete",
          arguments: Backend.allCases)
    func pages(backend: Backend) async throws {
        let clock = SteppedWallClock()  // Sunday 10 May 2026, 07:30 UTC
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await RunnerPageTests.runner(cloud, browser)
            let empty = try await browser.get("/plan")
            #expect(empty.status == .ok && empty.text.contains("May 2026") && empty.text.contains("Nothing planned"))
            #expect(empty.text.contains(#"<td class="today" id="today" aria-current="date">"#))
            #expect(empty.text.contains(#"<a href="/plan" aria-current="page">Plan</a>"#))
            let newForm = try await browser.get("/plan/new?date=2026-05-12")
            #expect(newForm.status == .ok && newForm.text.contains(#"name="date" value="2026-05-12""#))
            #expect(newForm.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)

            let fields = Self.form(name: "Track intervals", date: "2026-05-10", days: [1, 4, 7], weeks: "2", rows: Self.intervalRows)
            let created = try await browser.post("/plan/sessions", fields, formPage: "/plan/new")
            #expect(created.status == .seeOther && created.headers[.location] == "/plan?month=2026-05")
            let stored = try #require(try await cloud.store.plans.planSessions(accountID: account.id, from: "2026-05-01", through: "2026-05-31").first)
            #expect(stored.name == "Track intervals" && stored.startDate == "2026-05-10" && stored.weekdays == 0b1001001 && stored.weeks == 2)
            // Exactly the workout structure of the device.
            let workout = try PlanSteps.workout(name: stored.name, steps: stored.steps)
            #expect(stored.steps == [
                PlanStep(type: "warmup", time_s: 600, hr_zone: 2),
                PlanStep(type: "repeat", times: 6, steps: [PlanStep(type: "run", distance_m: 400, pace_s_per_km: [190, 210]),
                                                           PlanStep(type: "recover", distance_m: 200)]),
                PlanStep(type: "cooldown", lap: true, hr_bpm: [120, 140])])
            #expect(PlanSteps.steps(of: workout) == stored.steps)

            let month = try await browser.get("/plan")
            // Sundays, Mondays and Thursdays for two weeks from Sunday 10 May: 10, 11, 14, 17, 18 and 21 May.
            let cells = month.text.components(separatedBy: "Track intervals</a>").count - 1
            #expect(cells == 6 + 6, "month cells and upcoming items: \(cells)")
            #expect(month.text.contains("Sun 10 May 2026</b> <em>today</em>"))
            #expect(month.text.contains("Warm-up 10:00 in zone 2 · 6 × (Run 400 m at 3:10–3:30 /km, Recover 200 m) · Cool-down to the lap button at 120–140 bpm"))
            let upcoming = try #require(month.text.components(separatedBy: #"id="upcoming""#).last)
            #expect(Self.dates(in: upcoming) == ["Sun 10 May 2026", "Mon 11 May 2026", "Thu 14 May 2026", "Sun 17 May 2026", "Mon 18 May 2026",
                                                 "Thu 21 May 2026"])
            #expect(try await browser.get("/plan?month=2026-06").text.contains("June 2026"))
            #expect(try await browser.get("/plan?month=2026-13").status == .badRequest)

            // The edit form shows it as it was made.
            let editPage = try await browser.get("/plan/sessions/\(stored.id)")
            #expect(editPage.status == .ok && editPage.text.contains(#"name="step3_amount" value="400 m""#)
                    && editPage.text.contains(#"name="step3_value" value="3:10-3:30""#) && editPage.text.contains(#"name="step2_times" value="6""#)
                    && editPage.text.contains(#"name="day7" value="1" checked"#))
            var changed = fields
            changed["name"] = "Track intervals, 8 rounds"
            changed["step2_times"] = "8"
            changed["day4"] = nil
            #expect(try await browser.post("/plan/sessions/\(stored.id)", changed, formPage: "/plan/sessions/\(stored.id)").status == .seeOther)
            let edited = try #require(try await cloud.store.plans.planSession(accountID: account.id, id: stored.id))
            #expect(edited.name == "Track intervals, 8 rounds" && edited.steps[1].times == 8 && edited.weekdays == 0b1000001)

            // Mark today's done, then undo; a date it does not fall on is refused.
            let done = try await browser.post("/plan/sessions/\(stored.id)/done", ["date": "2026-05-10"], formPage: "/plan")
            #expect(done.status == .seeOther)
            #expect(try await browser.get("/plan").text.contains("✓ Done"))
            #expect(try await Self.plan(cloud, token)?.sessions.map(\.date) == ["2026-05-11"])
            #expect(try await browser.post("/plan/sessions/\(stored.id)/done", ["date": "2026-05-12"], formPage: "/plan").status == .badRequest)
            #expect(try await browser.post("/plan/sessions/\(stored.id)/undone", ["date": "2026-05-10", "back": "session"], formPage: "/plan")
                .headers[.location] == "/plan/sessions/\(stored.id)")
            #expect(try await Self.plan(cloud, token)?.sessions.map(\.date) == ["2026-05-10", "2026-05-11"])

            #expect(try await browser.post("/plan/sessions/\(stored.id)/delete", [:], formPage: "/plan").status == .seeOther)
            #expect(try await cloud.store.plans.planSession(accountID: account.id, id: stored.id) == nil)
            #expect(try await browser.get("/plan/sessions/\(stored.id)").status == .notFound)
        }
    }

    /// The bold dates of a list, in order.
    static func dates(in html: String) -> [String] {
        html.components(separatedBy: "<li").dropFirst().compactMap { item in
            item.components(separatedBy: "<b>").dropFirst().first?.components(separatedBy: "</b>").first
        }
    }

    @Test("the form: each malformed field is a 400 naming it, the values kept; CSRF and another account's session refused",
          arguments: Backend.allCases)
    func refusals(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (_, account) = try await RunnerPageTests.runner(cloud, browser)
            let good = Self.form(name: "Tempo", date: "2026-05-10", rows: [("run", "distance", "5 km", "pace", "4:00-4:10", "", "")])
            func with(_ changes: [String: String?]) -> [String: String] {
                var fields = good
                for (key, value) in changes { fields[key] = value ?? nil }
                return fields
            }
            let cases: [([String: String?], String)] = [
                (["name": "  "], "Name:"),
                (["name": String(repeating: "a", count: 81)], "Name:"),
                (["date": "2026-02-30"], "Date:"),
                (["date": "tomorrow"], "Date:"),
                (["day2": "1"], "Weeks:"),
                (["day2": "1", "weeks": "53"], "Weeks:"),
                (["step1_type": "sprint"], "Step 1, kind:"),
                (["step1_type": nil], "Steps: a session needs at least one step"),
                (["step1_end": "forever"], "Step 1, ends by:"),
                (["step1_amount": "far"], "Step 1, amount:"),
                (["step1_amount": "5 m"], "Step 1, amount: metres from 10 to 100000"),
                (["step1_end": "time", "step1_amount": "25:99"], "Step 1, amount:"),
                (["step1_value": "4:00"], "Step 1, range:"),
                (["step1_value": "0:30-4:10"], "Step 1, range:"),
                (["step1_value": "4:00-4:00"], "Step 1, range:"),
                (["step1_target": "zone", "step1_value": "7"], "Step 1, range: a zone from 1 to 5"),
                (["step1_target": "bpm", "step1_value": "20-300"], "Step 1, range:"),
                (["step1_target": "watts"], "Step 1, target:"),
                (["step1_type": "repeat", "step1_times": "6", "step1_block": "1"], "Step 1, steps repeated: the repeat holds the next 1 steps, but 0 follow it"),
                (["step1_type": "repeat", "step1_times": "x", "step1_block": "1"], "Step 1, rounds:"),
                (["step1_type": "repeat", "step1_times": "0", "step1_block": "1", "step2_type": "run", "step2_end": "lap"],
                 "Step 1, rounds:"),
                (["step1_type": "repeat", "step1_times": "2", "step1_block": "1", "step2_type": "repeat", "step2_times": "2", "step2_block": "1"],
                 "Step 2, kind: a repeat cannot contain another repeat"),
            ]
            for (changes, named) in cases {
                let fields = with(changes)
                let refused = try await browser.post("/plan/sessions", fields, formPage: "/plan/new")
                #expect(refused.status == .badRequest && refused.text.contains(named), "\(changes): \(refused.status) \(Self.error(refused.text))")
                // The entered values are kept.
                if let name = fields["name"], !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count < 81 {
                    #expect(refused.text.contains(#"name="name" value="\#(name)""#), "\(changes)")
                }
            }
            #expect(try await cloud.store.plans.planSessions(accountID: account.id, from: "2026-01-01", through: "2026-12-31").isEmpty)

            // Without the session's CSRF token nothing is stored.
            #expect(try await browser.post("/plan/sessions", good, csrf: "forged").status == .forbidden)
            #expect(try await browser.post("/plan/sessions", good, formPage: "/plan/new").status == .seeOther)
            let mine = try #require(try await cloud.store.plans.planSessions(accountID: account.id, from: "2026-05-10", through: "2026-05-10").first)
            #expect(try await browser.post("/plan/sessions/\(mine.id)/delete", [:], csrf: "forged").status == .forbidden)
            #expect(try await browser.post("/plan/sessions/\(mine.id)/done", ["date": "2026-05-10"], csrf: "forged").status == .forbidden)
            for (path, fields) in [("/done", ["date": "10 May"]), ("/done", [:]), ("/undone", ["date": "2026-02-30"])] {
                let refused = try await browser.post("/plan/sessions/\(mine.id)\(path)", fields, formPage: "/plan/new")
                #expect(refused.status == .badRequest && refused.text.contains("Date:"), "\(path) \(fields)")
            }

            // Bob sees, edits, marks and deletes none of Ann's; a malformed id is 404 too.
            let bob = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, bob, email: "bob@example.org", device: "bob-pacer")
            #expect(try await bob.get("/plan/sessions/\(mine.id)").status == .notFound)
            #expect(try await bob.post("/plan/sessions/\(mine.id)", good, formPage: "/plan/new").status == .notFound)
            #expect(try await bob.post("/plan/sessions/\(mine.id)/done", ["date": "2026-05-10"], formPage: "/plan/new").status == .notFound)
            #expect(try await bob.post("/plan/sessions/\(mine.id)/delete", [:], formPage: "/plan/new").status == .notFound)
            #expect(try await bob.get("/plan/sessions/NOT-AN-ID").status == .notFound)
            #expect(!(try await bob.get("/plan?month=2026-05").text.contains("Tempo")))
            #expect(try await cloud.store.plans.planSession(accountID: account.id, id: mine.id) == mine)
            #expect(try await cloud.store.plans.planDone(accountID: account.id, from: "2026-05-10", through: "2026-05-10").isEmpty)
        }
    }

    static func error(_ html: String) -> String {
        html.components(separatedBy: #"role="alert">"#).dropFirst().first?.components(separatedBy: "</p>").first ?? "(no error)"
    }

    // MARK: a run that followed a session

    @Test("a complete run naming an occurrence of its account marks it done and shows what it followed; another account's id is passed over",
          arguments: Backend.allCases)
    func runMarksDone(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            let (token, ann) = try await RunnerPageTests.runner(cloud, browser)
            let session = Self.session(ann.id, "Track intervals", "2026-05-10")
            #expect(try await cloud.store.plans.addPlanSession(session, limit: 10))
            let occurrence = try #require(try await Self.plan(cloud, token)?.sessions.first)
            #expect(occurrence.id == PlanDates.occurrenceID(sessionID: session.id, date: "2026-05-10"))

            // The summary first, then the chunk that completes the run.
            let run = Track.runID()
            var summary = Track.summary(chunks: 1)
            summary["planned_session_id"] = occurrence.id
            summary["workout_name"] = "6 by 400 metres"
            #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: token, summary).status == .created)
            #expect(try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-05-10", through: "2026-05-10").isEmpty, "not complete yet")
            #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(5)), token: token).status == .created)
            let done = try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-05-10", through: "2026-05-10")
            #expect(done.map(\.runID) == [run] && done.first?.occurrenceID == occurrence.id)
            #expect(try await Self.plan(cloud, token)?.sessions == [])
            let page = try await browser.get("/runs/\(run)")
            #expect(page.text.contains(#"Followed: <a href="/plan/sessions/\#(session.id)">Track intervals</a> (2026-05-10)"#))
            #expect(page.text.contains("<p>Workout: 6 by 400 metres</p>"))
            #expect(try await browser.get("/plan").text.contains(#"by <a href="/runs/\#(run)">a run</a>"#))

            // Bob's device names Ann's occurrence (another one of it): uploaded, nothing marked, nothing said of it.
            let tomorrow = Self.session(ann.id, "Long run", "2026-05-11")
            #expect(try await cloud.store.plans.addPlanSession(tomorrow, limit: 10))
            let annTomorrow = PlanDates.occurrenceID(sessionID: tomorrow.id, date: "2026-05-11")
            let bobBrowser = Browser(cloud)
            let (bobToken, bob) = try await RunnerPageTests.runner(cloud, bobBrowser, email: "bob@example.org", device: "bob-pacer")
            let bobRun = Track.runID()
            summary["planned_session_id"] = annTomorrow
            summary["start_time"] = "2026-05-11T07:30:00.000Z"
            #expect(try await cloud.putChunk(bobRun, 0, Track.chunk(Track.samples(5)), token: bobToken).status == .created)
            let reply = try await cloud.json(.put, "/v1/runs/\(bobRun)", token: bobToken, summary)
            #expect(reply.status == .created && reply.object["complete"] as? Bool == true)
            #expect(try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-05-11", through: "2026-05-11").isEmpty)
            #expect(try await cloud.store.plans.planDone(accountID: bob.id, from: "2026-01-01", through: "2026-12-31").isEmpty)
            let bobPage = try await bobBrowser.get("/runs/\(bobRun)")
            #expect(bobPage.status == .ok && !bobPage.text.contains("Followed") && !bobPage.text.contains("Long run"))
            // An id of no occurrence at all: the same.
            summary["planned_session_id"] = Track.runID()
            #expect(try await cloud.json(.put, "/v1/runs/\(Track.runID())", token: token, summary).status == .created)
            #expect(try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-05-11", through: "2026-05-11").isEmpty)

            // Ann's own run of it, the chunk first and the summary completing it: marked.
            let annRun = Track.runID()
            summary["planned_session_id"] = annTomorrow
            #expect(try await cloud.putChunk(annRun, 0, Track.chunk(Track.samples(5)), token: token).status == .created)
            #expect(try await cloud.json(.put, "/v1/runs/\(annRun)", token: token, summary).status == .created)
            #expect(try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-05-11", through: "2026-05-11").map(\.runID) == [annRun])

            // A run whose clock put it months away (no GPS time yet, a synthetic track) still
            // marks the occurrence it names, looked for around today as well.
            let jog = Self.session(ann.id, "Recovery jog", "2026-05-12")
            #expect(try await cloud.store.plans.addPlanSession(jog, limit: 10))
            let farRun = Track.runID()
            summary["planned_session_id"] = PlanDates.occurrenceID(sessionID: jog.id, date: "2026-05-12")
            summary["start_time"] = "2025-11-01T07:30:00.000Z"
            #expect(try await cloud.putChunk(farRun, 0, Track.chunk(Track.samples(5)), token: token).status == .created)
            #expect(try await cloud.json(.put, "/v1/runs/\(farRun)", token: token, summary).status == .created)
            #expect(try await cloud.store.plans.planDone(accountID: ann.id, from: "2026-05-12", through: "2026-05-12").map(\.runID) == [farRun])
        }
    }
}

/// #31: numbers in the plan form are parsed without unchecked arithmetic: any text gives a value
/// or nil, never a trap (one signed-in post of "9223372036854775807:00" killed the process).
@Suite(.timeLimit(.minutes(10))) struct PlanFormNumberTests {
    @Test(arguments: ["9223372036854775807:00", "9223372036854775807:00:00", "99999999999999999999:00", "9223372036854775807", "1e308", "-1:00", "1:60"])
    func durationsNeverTrap(text: String) {
        let seconds = PlanForm.duration(text)
        #expect(seconds.map { $0.isFinite } ?? true)
    }

    @Test(arguments: ["9223372036854775807:00", "153722867280912931:00", "1000:00", "-1:00", "5:60"])
    func pacesBeyondAnyRunnerAreRefused(text: String) {
        #expect(PlanForm.paceSeconds(text) == nil)
    }

    @Test func ordinaryValuesStillRead() {
        #expect(PlanForm.duration("1:05:00") == 3900)
        #expect(PlanForm.paceSeconds("5:30") == 330)
        #expect(PlanForm.paceSeconds("999:59") == 59_999)
    }
}
