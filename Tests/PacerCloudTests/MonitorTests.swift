@testable import CloudModel
@testable import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// Monitoring (issue 22): consent by invitation, the live dashboard over server-sent events
/// (on one instance and across two on one PostgreSQL), monitors' answers and how a device
/// reads them, and alerts forwarded to monitors.
@Suite("pacer-cloud: monitoring (consent, dashboard stream, answers)", .timeLimit(.minutes(10)))
struct MonitorTests {
    /// Streams end this long after they open, so a test reads a whole one.
    static func config(lifetime: Duration = .milliseconds(2500), streams: Int = 8) -> CloudConfiguration {
        var configuration = WebConfig.make()
        configuration.monitoring = MonitorSettings(streamLifetime: lifetime, heartbeat: .milliseconds(400), streamsPerAccount: streams)
        return configuration
    }

    /// A runner ("ann", with device "ann-pacer") and a monitor ("carl"), both signed in, carl
    /// consented through the invitation e-mail.
    struct Pair {
        var runner: Browser
        var monitor: Browser
        var deviceToken: String
        var deviceID: String
    }

    static func pair(_ cloud: Cloud, monitorCloud: Cloud? = nil) async throws -> Pair {
        let runner = Browser(cloud), monitor = Browser(monitorCloud ?? cloud)
        try await runner.signUpAndLogIn("ann@example.org")
        try await monitor.signUpAndLogIn("carl@example.org")
        let token = try await cloud.addDevice("ann-pacer")
        let annID = try #require(try await cloud.store.accounts.account(email: "ann@example.org")?.account.id)
        #expect(try await cloud.store.devices.assignDevice(name: "ann-pacer", accountID: annID))
        let deviceID = try #require(try await cloud.store.devices.devices().first { $0.name == "ann-pacer" }?.id)
        #expect(try await runner.post("/monitoring/invite", ["email": "carl@example.org"], formPage: "/monitoring").status == .ok)
        let invite = try await cloud.mailedToken(to: "carl@example.org", path: "/monitoring/accept")
        let accepted = try await monitor.post("/monitoring/accept", ["token": invite], formPage: "/monitoring/accept?token=\(invite)")
        #expect(accepted.status == .seeOther)
        return Pair(runner: runner, monitor: monitor, deviceToken: token, deviceID: deviceID)
    }

    static func position(lat: Double, run: String? = "3f2b8c1e-0000-4000-8000-000000000001") -> [String: Any] {
        var body: [String: Any] = ["time": WireTime.text(milliseconds: SessionSettings.systemClock()), "lat": lat, "lon": 9.2, "accuracy_m": 6.0, "heart_rate": 152]
        if let run { body["run_id"] = run }
        return body
    }

    /// The pair, and Dora, an account watching nobody; the monitor's stream and Dora's, open.
    static func pairAndStranger(_ cloud: Cloud) async throws -> (Pair, Browser, EventStreamReader, EventStreamReader) {
        let pair = try await Self.pair(cloud)
        let dora = Browser(cloud)
        try await dora.signUpAndLogIn("dora@example.org")
        return (pair, dora, try await Self.stream(cloud, pair.monitor), try await Self.stream(cloud, dora))
    }

