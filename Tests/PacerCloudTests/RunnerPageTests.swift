@testable import CloudModel
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// The runner's pages: the runs list, a run's page and its stored view, statistics with records
/// and goals, the settings they use, and the script files the run page loads.
@Suite("pacer-cloud: runs, run page, statistics and goals", .timeLimit(.minutes(10)))
struct RunnerPageTests {
    /// A straight run north at `paceS` seconds per km, one sample a second, heart rate rising.
    static func run(meters: Double, paceS: Double = 300, startMs: Int64 = Track.start, heartRate: Bool = true) -> [ChunkSample] {
        let count = Int((meters * paceS / 1_000).rounded(.up)) + 1
        return (0..<count).map { i in
            let distance = min(Double(i) * 1_000 / paceS, meters)
            return ChunkSample(timeMs: startMs + Int64(i) * 1_000, lat: 45.5 + distance / 111_000, lon: 9.2, speedMps: 1_000 / paceS,
                               distanceM: distance, moving: true, heartRate: heartRate ? 120 + i % 60 : nil)
        }
    }

    /// Uploads `samples` as a complete run of the device (500 samples a chunk); its id.
    @discardableResult
    static func upload(_ cloud: Cloud, token: String, _ samples: [ChunkSample], id: String = Track.runID()) async throws -> String {
        let chunks = stride(from: 0, to: samples.count, by: 500).map { Array(samples[$0..<min($0 + 500, samples.count)]) }
        for (seq, chunk) in chunks.enumerated() {
            #expect(try await cloud.putChunk(id, seq, Track.chunk(chunk), token: token).status == .created)
        }
        let (first, last) = (samples.first!, samples.last!)
        let summary: [String: Any] = [
            "start_time": WireTime.text(milliseconds: first.timeMs), "end_time": WireTime.text(milliseconds: last.timeMs),
            "distance_m": last.distanceM, "moving_time_s": Double(last.timeMs - first.timeMs) / 1_000,
            "elapsed_time_s": Double(last.timeMs - first.timeMs) / 1_000, "avg_pace_s_per_km": 300.0, "max_speed_mps": 3.4,
            "hr_avg": 150.0, "hr_max": 179, "chunks": chunks.count, "state": "finished"]
        #expect(try await cloud.json(.put, "/v1/runs/\(id)", token: token, summary).status == .created)
        return id
    }

    /// An account with a device, logged in in `browser`; the device's token and the account.
    static func runner(_ cloud: Cloud, _ browser: Browser, email: String = "ann@example.org", device: String = "ann-pacer",
                       timezone: String = "UTC") async throws -> (token: String, account: Account) {
        let account = try await Accounts.create(store: cloud.store, email: email, password: AccountTests.password, displayName: "Ann",
                                                timezone: timezone, confirmed: true, cost: AccountTests.cost)
        let token = try await cloud.addDevice(device)
        #expect(try await cloud.store.devices.assignDevice(name: device, accountID: account.id))
        let login = try await browser.post("/login", ["email": email, "password": AccountTests.password])
        #expect(login.status == .seeOther)
        return (token, account)
    }

    // MARK: the view computed from a track

    @Test("the map's track is simplified to at most 2,000 points, keeping the ends and the corners")
    func simplification() {
        // 20,000 samples along three straight legs: the two corners must survive.
        var samples: [ChunkSample] = []
        for i in 0..<20_000 {
            let (lat, lon): (Double, Double) = i < 8_000 ? (45.5 + Double(i) * 1e-5, 9.2)
                : i < 14_000 ? (45.58, 9.2 + Double(i - 8_000) * 1e-5) : (45.58 - Double(i - 14_000) * 1e-5, 9.26)
            // A little noise, so that the straight legs are not all ties.
            let noise = Double((i * 7_919) % 11) * 1e-7
            samples.append(ChunkSample(timeMs: Int64(i) * 1_000, lat: lat + noise, lon: lon, speedMps: 3, distanceM: Double(i) * 1.1,
                                       moving: true, heartRate: nil))
        }
        let kept = RunView.simplify(samples, keep: RunView.maxTrackPoints)
        #expect(kept.count == RunView.maxTrackPoints)
        #expect(kept.first == 0 && kept.last == 19_999)
        #expect(kept == kept.sorted())
        #expect(kept.contains(8_000) && kept.contains(14_000))
        // Short tracks are kept whole.
        #expect(RunView.simplify(Array(samples.prefix(50)), keep: RunView.maxTrackPoints) == Array(0..<50))
    }

