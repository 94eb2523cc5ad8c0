import HummingbirdTesting
import PacerCloud
import Testing

@Suite("pacer-cloud: SOS alerts", .timeLimit(.minutes(10)))
struct AlertTests {
    /// A message as pacerd's AlertBody writes it.
    static func message(_ alertID: String, _ sequence: Int, type: String = "alert", kind: String = "hr_high", test: Bool = false,
                        position: [String: Any]? = ["lat": 45.47791, "lon": 9.22414, "time": "2026-05-10T07:37:17.000Z", "accuracy_m": 8.0],
                        bpm: Int = 215) -> [String: Any] {
        var body: [String: Any] = [
            "alert_id": alertID, "sequence": sequence, "type": type, "test": test, "kind": kind,
            "time": "2026-05-10T07:37:\(19 + sequence).000Z", "raised_at": "2026-05-10T07:37:19.000Z",
            "device": "pacer-7", "run_id": "3f2b8c1e-0000-4000-8000-000000000001",
            "heart_rate": ["bpm": bpm, "trend": "rising", "threshold_bpm": 205], "battery_percent": 54,
            "sms": "SOS: HIGH heart rate \(bpm) bpm",
        ]
        if let position { body["position"] = position }
        return body
    }

    @Test("alert messages are idempotent by alert_id and sequence, and the Idempotency-Key must match", arguments: Backend.allCases)
    func idempotent(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let alert = Track.runID()
            let first = try await cloud.json(.post, "/v1/alerts", token: token, Self.message(alert, 0),
                                             headers: [.init("Idempotency-Key")!: "\(alert):0"])
            #expect(first.status == .created)
            let page = try #require(first.object["page"] as? String)
            #expect(page.hasPrefix("http://"))
            let secret = String(page.split(separator: "/").last ?? "")
            #expect(secret.count >= 22)  // ≥ 128 bits in base64url
            let again = try await cloud.json(.post, "/v1/alerts", token: token, Self.message(alert, 0),
                                             headers: [.init("Idempotency-Key")!: "\(alert):0"])
            #expect(again.status == .ok)
            #expect(again.object["page"] as? String == page)
            let mismatch = try await cloud.json(.post, "/v1/alerts", token: token, Self.message(alert, 1, type: "follow_up"),
                                                headers: [.init("Idempotency-Key")!: "\(alert):0"])
            #expect(mismatch.status == .badRequest)
            #expect(mismatch.errorCode == "idempotency_key_mismatch")
            let counts = try await cloud.store.counts()
            #expect(counts.alerts == 1)
            #expect(counts.alertMessages == 1)
        }
    }

    @Test("the page shows the newest follow-up's position; a cancel changes the state", arguments: Backend.allCases)
    func pageFollowsMessages(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let alert = Track.runID()
            let page = try #require(try await cloud.json(.post, "/v1/alerts", token: token, Self.message(alert, 0)).object["page"] as? String)
            let path = "/" + page.split(separator: "/", omittingEmptySubsequences: true).suffix(2).joined(separator: "/")
            var html = try await cloud.request(.get, path, token: nil)
            #expect(html.status == .ok)
            #expect(html.headers[.contentType] == "text/html; charset=utf-8")
            #expect(html.text.contains(#"<meta http-equiv="refresh" content="10">"#))
            #expect(html.text.contains("OPEN"))
            #expect(html.text.contains("45.477910"))
            #expect(html.text.contains("215 bpm"))

            let followUp = Self.message(alert, 1, type: "follow_up",
                                        position: ["lat": 45.48001, "lon": 9.23002, "time": "2026-05-10T07:38:00.000Z"], bpm: 198)
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, followUp).status == .created)
            html = try await cloud.request(.get, path, token: nil)
            #expect(html.text.contains("45.480010"))
            #expect(html.text.contains("https://www.openstreetmap.org/?mlat=45.480010&amp;mlon=9.230020"))
            #expect(!html.text.contains("45.477910"))
            #expect(html.text.contains("198 bpm"))

            var open = try await cloud.request(.get, "/v1/alerts?state=open", token: token)
            #expect((open.object["alerts"] as? [[String: Any]])?.count == 1)
            #expect(((open.object["alerts"] as? [[String: Any]])?.first?["latest"] as? [String: Any])?["sequence"] as? Int == 1)

            #expect(try await cloud.json(.post, "/v1/alerts", token: token, Self.message(alert, 2, type: "cancelled")).status == .created)
            html = try await cloud.request(.get, path, token: nil)
            #expect(html.text.contains("false alarm"))
            #expect(!html.text.contains("OPEN"))
            open = try await cloud.request(.get, "/v1/alerts?state=open", token: token)
            #expect((open.object["alerts"] as? [Any])?.count == 0)
            let cancelled = try await cloud.request(.get, "/v1/alerts?state=cancelled", token: token)
            #expect((cancelled.object["alerts"] as? [[String: Any]])?.first?["state"] as? String == "cancelled")
            // A late repeat of an older message does not reopen it.
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, followUp).status == .ok)
            #expect((try await cloud.request(.get, "/v1/alerts?state=open", token: token).object["alerts"] as? [Any])?.count == 0)
            #expect(try await cloud.store.counts().alertMessages == 3)
        }
    }

    @Test("the page escapes what the device sent, marks tests, and an unknown secret is 404", arguments: Backend.allCases)
    func escaping(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            // The kind is checked by pattern (a script is refused, AlertHardeningTests), so the
            // script comes in free text the page shows: the heart rate's trend.
            var body = Self.message(Track.runID(), 0, test: true)
            body["heart_rate"] = ["bpm": 215, "trend": "<script>alert(1)</script>", "threshold_bpm": 205]
            body["device"] = "\"><img src=x onerror=alert(2)>"
            let page = try #require(try await cloud.json(.post, "/v1/alerts", token: token, body).object["page"] as? String)
            let path = "/" + page.split(separator: "/").suffix(2).joined(separator: "/")
            let html = try await cloud.request(.get, path, token: nil).text
            #expect(!html.contains("<script>"))
            #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!html.contains("<img"))
            #expect(html.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
            #expect(html.contains("TEST"))

            let unknown = try await cloud.request(.get, "/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", token: nil)
            #expect(unknown.status == .notFound)
            #expect(unknown.text.contains("No such alert"))
            #expect(try await cloud.request(.get, "/a/<x>", token: nil).status == .notFound)
        }
    }
}
