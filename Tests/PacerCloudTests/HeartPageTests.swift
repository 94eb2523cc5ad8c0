@testable import CloudModel
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// Each run's figures (stored once, read by the statistics and heart-rate pages), the
/// heartbeat's days of heart rate outside runs, and the heart-rate page that shows them.
@Suite("pacer-cloud: run figures, daily heart rate and the heart-rate page", .timeLimit(.minutes(10)))
struct HeartPageTests {
    static func heartbeat(time: String = "2026-05-10T07:30:00.000Z", reading: (bpm: Int, time: String)? = nil, maxHR: Int? = nil,
                          days: [[String: Any]] = []) -> [String: Any] {
        var body: [String: Any] = ["time": time, "state": "idle", "sos_monitoring": false]
        if let reading { body["heart_rate"] = ["bpm": reading.bpm, "time": reading.time] }
        if let maxHR { body["max_hr_bpm"] = maxHR }
        if !days.isEmpty { body["hr_daily"] = days }
        return body
    }

    /// Waits up to 30 s for `condition` (figures are computed after an upload's answer).
    static func eventually(_ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("not within 30 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("figures: stored after upload, read as totals, records and heart rate; a new summary or a deletion takes them away",
          arguments: Backend.allCases)
    func figuresStore(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (token, account) = try await RunnerPageTests.runner(cloud, browser)
            let fast = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 1_000, paceS: 240, startMs: Track.start))
            let slow = try await RunnerPageTests.upload(cloud, token: token,
                                                        RunnerPageTests.run(meters: 5_000, paceS: 300, startMs: Track.start + 86_400_000))
            // Another account's run is never among this one's figures.
            let other = Browser(cloud)
            let (otherToken, _) = try await RunnerPageTests.runner(cloud, other, email: "bob@example.org", device: "bob-pacer")
            try await RunnerPageTests.upload(cloud, token: otherToken, RunnerPageTests.run(meters: 1_000, paceS: 200))

            // Computed after each upload's answer.
            try await Self.eventually { try await cloud.store.health.runsWithoutFigures(accountID: account.id, limit: 10).isEmpty }
            let totals = try await cloud.store.health.runTotals(accountID: account.id)
            #expect(totals.map(\.runID) == [slow, fast])
            #expect(totals.map(\.distanceM) == [5_000, 1_000])
            let records = try await cloud.store.health.records(accountID: account.id)
            #expect(Set(records.map(\.name)) == ["1 km", "5 km"])
            #expect(records.first { $0.name == "1 km" }?.runID == fast && records.first { $0.name == "1 km" }?.seconds == 240)
            let heart = try await cloud.store.health.runHeartRates(accountID: account.id, fromMs: Track.start + 1, limit: 10)
            #expect(heart.map(\.runID) == [slow] && heart.first?.hrMax == 179)
            let seconds = try JSONDecoder().decode([[Double]].self, from: Data(try #require(heart.first).heartRateSeconds.utf8))
            #expect(abs(seconds.reduce(0) { $0 + $1[1] } - 1_500) <= 1, "every second of the run at some heart rate")

            // A new summary naming a chunk not there yet: the figures go with the old summary, and
            // the run, incomplete, is counted nowhere until it is complete again.
            let run = try #require(try await cloud.store.runs.accountRun(accountID: account.id, runID: fast))
            let original = try JSONSerialization.jsonObject(with: Data(run.summary.json.utf8)) as! [String: Any]
            var longer = original
            longer["chunks"] = (original["chunks"] as! Int) + 1
            #expect(try await cloud.json(.put, "/v1/runs/\(fast)", token: token, longer).status == .ok)
            #expect(try await cloud.store.health.runTotals(accountID: account.id).map(\.runID) == [slow])
            #expect(try await cloud.store.health.records(accountID: account.id).allSatisfy { $0.runID == slow })
            #expect(try await cloud.store.health.runsWithoutFigures(accountID: account.id, limit: 10).isEmpty)
            // Figures computed from a summary that is not the run's are not stored.
            let stale = RunFigures(deviceID: run.deviceID, runID: fast, summaryJSON: #"{"state":"an older summary"}"#, startMs: run.summary.startMs, distanceM: 1,
                                   movingS: 1, heartRateSeconds: "[]", bestEfforts: [.init(name: "1 km", seconds: 1)])
            try await cloud.store.health.putRunFigures(stale)
            #expect(try await cloud.store.health.runTotals(accountID: account.id).map(\.runID) == [slow])
            // Complete again: counted again, at the summary's upload.
            #expect(try await cloud.json(.put, "/v1/runs/\(fast)", token: token, original).status == .ok)
            try await Self.eventually { try await cloud.store.health.runTotals(accountID: account.id).map(\.runID) == [slow, fast] }
            // Nor do they replace the current summary's.
            try await cloud.store.health.putRunFigures(stale)
            #expect(try await cloud.store.health.records(accountID: account.id).first { $0.name == "1 km" }?.seconds == 240)

            #expect(try await cloud.request(.delete, "/v1/runs/\(slow)", token: token).status == .noContent)
            #expect(try await cloud.store.health.runTotals(accountID: account.id).allSatisfy { $0.runID != slow })
            #expect(try await cloud.store.health.records(accountID: account.id).allSatisfy { $0.runID != slow })
        }
    }