    @Test("splits, best efforts, kilometre marks, zones and charts of a run at a known pace")
    func analysis() throws {
        // 10.5 km: the first 5 km at 5:00/km, the rest at 4:00/km.
        let first = Self.run(meters: 5_000, paceS: 300)
        let second = Self.run(meters: 5_500, paceS: 240, startMs: first.last!.timeMs + 1_000).map { sample in
            var shifted = sample
            shifted.distanceM += 5_000
            shifted.lat += 5_000 / 111_000
            return shifted
        }
        let view = RunView(samples: first + second)
        #expect(view.samples == first.count + second.count)
        #expect(view.kmMarks.count == 10)
        #expect(view.kmMarks.map { $0[2] } == (1...10).map(Double.init))
        #expect(view.splits.count == 11)
        #expect(abs(view.splits[0].seconds - 300) <= 1 && abs(view.splits[9].seconds - 240) <= 1)
        #expect(abs(view.splits[10].meters - 500) < 1)
        let efforts = Dictionary(uniqueKeysWithValues: view.bestEfforts.map { ($0.name, $0.seconds) })
        #expect(abs(efforts["1 km"]! - 240) <= 1)
        #expect(abs(efforts["5 km"]! - 1_200) <= 2)
        // The last 10 km: 5.5 km at 4:00/km and 4.5 km at 5:00/km, and the second between the legs.
        #expect(abs(efforts["10 km"]! - 2_671) <= 1)
        #expect(efforts["Half marathon"] == nil)
        // Charts: downsampled, not cut: the whole distance, at most 500 points.
        #expect(view.chartKm.count <= RunView.maxChartPoints && view.chartKm.count > 400)
        #expect(view.chartKm.last! >= 10.4)
        #expect(abs(view.pace.first!! - 300) <= 2 && abs(view.pace.last!! - 240) <= 2)
        // Time per heart rate adds up to the run's time; zones share it.
        let seconds = view.heartRateSeconds.reduce(0) { $0 + $1[1] }
        #expect(abs(seconds - Double(first.count + second.count - 1)) <= 2)
        let zones = HeartRateZones.seconds(view.heartRateSeconds, maximum: 190)
        #expect(abs(zones.reduce(0, +) - seconds) < 0.001)
        // 120 to 179 bpm against 190: none below 60 % (114), some in each zone above.
        #expect(zones[0] == 0 && zones[1] > 0 && zones[2] > 0 && zones[3] > 0 && zones[4] > 0)
    }

    // MARK: the pages