    /// The `device` events of a stream's text, decoded (chunk framing around them is skipped).
    static func deviceEvents(_ stream: String) -> [[String: Any]] {
        stream.components(separatedBy: "event: device\ndata: ").dropFirst().compactMap { rest -> [String: Any]? in
            let line = rest.prefix { $0 != "\n" }
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    /// The monitor's stream on `cloud` (a live server), read as it comes.
    static func stream(_ cloud: Cloud, _ browser: Browser) async throws -> EventStreamReader {
        let port = try #require(cloud.client.port)
        let session = try #require(browser.cookies["pacer_session"])
        let reader = try EventStreamReader(port: port, path: "/watch/events", cookie: "pacer_session=\(session)")
        // The stream has subscribed once its head and first comment have come.
        _ = try await offPool { reader.read(until: .now + .seconds(20)) { $0.contains(": connected") } }
        return reader
    }

    /// Waits until the stream has shown `count` device events, or 20 s; the events and when the
    /// last arrived.
    static func events(_ reader: EventStreamReader, count: Int) async throws -> [[String: Any]] {
        let text = try await offPool { reader.read(until: .now + .seconds(20)) { deviceEvents($0).count >= count } }
        return deviceEvents(text)
    }

    @Test("invite, accept once, end from either side; only the invited address accepts", arguments: Backend.allCases)
    func consentLifecycle(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config()) { cloud in
            let pair = try await Self.pair(cloud)
            let (ann, carl) = (pair.runner, pair.monitor)
            #expect(try await ann.get("/monitoring").text.contains("carl@example.org"))
            #expect(try await carl.get("/monitoring").text.contains("ann@example.org"))
            let annID = try #require(try await cloud.store.accounts.account(email: "ann@example.org")?.account.id)
            let carlID = try #require(try await cloud.store.accounts.account(email: "carl@example.org")?.account.id)
            #expect(try await cloud.store.monitoring.isMonitor(carlID, of: annID))
            #expect(try await cloud.store.monitoring.monitorInvites(runnerID: annID, nowMs: SessionSettings.systemClock()).isEmpty)
            // The monitor ends it.
            #expect(try await carl.post("/monitoring/end", ["runner": annID], formPage: "/monitoring").status == .seeOther)
            #expect(try await !cloud.store.monitoring.isMonitor(carlID, of: annID))
            #expect(try await carl.post("/monitoring/end", ["runner": annID], formPage: "/monitoring").status == .notFound)

            // A new invitation: another account cannot take it, and it stays for the invited address.
            #expect(try await ann.post("/monitoring/invite", ["email": "carl@example.org"], formPage: "/monitoring").status == .ok)
            let token = try await cloud.mailedToken(to: "carl@example.org", path: "/monitoring/accept")
            let dora = Browser(cloud)
            try await dora.signUpAndLogIn("dora@example.org")
            let stolen = try await dora.post("/monitoring/accept", ["token": token], formPage: "/monitoring/accept?token=\(token)")
            #expect(stolen.status == .forbidden && stolen.text.contains("Link: "))
            // Signed out, the link says whom to log in as; it shows no accept button.
            let signedOut = try await Browser(cloud).get("/monitoring/accept?token=\(token)")
            #expect(signedOut.status == .ok && signedOut.text.contains("carl@example.org") && !signedOut.text.contains("<button>Accept"))
            #expect(try await carl.post("/monitoring/accept", ["token": token], formPage: "/monitoring/accept?token=\(token)").status == .seeOther)
            let again = try await carl.post("/monitoring/accept", ["token": token], formPage: "/monitoring")
            #expect(again.status == .notFound && again.text.contains("Link: this invitation"))
            #expect(try await cloud.store.monitoring.isMonitor(carlID, of: annID))
            // The runner ends it.
            #expect(try await ann.post("/monitoring/end", ["monitor": carlID], formPage: "/monitoring").status == .seeOther)
            #expect(try await cloud.store.monitoring.monitors(runnerID: annID).isEmpty)
            #expect(try await carl.get("/watch").text.contains("You watch over nobody yet"))
            // Inviting oneself is refused, naming the field.
            let own = try await ann.post("/monitoring/invite", ["email": "ann@example.org"], formPage: "/monitoring")
            #expect(own.status == .badRequest && own.text.contains("email"))
        }
    }

    @Test("the stream brings a new position and a new alert of a watched runner as they arrive; others see nothing",
          arguments: Backend.allCases)
    func streamDeliversPositionAndAlert(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config(lifetime: .seconds(60)), testing: .live) { cloud in
            let (pair, _, carl, other) = try await Self.pairAndStranger(cloud)
            #expect(carl.text.contains("text/event-stream"))
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 45.123456)).status == .ok)
            let first = try await Self.events(carl, count: 1)
            let map = try #require(first.first?["map"] as? [String: Any])
            #expect(map["lat"] as? Double == 45.123456)
            #expect((map["trail"] as? [[[Double]]])?.map(\.count) == [1])
            #expect((first.first?["html"] as? String)?.contains("<dd>152 bpm, ") == true)
            #expect(try await cloud.json(.post, "/v1/alerts", token: pair.deviceToken, AlertTests.message(Track.runID(), 0)).status == .created)
            let events = try await Self.events(carl, count: 2)
            #expect(events.count == 2)
            #expect(events.last?["alert_open"] as? Bool == true)
            #expect((events.last?["html"] as? String)?.contains("215 bpm") == true)
            // Heartbeats keep the stream alive; the other account saw none of Ann's.
            _ = try await offPool { carl.read(until: .now + .seconds(5)) { $0.contains(": keepalive") } }
            #expect(carl.text.contains(": keepalive"))
            #expect(Self.deviceEvents(other.read(until: .now) { _ in true }).isEmpty)
            // The page shows the same, open alerts first, in red.
            let page = try await pair.monitor.get("/watch")
            #expect(page.text.contains("alert-open") && page.text.contains("I am on my way") && page.text.contains("45.123456"))
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            // The same top navigation bar as the other signed-in pages.
            #expect(page.text.contains(#"<nav class="top" aria-label="Pacer">"#) && page.text.contains(#"<a href="/watch" aria-current="page">Watch</a>"#))
        }
    }

    @Test("the device's heartbeat fills the dashboard (state, batteries, SOS, heart rate) and reaches an open stream",
          arguments: Backend.allCases)
    func heartbeatFillsTheDashboard(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config(lifetime: .seconds(60)), testing: .live) { cloud in
            let pair = try await Self.pair(cloud)
            let before = try await pair.monitor.get("/watch")
            #expect(before.text.contains("<dd>unknown</dd>"))
            let carl = try await Self.stream(cloud, pair.monitor)
            let now = SessionSettings.systemClock()
            let heartbeat: [String: Any] = ["time": WireTime.text(milliseconds: now), "state": "recording", "battery_percent": 64,
                                            "strap_battery_percent": 81, "sos_monitoring": true,
                                            "heart_rate": ["bpm": 147, "time": WireTime.text(milliseconds: now - 3_000)]]
            #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, heartbeat).status == .ok)
            let html = try #require(try await Self.events(carl, count: 1).first?["html"] as? String)
            for shown in ["out running", "<dd>64 %</dd>", "<dd>81 %</dd>", "<dd>on</dd>", "<dd>147 bpm, "] {
                #expect(html.contains(shown), "\(shown) not in \(html)")
            }
            #expect(!html.contains("<dd>unknown</dd>"))
        }
    }

    @Test("a heartbeat three minutes old says offline since then")
    func oldHeartbeatIsOffline() {
        let beat = DeviceState(time: "2026-05-10T07:00:00.000Z", state: "recording", battery_percent: 50, strap_battery_percent: nil,
                               sos_monitoring: false, heart_rate: nil, max_hr_bpm: nil, hr_daily: nil)
        #expect(DeviceStateView(heartbeat: beat, receivedMs: 1_000_000, nowMs: 1_000_000 + 180_000).offlineSinceMs == nil)
        #expect(DeviceStateView(heartbeat: beat, receivedMs: 1_000_000, nowMs: 1_000_000 + 180_001).offlineSinceMs == 1_000_000)
    }

    static func heartbeat(_ state: String = "recording", private inPrivatePlace: Bool? = nil) -> [String: Any] {
        var body: [String: Any] = ["time": WireTime.text(milliseconds: SessionSettings.systemClock()), "state": state, "sos_monitoring": true]
        if let inPrivatePlace { body["in_private_place"] = inPrivatePlace }
        return body
    }

    @Test("in a private place the dashboard shows no position, map or trail, page and stream alike, and the last one is forgotten",
          arguments: Backend.allCases)
    func privatePlaceHidesThePosition(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config(lifetime: .seconds(60)), testing: .live) { cloud in
            let pair = try await Self.pair(cloud)
            #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, Self.heartbeat(private: false)).status == .ok)
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 45.470123)).status == .ok)
            #expect(try await pair.monitor.get("/watch").text.contains("45.470123"))
            let carl = try await Self.stream(cloud, pair.monitor)
            #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, Self.heartbeat(private: true)).status == .ok)
            let event = try #require(try await Self.events(carl, count: 1).last)
            let html = try #require(event["html"] as? String)
            #expect(html.contains("in a private place") && !html.contains("45.47") && !html.contains("Last position"), "\(html)")
            #expect(event["map"] == nil || event["map"] is NSNull, "\(event)")
            let page = try await pair.monitor.get("/watch").text
            #expect(page.contains("in a private place") && !page.contains("45.47"))
            // Forgotten, not only hidden: nothing can serve it any more.
            #expect(try await cloud.store.alerts.position(device: pair.deviceID) == nil)
            // Out of the zone, the next position shows again.
            #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, Self.heartbeat(private: false)).status == .ok)
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 45.480456)).status == .ok)
            let shown = try await pair.monitor.get("/watch").text
            #expect(shown.contains("45.480456") && !shown.contains("in a private place"))
        }
    }

    @Test("an open alert always shows the position, in a private place too; a position from there never joins the trail",
          arguments: Backend.allCases)
    func alertShowsPositionInPrivatePlace(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config()) { cloud in
            let pair = try await Self.pair(cloud)
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 45.470123)).status == .ok)
            #expect(try await cloud.json(.post, "/v1/alerts", token: pair.deviceToken, AlertTests.message(Track.runID(), 0)).status == .created)
            #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, Self.heartbeat(private: true)).status == .ok)
            // Kept while the alert is open, and shown.
            #expect(try await cloud.store.alerts.position(device: pair.deviceID) != nil)
            let page = try await pair.monitor.get("/watch").text
            #expect(!page.contains("in a private place") && page.contains("Last position: 45.470123"), "\(page)")
            // "Where are you?" answered from inside the zone: shown, but not on the trail.
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 45.490789)).status == .ok)
            #expect(try await pair.monitor.get("/watch").text.contains("45.490789"))
            let trail = try await cloud.store.monitoring.trail(device: pair.deviceID, runID: "3f2b8c1e-0000-4000-8000-000000000001", limit: 100)
            #expect(trail.filter { !$0.isBreak }.map(\.lat) == [45.470123])
        }
    }

    @Test("the trail breaks where the runner entered a private place, and is forgotten when the run ends", arguments: Backend.allCases)
    func trailBreaksAndClears(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config(lifetime: .seconds(60)), testing: .live) { cloud in
            let pair = try await Self.pair(cloud)
            func put(_ body: [String: Any], _ path: String) async throws {
                #expect(try await cloud.json(.put, path, token: pair.deviceToken, body).status == .ok)
                // Positions a few milliseconds apart must not share one time.
                try await Task.sleep(for: .milliseconds(5))
            }
            try await put(Self.heartbeat(private: false), "/v1/device/state")
            for lat in [45.1, 45.2] { try await put(Self.position(lat: lat), "/v1/position") }
            try await put(Self.heartbeat(private: true), "/v1/device/state")
            try await put(Self.heartbeat(private: true), "/v1/device/state")
            try await put(Self.heartbeat(private: false), "/v1/device/state")
            let carl = try await Self.stream(cloud, pair.monitor)
            for lat in [45.3, 45.4] { try await put(Self.position(lat: lat), "/v1/position") }
            let map = try #require(try await Self.events(carl, count: 2).last?["map"] as? [String: Any])
            let trail = try #require(map["trail"] as? [[[Double]]])
            #expect(trail.map { $0.map { $0[0] } } == [[45.1, 45.2], [45.3, 45.4]], "\(trail)")
            // The run ends: the trail goes, on the map and in the store.
            try await put(Self.heartbeat("idle"), "/v1/device/state")
            let ended = try #require(try await Self.events(carl, count: 3).last?["map"] as? [String: Any])
            #expect((ended["trail"] as? [[[Double]]])?.isEmpty == true, "\(ended)")
            #expect(try await cloud.store.monitoring.trail(device: pair.deviceID, runID: "3f2b8c1e-0000-4000-8000-000000000001", limit: 100).isEmpty)
        }
    }

    @Test("trail segments: split at breaks, empty pieces dropped")
    func trailSegments() {
        let point = { (lat: Double) in TrailPoint(timeMs: Int64(lat), lat: lat, lon: 9) }
        let gap = TrailPoint(timeMs: 0, lat: 0, lon: 0, isBreak: true)
        #expect(TrailPoint.segments([]).isEmpty)
        #expect(TrailPoint.segments([gap, point(1), point(2), gap, gap, point(3), gap]) == [[[1, 9], [2, 9]], [[3, 9]]])
    }

    @Test("offline since: the time on the monitor's clock, in their time zone; the state line's other states", arguments: Backend.allCases)
    func stateLine(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config()) { cloud in
            let pair = try await Self.pair(cloud)
            let carlID = try #require(try await cloud.store.accounts.account(email: "carl@example.org")?.account.id)
            try await cloud.store.accounts.setAccountSettings(id: carlID, timezone: "Asia/Kolkata", maxHeartRate: nil)
            for (state, shown) in [("idle", "idle"), ("paused", "run paused"), ("recording", "out running")] {
                #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, Self.heartbeat(state)).status == .ok)
                #expect(try await pair.monitor.get("/watch").text.contains("<p class=\"state\">\(shown)</p>"))
            }
            // Five minutes without a heartbeat (three missed): offline since it came, 05:30 ahead of UTC.
            let receivedMs = SessionSettings.systemClock() - 300_000
            let json = String(decoding: try JSONSerialization.data(withJSONObject: Self.heartbeat()), as: UTF8.self)
            try await cloud.store.health.putDeviceState(device: pair.deviceID, receivedMs: receivedMs, json: json)
            let formatter = DateFormatter()
            formatter.timeZone = TimeZone(identifier: "Asia/Kolkata")
            formatter.dateFormat = Calendar.current.dateComponents(in: formatter.timeZone, from: Date()).day
                == Calendar.current.dateComponents(in: formatter.timeZone, from: Date(timeIntervalSince1970: Double(receivedMs) / 1000)).day
                ? "HH:mm" : "d MMM, HH:mm"
            let expected = "offline since " + formatter.string(from: Date(timeIntervalSince1970: Double(receivedMs) / 1000))
            let page = try await pair.monitor.get("/watch").text
            #expect(page.contains("<p class=\"state\">\(expected)</p>"), "\(expected) not in the page")
        }
    }

    @Test("no one but a consented monitor gets a runner's trail or private state: not another account, not a monitor whose consent ended",
          arguments: Backend.allCases)
    func trailAndPrivacyOnlyToConsentedMonitors(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config(lifetime: .seconds(60)), testing: .live) { cloud in
            let (pair, dora, carl, other) = try await Self.pairAndStranger(cloud)
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 45.1)).status == .ok)
            _ = try await Self.events(carl, count: 1)
            // Carl's consent ends: his stream hears so, and nothing of Ann's after it.
            #expect(try await pair.runner.post("/monitoring/end", ["monitor": try #require(try await cloud.store.accounts.account(email: "carl@example.org")?.account.id)],
                                               formPage: "/monitoring").status == .seeOther)
            _ = try await offPool { carl.read(until: .now + .seconds(20)) { $0.contains("event: consent") } }
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 45.2)).status == .ok)
            #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, Self.heartbeat(private: true)).status == .ok)
            #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, Self.heartbeat(private: false)).status == .ok)
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 45.3)).status == .ok)
            // Give the hub time to deliver what it would.
            try await Task.sleep(for: .milliseconds(500))
            #expect(Self.deviceEvents(carl.read(until: .now) { _ in true }).count == 1)
            #expect(Self.deviceEvents(other.read(until: .now) { _ in true }).isEmpty)
            for browser in [pair.monitor, dora] {
                let page = try await browser.get("/watch").text
                #expect(!page.contains(pair.deviceID) && !page.contains("private place") && !page.contains("45.3"), "\(page)")
            }
        }
    }

    @Test("the dashboard's map tiles come from the configured tile server, with the origin as referrer; none configured, none allowed")
    func dashboardTiles() {
        let tiles = MapSettings(tileURL: "https://{s}.tiles.example.org/{z}/{x}/{y}.png", tileAttribution: "<b>Example</b>", assetsDirectory: "/x")
        let page = MonitorPage.dashboardResponse(cards: [], csrf: "c", map: tiles)
        #expect(page.headers[.contentSecurityPolicy]?.contains("img-src 'self' data: https://*.tiles.example.org;") == true)
        #expect(page.headers[.init("Referrer-Policy")!] == "strict-origin")
        let none = MonitorPage.dashboardResponse(cards: [], csrf: "c", map: MapSettings(tileURL: nil, tileAttribution: "", assetsDirectory: "/x"))
        #expect(none.headers[.contentSecurityPolicy]?.contains("img-src 'self' data:;") == true)
    }

    @Test("ages: just now, seconds, minutes, hours (and minutes up to 6 h), and days past two days")
    func ages() {
        #expect(AlertPage.age(89_999) == "89 s ago")
        #expect(AlertPage.age(90 * 60_000 - 1) == "89 min ago")
        // One format with every alert's (AlertClock): hours and minutes up to 6 h, then hours.
        #expect(AlertPage.age(5 * 3_600_000 + 59 * 60_000) == "5 h 59 min ago")
        #expect(AlertPage.age(47 * 3_600_000 + 59 * 60_000) == "47 h ago")
        #expect(AlertPage.age(48 * 3_600_000) == "2 days ago")
        #expect(AlertPage.age(200 * 86_400_000 + 5_000) == "200 days ago")
    }

    @Test("an account holds at most its cap of open streams")
    func streamCap() async throws {
        try await Cloud.with(.sqlite, configuration: Self.config(lifetime: .milliseconds(1500), streams: 1)) { cloud in
            let pair = try await Self.pair(cloud)
            async let first = pair.monitor.get("/watch/events")
            // Another while one is open is refused. On a loaded machine the first may not be open
            // yet: a second that got in instead held the place for its lifetime, so ask again.
            var refused = false
            for _ in 0..<10 where !refused {
                try await Task.sleep(for: .milliseconds(400))
                refused = try await pair.monitor.get("/watch/events").status == .tooManyRequests
            }
            #expect(refused)
            #expect(try await first.status == .ok)
            // Closed, it frees its place.
            #expect(try await pair.monitor.get("/watch/events").status == .ok)
        }
    }

    @Test("answers: on my way and a cleaned text, never over 100 characters, only from a consented monitor; the device reads them",
          arguments: Backend.allCases)
    func answers(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config()) { cloud in
            let pair = try await Self.pair(cloud)
            let alertID = Track.runID()
            let created = try await cloud.json(.post, "/v1/alerts", token: pair.deviceToken, AlertTests.message(alertID, 0))
            let pagePath = "/a/" + ((created.object["page"] as? String)?.split(separator: "/").last.map(String.init) ?? "")
            let answerPath = "/watch/alerts/\(pair.deviceID)/\(alertID)/answer"
            // The alert's page offers no way to answer.
            #expect(try await cloud.request(.get, pagePath, token: nil).text.contains("<form") == false)

            let tooLong = try await pair.monitor.post(answerPath, ["kind": "text", "text": String(repeating: "a", count: 101)], formPage: "/watch")
            #expect(tooLong.status == .badRequest && tooLong.text.contains("Message: at most 100 characters"))
            let empty = try await pair.monitor.post(answerPath, ["kind": "text", "text": " <b></b> \u{7}"], formPage: "/watch")
            #expect(empty.status == .badRequest && empty.text.contains("text is missing"))
            #expect(try await pair.monitor.post(answerPath, ["kind": "on_my_way"], formPage: "/watch").status == .seeOther)
            let text = try await pair.monitor.post(answerPath, ["kind": "text", "text": "  <i>Stay</i>   where\nyou are\u{1}  "], formPage: "/watch")
            #expect(text.status == .seeOther)
            #expect(try await pair.monitor.post(answerPath, ["kind": "text", "text": String(repeating: "b", count: 100)],
                                                formPage: "/watch").status == .seeOther)
            // The runner is no monitor of themself, and a stranger learns nothing.
            #expect(try await pair.runner.post(answerPath, ["kind": "on_my_way"], formPage: "/monitoring").status == .notFound)

            let reply = try await cloud.request(.get, "/v1/device/answers?after=0", token: pair.deviceToken)
            let decoded = try JSONDecoder().decode(AlertAnswersReply.self, from: Data(buffer: reply.body))
            #expect(decoded.answers.map(\.kind) == ["on_my_way", "text", "text"])
            #expect(decoded.answers[1].text == "Stay where you are")
            #expect(decoded.answers.allSatisfy { $0.from == "Runner" && $0.alert_id == alertID })
            #expect(decoded.last_id == decoded.answers.last?.id)
            let none = try await cloud.request(.get, "/v1/device/answers?after=\(decoded.last_id)", token: pair.deviceToken)
            #expect(none.object["answers"] as? [Any] != nil && (none.object["answers"] as? [Any])?.isEmpty == true)
            let bad = try await cloud.request(.get, "/v1/device/answers?after=-1", token: pair.deviceToken)
            #expect(bad.status == .badRequest && bad.errorMessage.contains("after"))
            #expect(try await cloud.request(.get, "/v1/device/answers?wait=6", token: pair.deviceToken).status == .badRequest)

            // The alert's page shows them.
            let page = try await cloud.request(.get, pagePath, token: nil).text
            #expect(page.contains("is on the way") && page.contains("Stay where you are"))

            // The long-poll returns as soon as an answer comes.
            let started = ContinuousClock.now
            async let waited = cloud.request(.get, "/v1/device/answers?after=\(decoded.last_id)&wait=5", token: pair.deviceToken)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await pair.monitor.post(answerPath, ["kind": "on_my_way"], formPage: "/watch").status == .seeOther)
            let woken = try JSONDecoder().decode(AlertAnswersReply.self, from: Data(buffer: try await waited.body))
            #expect(woken.answers.count == 1 && ContinuousClock.now - started < .seconds(5))

            // One monitor sends at most 10 answers to an alert (4 so far).
            for _ in 0..<6 { #expect(try await pair.monitor.post(answerPath, ["kind": "on_my_way"], formPage: "/watch").status == .seeOther) }
            let eleventh = try await pair.monitor.post(answerPath, ["kind": "on_my_way"], formPage: "/watch")
            #expect(eleventh.status == .tooManyRequests && eleventh.text.contains("10 answers"))

            // A closed alert takes no answer.
            #expect(try await cloud.json(.post, "/v1/alerts", token: pair.deviceToken,
                                         AlertTests.message(alertID, 1, type: "cancelled")).status == .created)
            let closed = try await pair.monitor.post(answerPath, ["kind": "on_my_way"], formPage: "/monitoring")
            #expect(closed.status == .conflict, "\(closed.status) \(closed.text)")
        }
    }

    @Test("where are you?: only a consented, signed-in monitor with the form's CSRF token asks; it reaches the device's answers",
          arguments: Backend.allCases)
    func whereAreYou(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config()) { cloud in
            let pair = try await Self.pair(cloud)
            let askPath = "/watch/devices/\(pair.deviceID)/where"
            // The dashboard offers it on the runner's card.
            #expect(try await pair.monitor.get("/watch").text.contains("action=\"\(askPath)\""))

            // Outside an alert: stored with no alert id.
            #expect(try await pair.monitor.post(askPath, ["kind": "where_are_you"], formPage: "/watch").status == .seeOther)
            // During one: under the open alert.
            let alertID = Track.runID()
            let created = try await cloud.json(.post, "/v1/alerts", token: pair.deviceToken, AlertTests.message(alertID, 0))
            #expect(try await pair.monitor.post(askPath, [:], formPage: "/watch").status == .seeOther)
            let reply = try await cloud.request(.get, "/v1/device/answers?after=0", token: pair.deviceToken)
            let decoded = try JSONDecoder().decode(AlertAnswersReply.self, from: Data(buffer: reply.body))
            #expect(decoded.answers.map(\.kind) == ["where_are_you", "where_are_you"])
            #expect(decoded.answers.map(\.alert_id) == ["", alertID])
            #expect(decoded.answers.allSatisfy { $0.text == nil && $0.from == "Runner" })
            // Asking does not use up the monitor's answers to the alert, and shows on the card.
            #expect(try await pair.monitor.post("/watch/alerts/\(pair.deviceID)/\(alertID)/answer", ["kind": "on_my_way"],
                                                formPage: "/watch").status == .seeOther)
            #expect(try await pair.monitor.get("/watch").text.contains("asked for the position"))

            // Without the form's CSRF token (a forged cross-site post): refused, nothing stored.
            let forged = try await pair.monitor.post(askPath, ["kind": "where_are_you"], csrf: "forged")
            #expect(forged.status == .forbidden)
            // Signed out: sent to sign in.
            let signedOut = try await cloud.client.execute(uri: askPath, method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                           body: ByteBuffer(string: "kind=where_are_you"))
            #expect([401, 403, 303].contains(signedOut.status.code), "\(signedOut.status)")
            // The runner is no monitor of themself; a signed-in stranger learns nothing; a device that does not exist is the same 404.
            #expect(try await pair.runner.post(askPath, [:], formPage: "/monitoring").status == .notFound)
            let stranger = Browser(cloud)
            try await stranger.signUpAndLogIn("dora@example.org")
            #expect(try await stranger.post(askPath, [:], formPage: "/monitoring").status == .notFound)
            #expect(try await pair.monitor.post("/watch/devices/no-such-device/where", [:], formPage: "/watch").status == .notFound)
            // The alert's secret page offers no way to ask, and is no way in: it has no session.
            let pagePath = "/a/" + ((created.object["page"] as? String)?.split(separator: "/").last.map(String.init) ?? "")
            let page = try await cloud.request(.get, pagePath, token: nil).text
            #expect(!page.contains("<form") && !page.contains("/where"))
            // A consent that ended takes the right away.
            #expect(try await pair.monitor.post("/monitoring/end", ["runner": try #require(try await cloud.store.accounts.account(email: "ann@example.org")?.account.id)],
                                                formPage: "/monitoring").status == .seeOther)
            #expect(try await pair.monitor.post(askPath, [:], formPage: "/monitoring").status == .notFound)

            let after = try await cloud.request(.get, "/v1/device/answers?after=0", token: pair.deviceToken)
            let all = try JSONDecoder().decode(AlertAnswersReply.self, from: Data(buffer: after.body))
            #expect(all.answers.map(\.kind) == ["where_are_you", "where_are_you", "on_my_way"], "\(all.answers)")
        }
    }

    @Test("where are you?: at most 3 a minute from one monitor", arguments: [Backend.sqlite])
    func whereAreYouLimit(backend: Backend) async throws {
        let clock = SteppedWallClock()
        try await Cloud.with(backend, configuration: Self.config(), wallClock: clock.now) { cloud in
            let pair = try await Self.pair(cloud)
            let askPath = "/watch/devices/\(pair.deviceID)/where"
            for _ in 0..<3 { #expect(try await pair.monitor.post(askPath, [:], formPage: "/watch").status == .seeOther) }
            let fourth = try await pair.monitor.post(askPath, [:], formPage: "/watch")
            #expect(fourth.status == .tooManyRequests && fourth.text.contains("3 times in the last minute"))
            clock.advance(.seconds(61))
            #expect(try await pair.monitor.post(askPath, [:], formPage: "/watch").status == .seeOther)
        }
    }

    @Test("an alert is e-mailed to each consenting monitor too", arguments: Backend.allCases)
    func alertsForwardedToMonitors(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.config()) { cloud in
            let pair = try await Self.pair(cloud)
            #expect(try await cloud.json(.post, "/v1/alerts", token: pair.deviceToken, AlertTests.message(Track.runID(), 0)).status == .created)
            let mails = try await cloud.store.outbox.outbox().filter { $0.target == "carl@example.org" && $0.payload.contains("/a/") }
            #expect(mails.count == 1)
        }
    }

    @Test("two instances on one PostgreSQL: a position and an alert that reach one show on a dashboard of the other")
    func fanOutAcrossInstances() async throws {
        let url = try await Cloud.freshPostgresDatabase()
        let storeA = try await CloudStore.open(DatabaseURL(url)), storeB = try await CloudStore.open(DatabaseURL(url))
        // The live client's connection opens at the start and waits through the pairing (bcrypt,
        // e-mail) on A: B waits for its headers as long as `Cloud.with`'s servers do.
        var configuration = Self.config(lifetime: .seconds(60))
        configuration.connections.headerTimeout = .seconds(600)
        configuration.connections.idleTimeout = .seconds(600)
        let appA = try CloudApplication.make(store: storeA, configuration: configuration)
        let appB = try CloudApplication.make(store: storeB, configuration: configuration)
        try await appA.test(.router) { clientA in
            try await appB.test(.live) { clientB in
                let cloudA = Cloud(client: clientA, store: storeA), cloudB = Cloud(client: clientB, store: storeB)
                let pair = try await Self.pair(cloudA, monitorCloud: cloudB)
                let stream = try await Self.stream(cloudB, pair.monitor)
                #expect(try await cloudA.json(.put, "/v1/position", token: pair.deviceToken, Self.position(lat: 44.5)).status == .ok)
                #expect(try await cloudA.json(.post, "/v1/alerts", token: pair.deviceToken, AlertTests.message(Track.runID(), 0)).status == .created)
                let events = try await Self.events(stream, count: 2)
                #expect(events.count == 2)
                #expect((events.first?["map"] as? [String: Any])?["lat"] as? Double == 44.5)
                #expect(events.last?["alert_open"] as? Bool == true)
            }
        }
    }

    @Test("SIGTERM ends a server with a dashboard stream open at once (a shutdown waits for open responses)")
    func shutdownEndsStreams() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-stream")
        let database = "sqlite:" + directory.file("cloud.db")
        let store = try await CloudStore.open(.sqlite(path: directory.file("cloud.db")))
        try await store.migrate()
        let account = try await Accounts.create(store: store, email: "carl@example.org", password: AccountTests.password, displayName: "Carl",
                                                confirmed: true, cost: AccountTests.cost)
        let session = Tokens.random(), now = SessionSettings.systemClock()
        try await store.accounts.addSession(StoredSession(idHash: Tokens.hash(session), accountID: account.id, csrf: Tokens.random(), createdMs: now,
                                                 seenMs: now))
        let port = try FreePort.tcp()
        let process = try ChildProcess(CLITests.binary, ["serve", "--database", database, "--port", String(port)],
                                       stderr: .file(directory.file("serve.err")))
        defer { process.killAndReap() }
        var status = 0
        for _ in 0..<400 where status != 200 && process.isRunning {
            status = (try? await offPool { try CloudServer.get("http://127.0.0.1:\(port)/health", token: nil).status }) ?? 0
            if status != 200 { try await Task.sleep(for: .milliseconds(50)) }
        }
        let reader = try EventStreamReader(port: Int(port), path: "/watch/events", cookie: "pacer_session=\(session)")
        let opened = try await offPool { reader.read(until: .now + .seconds(20)) { $0.contains(": connected") } }
        #expect(opened.contains(": connected"))
        kill(process.pid, SIGTERM)
        // The stream's lifetime is 5 minutes: without ending it, the server would wait that long.
        #expect(await process.waitForExit(timeout: .seconds(10)) != nil)
    }

    @Test("speech cleaning: printable, no markup, spaces collapsed")
    func cleaning() {
        #expect(AnswerText.cleaned("  Hi\t\tthere \n") == "Hi there")
        #expect(AnswerText.cleaned("<script>alert(1)</script>ok") == "alert(1)ok")
        #expect(AnswerText.cleaned("a & b > c") == "a b c")
        #expect(AnswerText.cleaned("bell\u{7}\u{200B}end") == "bellend")
        #expect(AnswerText.cleaned("Anna è qui 👍") == "Anna è qui 👍")
    }
}