    @Test("daily heart rate: upserted per device and date in the heartbeat's transaction; an account's days only; gone with the device",
          arguments: Backend.allCases)
    func dailyStore(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (_, account) = try await RunnerPageTests.runner(cloud, browser)
            _ = try await cloud.addDevice("ann-watch")
            #expect(try await cloud.store.devices.assignDevice(name: "ann-watch", accountID: account.id))
            _ = try await cloud.addDevice("stranger")
            let devices = try await cloud.store.devices.devices()
            func id(_ name: String) throws -> String { try #require(devices.first { $0.name == name }).id }
            let day = { (date: String, count: Int, low: Int?, resting: Int?) in
                DeviceState.DailyHeartRate(date: date, count: count, min_bpm: low, resting_bpm: resting)
            }
            try await cloud.store.health.putDeviceState(device: try id("ann-pacer"), receivedMs: 1, json: "{}",
                                                 daily: [day("2026-05-09", 100, 50, nil), day("2026-05-10", 500, 47, 52)])
            // The same date again: replaced, not added.
            try await cloud.store.health.putDeviceState(device: try id("ann-pacer"), receivedMs: 2, json: "{}", daily: [day("2026-05-10", 900, 46, 51)])
            // Another of the account's devices on the same date, with fewer readings: the first device's summary stands.
            try await cloud.store.health.putDeviceState(device: try id("ann-watch"), receivedMs: 3, json: "{}", daily: [day("2026-05-10", 20, 40, nil)])
            try await cloud.store.health.putDeviceState(device: try id("stranger"), receivedMs: 4, json: "{}", daily: [day("2026-05-11", 999, 30, 31)])

            let days = try await cloud.store.health.heartRateDays(accountID: account.id, fromDate: "2026-05-01")
            #expect(days == [HeartRateDay(date: "2026-05-10", count: 900, minBpm: 46, restingBpm: 51),
                             HeartRateDay(date: "2026-05-09", count: 100, minBpm: 50, restingBpm: nil)])
            #expect(try await cloud.store.health.heartRateDays(accountID: account.id, fromDate: "2026-05-10").map(\.date) == ["2026-05-10"])

