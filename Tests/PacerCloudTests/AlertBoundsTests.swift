@testable import CloudModel
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Synchronization
import Testing

/// Issue 31, deliverables 4 and 6: an alert message's size is capped and its unknown fields are
/// dropped, updates are rate-limited without refusing what an SOS needs, every read of alerts is
/// bounded (pages of `GET /v1/alerts`, the first and newest messages for the alert page and the
/// dashboard), and a closed alert shows no position on the dashboard.
@Suite("pacer-cloud: alert sizes, pages, rates and privacy (issue 31)", .timeLimit(.minutes(10)))
struct AlertBoundsTests {
    /// A clock the test steps: the rate limits' buckets refill only when it says so.
    final class SteppedClock: Sendable {
        private let now = Mutex<Duration>(.seconds(1000))
        func advance(_ duration: Duration) { now.withLock { $0 += duration } }
        var read: @Sendable () -> Duration { { [self] in now.withLock { $0 } } }
    }

    static func post(_ cloud: Cloud, _ token: String, _ body: [String: Any]) async throws -> TestResponse {
        try await cloud.json(.post, "/v1/alerts", token: token, body)
    }

    @Test("a field the server does not know is dropped, not stored nor listed nor forwarded", arguments: Backend.allCases)
    func unknownFieldsAreDropped(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7", webhook: "https://hooks.example.org/sos")
            let alert = Track.runID()
            var body = AlertTests.message(alert, 0)
            body["pad"] = String(repeating: "x", count: 30_000)
            body["extra"] = ["nested": [1, 2, 3]]
            var position = try #require(body["position"] as? [String: Any])
            position["pad2"] = "inner unknown field"
            body["position"] = position
            let created = try await Self.post(cloud, token, body)
            #expect(created.status == .created, "\(created.text)")
            let listed = try await cloud.request(.get, "/v1/alerts", token: token).text
            #expect(!listed.contains("pad") && !listed.contains("extra") && !listed.contains("xxxx"), "\(listed.prefix(300))")
            #expect(listed.contains(#""sms":"SOS: HIGH heart rate 215 bpm""#))
            let deviceID = try #require(try await cloud.store.devices.devices().first?.id)
            let stored = try #require(try await cloud.store.alerts.alerts(device: deviceID, state: nil).first)
            #expect(stored.latestJSON.utf8.count < 2_000 && !stored.latestJSON.contains("pad"), "\(stored.latestJSON.utf8.count) bytes")
            let page = try #require(try await cloud.store.alerts.alert(secret: stored.secret, messages: 10))
            #expect(page.messages.allSatisfy { !$0.contains("pad") && !$0.contains("extra") })
            let forwarded = try await cloud.store.outbox.outbox().map(\.payload)
            #expect(!forwarded.isEmpty && forwarded.allSatisfy { !$0.contains("xxxx") && !$0.contains("extra") })
            // A retry of the same message with another unknown field is the same message.
            body["pad"] = "something else"
            #expect(try await Self.post(cloud, token, body).status == .ok)
        }
    }

    @Test("an alert message over 64 KiB is refused with 413 naming the body; the longest valid one is taken", arguments: Backend.allCases)
    func sizeIsCapped(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            var body = AlertTests.message(Track.runID(), 0)
            body["pad"] = String(repeating: "x", count: 1 << 20 - 4096)
            let refused = try await Self.post(cloud, token, body)
            #expect(refused.status == .contentTooLarge, "\(refused.status)")
            #expect(refused.errorCode == "too_large" && refused.errorMessage.contains("body") && refused.errorMessage.contains("65536"),
                    "\(refused.errorMessage)")
            #expect(try await cloud.store.counts().alerts == 0)
            // Every text field at its longest, in 4-byte characters: taken.
            var longest = AlertTests.message(Track.runID(), 0)
            longest["sms"] = String(repeating: "😀", count: WireLimits.maxTextLength)
            longest["device"] = String(repeating: "😀", count: 256)
            longest["wearer"] = String(repeating: "😀", count: 64)
            longest["time"] = String(repeating: "😀", count: 64)
            let taken = try await Self.post(cloud, token, longest)
            #expect(taken.status == .created, "\(taken.text)")
        }
    }

    @Test("GET /v1/alerts comes in pages: a default of 20, at most 100, `next` to go on; bad limits and cursors are 400",
          arguments: Backend.allCases)
    func listIsPaginated(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            var posted = Set<String>()
            for _ in 0..<25 {
                let id = Track.runID()
                posted.insert(id)
                #expect(try await Self.post(cloud, token, AlertTests.message(id, 0)).status == .created)
            }
            let first = try await cloud.request(.get, "/v1/alerts", token: token)
            let firstItems = try #require(first.object["alerts"] as? [[String: Any]])
            #expect(firstItems.count == AlertLimits.pageDefault)
            let next = try #require(first.object["next"] as? String)
            let second = try await cloud.request(.get, "/v1/alerts?before=\(next)", token: token)
            let secondItems = try #require(second.object["alerts"] as? [[String: Any]])
            #expect(secondItems.count == 5)
            #expect(second.object["next"] == nil)
            let seen = (firstItems + secondItems).compactMap { $0["alert_id"] as? String }
            #expect(Set(seen) == posted && seen.count == 25)
            let small = try await cloud.request(.get, "/v1/alerts?limit=7&state=open", token: token)
            #expect((small.object["alerts"] as? [[String: Any]])?.count == 7 && small.object["next"] is String)
            // What the spec's pattern allows is taken, even a time past Int64 (after every alert).
            let far = try await cloud.request(.get, "/v1/alerts?before=9999999999999999999_%C3%A9", token: token)
            #expect(far.status == .ok && (far.object["alerts"] as? [[String: Any]])?.count == 20, "\(far.text)")
            for bad in ["limit=0", "limit=101", "limit=x", "before=nonsense", "before=12_", "limit=99999999999999999999", "before=1_%00",
                        "before=_abc", "before=12345678901234567890_a"] {
                let refused = try await cloud.request(.get, "/v1/alerts?\(bad)", token: token)
                let field = String(bad.prefix { $0 != "=" })
                #expect(refused.status == .badRequest && refused.errorMessage.contains("'\(field)'"), "\(bad): \(refused.errorMessage)")
            }
        }
    }

    @Test("updates of an alert are limited (429 with Retry-After), but a new alert, its close and a retry always pass",
          arguments: Backend.allCases)
    func updatesAreRateLimited(backend: Backend) async throws {
        let clock = SteppedClock()
        try await Cloud.with(backend, now: clock.read) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let alert = Track.runID()
            #expect(try await Self.post(cloud, token, AlertTests.message(alert, 0)).status == .created)
            let burst = Int(AlertAdmission.perAlert.burst)
            for sequence in 1...burst {
                #expect(try await Self.post(cloud, token, AlertTests.message(alert, sequence, type: "follow_up")).status == .created)
            }
            let refused = try await Self.post(cloud, token, AlertTests.message(alert, burst + 1, type: "follow_up"))
            #expect(refused.status == .tooManyRequests, "\(refused.text)")
            #expect(refused.errorCode == "rate_limited" && refused.errorMessage.contains("sequence"))
            #expect(Int(refused.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // A retry of the newest stored message (its answer was lost): the same answer.
            #expect(try await Self.post(cloud, token, AlertTests.message(alert, burst, type: "follow_up")).status == .ok)
            // Another alert of the device is a new episode; the close of this one a state change.
            #expect(try await Self.post(cloud, token, AlertTests.message(Track.runID(), 0, kind: "manual")).status == .created)
            #expect(try await Self.post(cloud, token, AlertTests.message(alert, burst + 2, type: "resolved")).status == .created)
            // Once closed, more messages are updates, still limited; in time they pass again.
            #expect(try await Self.post(cloud, token, AlertTests.message(alert, burst + 3, type: "resolved")).status == .tooManyRequests)
            clock.advance(.seconds(5))
            #expect(try await Self.post(cloud, token, AlertTests.message(alert, burst + 3, type: "resolved")).status == .created)
        }
    }

    @Test("a device's updates over all its alerts are limited too: 60, then one a second", arguments: Backend.allCases)
    func deviceUpdatesAreLimited(backend: Backend) async throws {
        let clock = SteppedClock()
        try await Cloud.with(backend, now: clock.read) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            var created = 0, limited = 0
            for _ in 0..<6 {
                let alert = Track.runID()
                #expect(try await Self.post(cloud, token, AlertTests.message(alert, 0)).status == .created)
                for sequence in 1...11 {
                    switch try await Self.post(cloud, token, AlertTests.message(alert, sequence, type: "follow_up")).status {
                    case .created: created += 1
                    case .tooManyRequests: limited += 1
                    default: Issue.record("unexpected status")
                    }
                }
            }
            #expect(created == Int(AlertAdmission.perDevice.burst) && limited == 6, "created \(created), limited \(limited)")
        }
    }

    @Test("the store reads the first and the newest messages of an alert, and the alert page counts them all", arguments: Backend.allCases)
    func messagesAreReadBounded(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let deviceID = try #require(try await cloud.store.devices.devices().first?.id)
            let alert = Track.runID()
            let page = try #require(try await Self.post(cloud, token, AlertTests.message(alert, 0)).object["page"] as? String)
            // Straight into the store: 80 follow-ups, more than any read takes.
            for sequence in 1...80 {
                let json = try JSONInput.canonical(try JSONDecoder().decode(
                    AlertBody.self, from: try JSONSerialization.data(withJSONObject: AlertTests.message(alert, sequence, type: "follow_up"))))
                _ = try await cloud.store.alerts.recordAlertMessage(AlertMessageInput(
                    device: deviceID, alertID: alert, sequence: sequence, type: "follow_up", kind: "hr_high", test: false, json: json,
                    receivedMs: 1, newSecret: "unused", forward: []))
            }
            let secret = String(page.split(separator: "/").last ?? "")
            let read = try #require(try await cloud.store.alerts.alert(secret: secret, messages: 10))
            #expect(read.count == 81)
            let sequences = read.messages.compactMap { try? JSONDecoder().decode(AlertBody.self, from: Data($0.utf8)).sequence }
            #expect(sequences == [0] + Array(72...80), "\(sequences)")
            let html = try await cloud.request(.get, "/a/" + secret, token: nil).text
            #expect(html.contains("<dt>Messages</dt><dd>81, the newest"), "\(html)")
            let paged = try await cloud.store.alerts.alerts(device: deviceID, state: nil, before: nil, limit: 0)
            #expect(paged.isEmpty)
        }
    }

    @Test("an answer to an alert id holding a NUL is 404 on both stores, never a 500 (the alert is looked up in SQL now)",
          arguments: Backend.allCases)
    func answerToANulAlertIsNotFound(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: MonitorTests.config()) { cloud in
            let pair = try await MonitorTests.pair(cloud)
            let answer = try await pair.monitor.post("/watch/alerts/\(pair.deviceID)/a%00b/answer", ["kind": "on_my_way"], formPage: "/watch")
            #expect(answer.status == .notFound, "\(answer.status) \(answer.text.prefix(200))")
        }
    }

    @Test("a closed alert's position from a private place is not on the dashboard nor in its stream; an open alert's is",
          arguments: Backend.allCases)
    func closedAlertShowsNoPrivatePosition(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: MonitorTests.config(lifetime: .seconds(60)), testing: .live) { cloud in
            let pair = try await MonitorTests.pair(cloud)
            let inside: [String: Any] = ["lat": 45.471234, "lon": 9.187654, "time": WireTime.text(milliseconds: SessionSettings.systemClock())]
            #expect(try await cloud.json(.put, "/v1/device/state", token: pair.deviceToken, MonitorTests.heartbeat(private: true)).status == .ok)
            let alert = Track.runID()
            #expect(try await Self.post(cloud, pair.deviceToken, AlertTests.message(alert, 0, position: inside)).status == .created)
            // "Where are you?" answered from inside the zone during the alert.
            #expect(try await cloud.json(.put, "/v1/position", token: pair.deviceToken, MonitorTests.position(lat: 45.472345)).status == .ok)
            let open = try await pair.monitor.get("/watch").text
            #expect(open.contains("45.47123") && open.contains("45.472345"), "\(open)")
            let stream = try await MonitorTests.stream(cloud, pair.monitor)
            #expect(try await Self.post(cloud, pair.deviceToken, AlertTests.message(alert, 1, type: "cancelled", position: inside)).status == .created)
            let event = try #require(try await MonitorTests.events(stream, count: 1).last)
            let card = try #require(event["html"] as? String)
            #expect(!card.contains("45.4712") && !card.contains("45.4723") && card.contains("in a private place"), "\(card)")
            #expect(event["map"] == nil || event["map"] is NSNull, "\(event)")
            let closed = try await pair.monitor.get("/watch").text
            #expect(!closed.contains("45.4712") && !closed.contains("45.4723") && closed.contains("in a private place"), "\(closed)")
            #expect(!closed.contains("href=\"/a/"), "the closed alert's page (its map) is not linked")
            // Forgotten, not only hidden.
            #expect(try await cloud.store.alerts.position(device: pair.deviceID) == nil)
        }
    }
}