    @Test("the runs list: the account's devices' complete runs, newest first, by date, a page at a time", arguments: Backend.allCases)
    func runsList(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await Self.runner(cloud, browser, timezone: "Europe/Rome")
            let second = try await cloud.addDevice("ann-watch")
            #expect(try await cloud.store.devices.assignDevice(name: "ann-watch", accountID: account.id))
            let bob = try await cloud.addDevice("bob-pacer")
            let day: Int64 = 86_400_000
            var ids: [String] = []
            for index in 0..<25 {
                ids.append(try await Self.upload(cloud, token: index % 2 == 0 ? token : second,
                                                 Self.run(meters: 1_200, startMs: Track.start + Int64(index) * day)))
            }
            let bobs = try await Self.upload(cloud, token: bob, Self.run(meters: 1_200))
            // Incomplete: a summary naming a chunk never sent.
            let incomplete = Track.runID()
            #expect(try await cloud.json(.put, "/v1/runs/\(incomplete)", token: token, Track.summary(chunks: 1)).status == .created)

            let page = try await browser.get("/runs")
            #expect(page.status == .ok)
            let shown = Self.runLinks(page.text)
            #expect(shown == Array(ids.reversed().prefix(20)))
            #expect(!page.text.contains(bobs) && !page.text.contains(incomplete))
            #expect(page.text.contains("href=\"/runs?page=2\""))
            let older = try await browser.get("/runs?page=2")
            #expect(Self.runLinks(older.text) == Array(ids.reversed().dropFirst(20)))
            #expect(!older.text.contains("page=3"))

            // Dates in the account's time zone: run 3 starts at 09:30 in Rome on 13 May.
            let filtered = try await browser.get("/runs?from=2026-05-12&to=2026-05-13")
            #expect(Self.runLinks(filtered.text) == [ids[3], ids[2]])
            // One format on every page: the year only when it is not this year.
            let thisYear = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "Europe/Rome")!, from: Date()).year == 2026
            #expect(filtered.text.contains(thisYear ? "Wed 13 May, 09:30" : "Wed 13 May 2026, 09:30"), "\(filtered.text)")
            let none = try await browser.get("/runs?from=2027-01-01")
            #expect(Self.runLinks(none.text).isEmpty && none.text.contains("No runs between these dates"))

            for (query, field) in [("from=2026-13-01", "From"), ("to=yesterday", "To"), ("from=2026-05-13&to=2026-05-12", "To"),
                                   ("page=0", "Page")] {
                let refused = try await browser.get("/runs?" + query)
                #expect(refused.status == .badRequest, "\(query)")
                #expect(refused.text.contains("\(field):"), "\(query): \(refused.text)")
            }
        }
    }

    static func runLinks(_ html: String) -> [String] {
        html.components(separatedBy: "<li><a href=\"/runs/").dropFirst().map { String($0.prefix(36)) }
    }

    @Test("a run's page: map data within 2,000 points, charts, splits and zones; its view is stored once; another account's run is 404",
          arguments: Backend.allCases)
    func runPage(backend: Backend) async throws {
        var configuration = WebConfig.make()
        configuration.map = MapSettings(tileURL: "https://{s}.tiles.example.org/{z}/{x}/{y}.png", tileAttribution: "Example <tiles>",
                                        assetsDirectory: "/usr/share/javascript")
        try await Cloud.with(backend, configuration: configuration) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await Self.runner(cloud, browser)
            // A half marathon at one sample a second: more samples than the map may have.
            let samples = Self.run(meters: 21_100, paceS: 300)
            let id = try await Self.upload(cloud, token: token, samples)
            #expect(try await cloud.store.runs.runView(device: try #require(try await cloud.store.runs.accountRun(accountID: account.id, runID: id)).deviceID,
                                                  runID: id, source: "x") == nil)

            let page = try await browser.get("/runs/\(id)")
            #expect(page.status == .ok)
            let data = try Self.dataBlock(page.text)
            let track = try #require(data["track"] as? [Double])
            #expect(track.count % 2 == 0 && track.count / 2 <= RunView.maxTrackPoints && track.count / 2 >= 2)
            #expect(Array(track.prefix(2)) == [45.5, 9.2])
            #expect((data["marks"] as? [[Double]])?.count == 21)
            #expect(((data["distance"] as? [Double])?.count ?? 0) <= RunView.maxChartPoints)
            #expect(((data["distance"] as? [Double])?.last ?? 0) >= 21.0)
            for shown in ["21.10 km", "<td>21</td>", "<td>5:00 /km</td>", "Z5", "maximum heart rate of 190 bpm", "(the default",
                          "No laps recorded.", "id=\"downloads\"", "data-attribution=\"Example &lt;tiles&gt;\"",
                          "<script src=\"/assets/pacer/run.js?v="] {
                #expect(page.text.contains(shown), "the run page lacks \(shown)")
            }
            // No inline script: only the data block and files of this server.
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'self';") && policy.contains("img-src 'self' https://*.tiles.example.org;"))
            #expect(!policy.contains("unsafe") && policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"))
            #expect(page.text.components(separatedBy: "<script>").count == 1)

            // Stored once, for this summary: the records of the statistics come from it.
            let run = try #require(try await cloud.store.runs.accountRun(accountID: account.id, runID: id))
            let stored = try #require(try await cloud.store.runs.runView(device: run.deviceID, runID: id,
                                                                    source: RunView.source(summaryJSON: run.summary.json)))
            #expect(stored.contains("\"bestEfforts\""))
            #expect(try await cloud.store.runs.runRecords(accountID: account.id)[id] != nil)
            #expect(try await browser.get("/runs/\(id)").text == page.text)

            // The account's own maximum heart rate moves the zones.
            #expect(try await browser.post("/account/settings", ["timezone": "UTC", "max_hr": "200"], formPage: "/account").status == .seeOther)
            let own = try await browser.get("/runs/\(id)")
            #expect(own.text.contains("maximum heart rate of 200 bpm") && !own.text.contains("(the default"))

            // Another account: 404 like a run that does not exist; a malformed id too.
            let other = Browser(cloud)
            _ = try await Self.runner(cloud, other, email: "bob@example.org", device: "bob-pacer")
            let refused = try await other.get("/runs/\(id)")
            #expect(refused.status == .notFound && !refused.text.contains("run-data"))
            #expect(try await other.get("/runs/\(Track.runID())").status == .notFound)
            #expect(try await browser.get("/runs/not-a-uuid").status == .notFound)

            // Deleting the run deletes its stored view.
            #expect(try await cloud.request(.delete, "/v1/runs/\(id)", token: token).status == .noContent)
            #expect(try await cloud.store.runs.runRecords(accountID: account.id).isEmpty)
        }
    }

    static func dataBlock(_ html: String) throws -> [String: Any] {
        let start = try #require(html.range(of: "<script type=\"application/json\" id=\"run-data\">"))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let json = String(html[start.upperBound..<end.lowerBound])
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    @Test("no tiles: the page loads no tile server and allows no image host but its own")
    func noTiles() async throws {
        var configuration = WebConfig.make()
        configuration.map.tileURL = nil
        try await Cloud.with(.sqlite, configuration: configuration) { cloud in
            let browser = Browser(cloud)
            let (token, _) = try await Self.runner(cloud, browser)
            let id = try await Self.upload(cloud, token: token, Self.run(meters: 1_500, heartRate: false))
            let page = try await browser.get("/runs/\(id)")
            #expect(page.status == .ok && page.text.contains("data-tiles=\"\""))
            #expect(page.text.contains("No heart-rate readings in this run:") && !page.text.contains(#"id="hr-chart""#))
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.contains("img-src 'self';"))
        }
        #expect(MapSettings.problem(tileURL: "ftp://tiles.example.org/{z}/{x}/{y}.png") != nil)
        #expect(MapSettings.problem(tileURL: "https://tiles.example.org/{z}/{x}.png")?.contains("{y}") == true)
        #expect(MapSettings.problem(tileURL: MapSettings.defaultTileURL) == nil)
    }

    @Test("statistics: totals per week, month and year in the account's time zone, and records", arguments: Backend.allCases)
    func statistics(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, _) = try await Self.runner(cloud, browser, timezone: "Europe/Rome")
            // Sunday 10 May 2026 at 23:30 UTC is Monday 11 May in Rome: the week of 11 May.
            let late: Int64 = 1_778_455_800_000
            try await Self.upload(cloud, token: token, Self.run(meters: 5_000, paceS: 300, startMs: late))
            try await Self.upload(cloud, token: token, Self.run(meters: 1_000, paceS: 270, startMs: Track.start))
            let page = try await browser.get("/stats")
            #expect(page.status == .ok)
            let text = page.text
            #expect(text.contains("<td>Week of 11 May 2026</td><td>5.00 km</td><td>25:00</td><td>1</td>"), "\(text)")
            #expect(text.contains("<td>Week of 4 May 2026</td><td>1.00 km</td><td>4:30</td><td>1</td>"))
            #expect(text.contains("<td>May 2026</td><td>6.00 km</td><td>29:30</td><td>2</td>"))
            #expect(text.contains("<td>2026</td><td>6.00 km</td><td>29:30</td><td>2</td>"))
            #expect(text.contains("<td>1 km</td><td>4:30</td><td>4:30 /km</td>"))
            #expect(text.contains("<td>5 km</td><td>25:00</td><td>5:00 /km</td>"))
            #expect(!text.contains("<td>10 km</td>"))
        }
    }

    @Test("goals: added, changed and deleted with the session's CSRF token, with their progress; bad fields named",
          arguments: Backend.allCases)
    func goals(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: clock.now) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await Self.runner(cloud, browser)
            try await Self.upload(cloud, token: token, Self.run(meters: 5_000, startMs: clock.now()))
            #expect(try await browser.post("/goals", ["distance_km": "20", "period": "week"], formPage: "/stats").status == .seeOther)
            #expect(try await browser.post("/goals", ["distance_km": "100", "period": "month"], formPage: "/stats").status == .seeOther)
            let goals = try await cloud.store.plans.goals(accountID: account.id)
            #expect(goals.map(\.period) == [.week, .month] && goals.map(\.distanceM) == [20_000, 100_000])
            let page = try await browser.get("/stats")
            #expect(page.text.contains("<b>This week</b>: 5.00 km of 20.00 km (25 %)"))
            #expect(page.text.contains("<b>This month</b>: 5.00 km of 100.00 km (5 %)"))

            let week = goals[0].id
            #expect(try await browser.post("/goals/\(week)", ["distance_km": "10", "period": "week"], formPage: "/stats").status == .seeOther)
            #expect(try await browser.get("/stats").text.contains("<b>This week</b>: 5.00 km of 10.00 km (50 %)"))
            // A week later the week's progress starts again (in a new session: the old one has expired).
            clock.advance(.seconds(7 * 86_400))
            #expect(try await browser.post("/login", ["email": account.email, "password": AccountTests.password]).status == .seeOther)
            #expect(try await browser.get("/stats").text.contains("<b>This week</b>: 0.00 km of 10.00 km (0 %)"))

            for (fields, named) in [(["distance_km": "lots", "period": "week"], "Distance:"), (["distance_km": "0", "period": "week"], "Distance:"),
                                    (["distance_km": "5", "period": "day"], "Period:")] {
                let refused = try await browser.post("/goals", fields, formPage: "/stats")
                #expect(refused.status == .badRequest && refused.text.contains(named), "\(fields): \(refused.status)")
            }
            // Without the session's token nothing changes.
            let forged = try await browser.post("/goals/\(week)/delete", [:], csrf: "forged")
            #expect(forged.status == .forbidden)
            #expect(try await cloud.store.plans.goals(accountID: account.id).count == 2)
            #expect(try await browser.post("/goals/\(week)/delete", [:], formPage: "/stats").status == .seeOther)
            #expect(try await cloud.store.plans.goals(accountID: account.id).map(\.period) == [.month])
            #expect(try await browser.post("/goals/\(week)/delete", [:], formPage: "/stats").status == .notFound)
            #expect(try await browser.post("/goals/\(Track.runID())", ["distance_km": "3", "period": "week"], formPage: "/stats").status == .notFound)
            #expect(try await cloud.store.plans.goals(accountID: account.id).count == 1)

            // Settings: a bad time zone or heart rate is refused, naming it.
            for (fields, named) in [(["timezone": "Mars/Olympus", "max_hr": ""], "Time zone:"), (["timezone": "UTC", "max_hr": "300"], "Maximum heart rate:")] {
                let refused = try await browser.post("/account/settings", fields, formPage: "/account")
                #expect(refused.status == .badRequest && refused.text.contains(named))
            }
            #expect(try await cloud.store.accounts.account(id: account.id)?.maxHeartRate == nil)
        }
    }

    @Test("the script files: only the listed ones, with their type, a day's caching and ETag revalidation")
    func assets() async throws {
        try await Cloud.with(.sqlite, configuration: WebConfig.make()) { cloud in
            for (path, type) in [("/assets/leaflet/leaflet.js", "text/javascript"), ("/assets/leaflet/leaflet.css", "text/css"),
                                 ("/assets/chart.js/chart.min.js", "text/javascript"), ("/assets/pacer/run.js", "text/javascript"),
                                 ("/assets/pacer/dashboard.js", "text/javascript")] {
                let file = try await cloud.request(.get, path, token: nil)
                #expect(file.status == .ok, "\(path)")
                #expect(file.headers[.contentType]?.hasPrefix(type) == true && file.headers[.cacheControl] == Assets.cacheControl)
                #expect(file.headers[.init("X-Content-Type-Options")!] == "nosniff")
                let etag = try #require(file.headers[.eTag])
                let again = try await cloud.request(.get, path, token: nil, headers: [.ifNoneMatch: etag])
                #expect(again.status == .notModified && again.body.readableBytes == 0)
            }
            #expect(try await cloud.request(.get, "/assets/pacer/run.js", token: nil).text.contains("dataset.complete"))
            #expect(try await cloud.request(.get, "/assets/pacer/dashboard.js", token: nil).text.contains("new EventSource(\"/watch/events\")"))
            // The dashboard's files come from here too: its old place is gone.
            #expect(try await cloud.request(.get, "/watch/assets/dashboard.js", token: nil).status == .notFound)
            for path in ["/assets/leaflet/leaflet.esm.js", "/assets/leaflet/..%2F..%2F..%2Fetc%2Fpasswd", "/assets/..%2Fetc/passwd"] {
                #expect(try await cloud.request(.get, path, token: nil).status == .notFound, "\(path)")
            }
        }
    }
}