            _ = try #require(try await cloud.store.removeDevice(name: "ann-pacer"))
            #expect(try await cloud.store.health.heartRateDays(accountID: account.id, fromDate: "2026-05-01")
                == [HeartRateDay(date: "2026-05-10", count: 20, minBpm: 40, restingBpm: nil)])
            _ = try #require(try await cloud.store.deleteAccount(id: account.id))
            #expect(try await cloud.store.health.heartRateDays(accountID: account.id, fromDate: "2026-05-01").isEmpty)
        }
    }

    /// Tuesday 12 May 2026, 10:00 UTC (noon in Rome).
    static let now: Int64 = 1_778_580_000_000

    @Test("the heart-rate page: per-run average and maximum, zones per week from the device's maximum, the heartbeat's resting value and newest reading",
          arguments: Backend.allCases)
    func heartPage(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: { Self.now }) { cloud in
            let browser = Browser(cloud)
            let (token, _) = try await RunnerPageTests.runner(cloud, browser, timezone: "Europe/Rome")
            // 5 km on Sunday 10 May and 1 km this Tuesday; heart rate 120…179, each bpm as long as the next.
            try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 5_000, paceS: 300, startMs: Track.start))
            try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 1_000, paceS: 300, startMs: Self.now - 3_600_000))
            let beat = Self.heartbeat(time: WireTime.text(milliseconds: Self.now), reading: (62, WireTime.text(milliseconds: Self.now - 180_000)),
                                      maxHR: 185, days: [["date": "2026-05-11", "count": 900, "min_bpm": 46, "resting_bpm": 51],
                                                         ["date": "2026-05-12", "count": 300, "min_bpm": 49, "resting_bpm": 53]])
            #expect(try await cloud.json(.put, "/v1/device/state", token: token, beat).status == .ok)

            let page = try await browser.get("/heart")
            #expect(page.status == .ok)
            let text = page.text
            for shown in ["<dd id=\"newest\">62 bpm, 3 min ago</dd>", "<dd id=\"resting\">53 bpm today</dd>",
                          "<tr><td>Today</td><td>53</td><td>49</td><td>300</td></tr>", "<tr><td>11 May</td><td>51</td><td>46</td><td>900</td></tr>",
                          // Zones from the device's 185 bpm: Z2 111–129, Z3 130–147, Z4 148–166, Z5 ≥ 167.
                          "<tr><td>This week</td><td>0:00</td><td>0:50</td><td>1:30</td><td>1:35</td><td>1:05</td></tr>",
                          "<tr><td>4 May</td><td>0:00</td><td>4:10</td><td>7:30</td><td>7:55</td><td>5:25</td></tr>",
                          "Z5 ≥ 167", "from a maximum of 185 bpm", "(your device's [profile]", "<a href=\"/heart\" aria-current=\"page\">Health</a>",
                          "<script src=\"/assets/pacer/heart.js?v=", "(Europe/Rome)"] {
                #expect(text.contains(shown), "the heart-rate page lacks \(shown)")
            }
            #expect(!text.contains("still being counted"))
            let block = try #require(text.components(separatedBy: "<script type=\"application/json\" id=\"heart-data\">").last?
                .components(separatedBy: "</script>").first)
            let data = try #require(try JSONSerialization.jsonObject(with: Data(block.utf8)) as? [String: Any])
            #expect(data["labels"] as? [String] == ["10 May", "12 May"])
            #expect(data["average"] as? [Double] == [150, 150] && data["maximum"] as? [Int] == [179, 179])
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'self';") && !policy.contains("unsafe") && page.text.components(separatedBy: "<script>").count == 1)

            // The account's own maximum comes first.
            #expect(try await browser.post("/account/settings", ["timezone": "Europe/Rome", "max_hr": "200"], formPage: "/account").status == .seeOther)
            let own = try await browser.get("/heart").text
            #expect(own.contains("from a maximum of 200 bpm") && !own.contains("[profile]"))

            // Signed out: the way to log in, nothing else.
            let signedOut = try await Browser(cloud).get("/heart")
            #expect(signedOut.status == .unauthorized && !signedOut.text.contains("62 bpm") && !signedOut.text.contains("heart-data"))
            // Another account sees none of it.
            let other = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, other, email: "bob@example.org", device: "bob-pacer")
            let theirs = try await other.get("/heart")
            #expect(theirs.status == .ok)
            for hidden in ["62 bpm", "53 bpm", "4 May", "10 May", "11 May"] { #expect(!theirs.text.contains(hidden), "\(hidden) shown to another account") }
            #expect(theirs.text.contains("none yet") && theirs.text.contains("from a maximum of 190 bpm (the"))
        }
    }

    @Test("runs stored before figures are counted by the pages a few at a time, and the statistics come out the same",
          arguments: Backend.allCases)
    func boundedBackfill(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let browser = Browser(cloud)
            let (_, account) = try await RunnerPageTests.runner(cloud, browser)
            let device = try #require(try await cloud.store.devices.devices(accountID: account.id).first).id
            // Stored as an older pacer-cloud stored them: straight into the store, no figures.
            let count = CloudRoutes.figuresPerRequest + 5
            for index in 0..<count {
                let start = Track.start + Int64(index) * 3_600_000
                let samples = RunnerPageTests.run(meters: 1_000, paceS: 300, startMs: start)
                let id = Track.runID()
                _ = try await cloud.store.runs.putChunk(StoredChunk(runID: id, seq: 0, body: Track.chunk(samples), contentEncoding: nil, digest: id,
                                                               samples: samples.count), device: device)
                let summary = RunSummaryBody(start_time: WireTime.text(milliseconds: start), end_time: WireTime.text(milliseconds: start + 300_000),
                                             distance_m: 1_000, moving_time_s: 300, elapsed_time_s: 300, avg_pace_s_per_km: 300,
                                             max_speed_mps: 3.4, hr_avg: 150, hr_max: 179, chunks: 1, state: "finished")
                _ = try await cloud.store.runs.putSummary(StoredSummary(runID: id, json: try JSONInput.canonical(summary), chunks: 1, startMs: start),
                                                     device: device)
            }
            #expect(try await cloud.store.health.runsWithoutFigures(accountID: account.id, limit: 100).count == count)
            let first = try await browser.get("/stats")
            #expect(first.text.contains("still being counted"))
            #expect(first.text.contains("<td>2026</td><td>\(CloudRoutes.figuresPerRequest).00 km</td>"))
            #expect(try await cloud.store.health.runsWithoutFigures(accountID: account.id, limit: 100).count == 5)
            let second = try await browser.get("/stats")
            #expect(!second.text.contains("still being counted"))
            #expect(second.text.contains("<td>2026</td><td>\(count).00 km</td><td>2:05:00</td><td>\(count)</td>"), "\(second.text)")
            #expect(second.text.contains("<td>1 km</td><td>5:00</td><td>5:00 /km</td>"))
        }
    }
}
