@testable import CloudModel
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// Kilometres or miles per account (#33): chosen on the account page, then every page writes
/// distances and paces in them, the forms read what is typed in them (stored in metres and
/// seconds per km as before), and the device gets them in its sync profile.
@Suite("pacer-cloud: kilometres or miles per account", .timeLimit(.minutes(10)))
struct UnitsTests {
    static let mile = DistanceUnit.metresPerMile

    @Test("a runner who reads miles gets miles on the run, runs, statistics, calendar, shoes and plan pages, and in the device's profile",
          arguments: Backend.allCases)
    func miles(backend: Backend) async throws {
        let clock = SteppedWallClock()  // Sunday 10 May 2026, 07:30 UTC
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await RunnerPageTests.runner(cloud, browser)
            // Kilometres until the runner says otherwise, on the page and on the device.
            let settings = try await browser.get("/account").text
            #expect(settings.contains(#"<option value="km" selected>Kilometres</option>"#), "\(settings)")
            #expect(try await Self.profile(cloud, token).units == "km")
            let unknown = try await browser.post("/account/settings", ["timezone": "UTC", "max_hr": "", "units": "furlongs"], formPage: "/account")
            #expect(unknown.status == .badRequest && unknown.text.contains("Distances in: choose kilometres or miles"), "\(unknown.text)")
            #expect(unknown.text.contains(#"name="units" aria-invalid="true""#))
            #expect(try await cloud.store.accounts.account(id: account.id)?.units == .km, "a refused form changes nothing")
            let saved = try await browser.post("/account/settings", ["timezone": "UTC", "max_hr": "", "units": "mi"], formPage: "/account")
            #expect(saved.status == .seeOther)
            #expect(try await cloud.store.accounts.account(id: account.id)?.units == .mi)
            #expect(try await browser.get("/account").text.contains(#"<option value="mi" selected>Miles</option>"#))
            // A form without the field (an older page) keeps them.
            #expect(try await browser.post("/account/settings", ["timezone": "UTC", "max_hr": ""], formPage: "/account").status == .seeOther)
            #expect(try await cloud.store.accounts.account(id: account.id)?.units == .mi)
            #expect(try await Self.profile(cloud, token).units == "mi")

            // 10 km at 5:00 /km: 6.21 mi at 8:03 /mi, six whole mile splits and a 0.21 mi rest.
            let runID = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 10_000, startMs: clock.now() - 86_400_000))
            let page = try await browser.get("/runs/\(runID)").text
            #expect(page.contains("6.21 mi") && page.contains("8:03 /mi") && !page.contains(" km"), "\(page)")
            #expect(page.contains("<th>mi</th>"))
            let data = try RunnerPageTests.dataBlock(page)
            #expect(data["unit"] as? String == "mi")
            #expect((data["marks"] as? [[Double]])?.map { $0[2] } == [1, 2, 3, 4, 5, 6])
            let distances = try #require(data["distance"] as? [Double])
            #expect(abs(distances.last! - 10_000 / Self.mile) < 0.02, "the chart's axis in miles: \(distances.last!)")
            let paces = (data["pace"] as? [Any])?.compactMap { $0 as? Double } ?? []
            // The view keeps whole seconds per km (±0.5 s, ±0.8 s a mile), then whole seconds per mile.
            #expect(!paces.isEmpty && paces.allSatisfy { abs($0 - 300 * Self.mile / 1_000) <= 2 },
                    "pace per mile: \(paces.filter { abs($0 - 300 * Self.mile / 1_000) > 2 }.prefix(10)) of \(paces.count)")
            let rows = page.components(separatedBy: "<tr><td>").dropFirst().map { String($0.prefix(while: { $0 != "<" })) }
            #expect(Array(rows.prefix(7)) == ["1", "2", "3", "4", "5", "6", "6.21"], "\(rows)")
            #expect(page.contains("<td>8:03</td><td>8:03 /mi</td>"), "a mile at 5:00 /km takes 8:03")

            let list = try await browser.get("/runs").text
            #expect(list.contains("6.21 mi") && !list.contains("10.00 km"), "\(list)")
            #expect(try await browser.get("/calendar?month=2026-05").text.contains("6.2 mi"))

            let stats = try await browser.get("/stats").text
            #expect(stats.contains("6.21 mi") && stats.contains(#"id="weeks-chart""#) && stats.contains(#"id="months-chart""#), "\(stats)")
            let volume = try Self.volume(stats)
            #expect(volume["unit"] as? String == "mi")
            let weeks = try #require(volume["weekDistance"] as? [Double])
            #expect(weeks.count == StatisticsController.volumeWeeks && weeks.last == 6.2 && weeks.dropLast().allSatisfy { $0 == 0 },
                    "this week's 6.2 mi, the 25 before empty: \(weeks)")
            #expect((volume["monthDistance"] as? [Double])?.count == StatisticsController.volumeMonths)
            // A goal typed in miles is kept in metres and shown in miles again.
            #expect(try await browser.post("/goals", ["distance_km": "20", "period": "week"], formPage: "/stats").status == .seeOther)
            let goal = try #require(try await cloud.store.plans.goals(accountID: account.id).first)
            #expect(abs(goal.distanceM - 20 * Self.mile) < 0.01)
            #expect(try await browser.get("/stats").text.contains("6.21 mi of 20.00 mi (31 %)"))

            // Shoes: typed and shown in miles.
            #expect(try await browser.post("/shoes", ["name": "Road shoes", "start_km": "100", "remind_km": "400"], formPage: "/shoes").status == .seeOther)
            let shoe = try #require(try await cloud.store.shoes.shoes(accountID: account.id).first)
            #expect(abs(shoe.startM - 100 * Self.mile) < 0.01 && abs((shoe.remindM ?? 0) - 400 * Self.mile) < 0.01)
            let shoes = try await browser.get("/shoes").text
            #expect(shoes.contains("<b>100.00 mi</b>") && shoes.contains(#"name="start_km" value="100""#) && shoes.contains("Remind me at, mi"), "\(shoes)")

            // The plan: paces per mile and distances in miles, stored per km and in metres; the form shows them as typed.
            let planRows = [("run", "distance", "3 mi", "pace", "8:00-8:30", "", "")]
            let made = try await browser.post("/plan/sessions", PlanTests.form(name: "Easy miles", date: "2026-05-12", rows: planRows), formPage: "/plan/new")
            #expect(made.status == .seeOther, "\(made.text)")
            let session = try #require(try await cloud.store.plans.planSessions(accountID: account.id, from: "2026-05-01", through: "2026-05-31").first)
            let step = try #require(session.steps.first)
            #expect(abs((step.distance_m ?? 0) - 3 * Self.mile) < 0.001)
            #expect(step.pace_s_per_km == [298.3, 316.9], "480 and 510 s a mile, per km to a tenth: \(step.pace_s_per_km ?? [])")
            let form = try await browser.get("/plan/sessions/\(session.id)").text
            #expect(form.contains(#"name="step1_amount" value="3 mi""#) && form.contains(#"name="step1_value" value="8:00-8:30""#), "\(form)")
            #expect(form.contains("Pace /mi"))
            #expect(try await browser.get("/plan?month=2026-05").text.contains("Run 3 mi at 8:00–8:30 /mi"))
            let refused = try await browser.post("/plan/sessions", PlanTests.form(name: "Bad", date: "2026-05-12",
                                                                                  rows: [("run", "distance", "3 mi", "pace", "fast", "", "")]),
                                                 formPage: "/plan/new")
            #expect(refused.status == .badRequest && refused.text.contains("(per mi)"), "\(refused.text)")
        }
    }

    @Test("kilometres stay as they were: an account that never chose reads km, and a shared run's signed-out page too",
          arguments: [Backend.sqlite])
    func kilometres(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, _) = try await RunnerPageTests.runner(cloud, browser)
            let runID = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 3_000))
            let page = try await browser.get("/runs/\(runID)").text
            #expect(page.contains("3.00 km") && page.contains("5:00 /km") && page.contains("<th>km</th>"))
            #expect((try RunnerPageTests.dataBlock(page)["marks"] as? [[Double]])?.map { $0[2] } == [1, 2, 3])
        }
    }

    static func profile(_ cloud: Cloud, _ token: String) async throws -> ProfileSection {
        let response = try await cloud.request(.get, "/v1/device/sync", token: token)
        #expect(response.status == .ok)
        return try #require(try JSONDecoder().decode(DeviceSync.self, from: Data(buffer: response.body)).sections.profile)
    }

    static func volume(_ html: String) throws -> [String: Any] {
        let start = try #require(html.range(of: "<script type=\"application/json\" id=\"volume-data\">"))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        return try #require(try JSONSerialization.jsonObject(with: Data(html[start.upperBound..<end.lowerBound].utf8)) as? [String: Any])
    }
}
