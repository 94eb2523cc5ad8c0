@testable import CloudModel
import Foundation
import Gzip
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import Testing
import Threads

/// The attacks of issue 19 replayed, each against both stores: every one refused with a 4xx
/// naming the field, or neutralised, and nothing stored by a refusal.
@Suite("pacer-cloud: attacks from issue 19", .timeLimit(.minutes(10)))
struct AttackTests {
    static func raw(_ cloud: Cloud, _ method: HTTPRequest.Method, _ uri: String, token: String, _ text: String,
                    type: String = "application/json") async throws -> TestResponse {
        try await cloud.request(method, uri, token: token, body: Array(text.utf8), headers: [.contentType: type])
    }

    static func pagePath(_ response: TestResponse) throws -> String {
        let page = try #require(response.object["page"] as? String)
        return "/" + page.split(separator: "/").suffix(2).joined(separator: "/")
    }

    @Test("alert numbers out of range are 400 naming the field; none is stored", arguments: Backend.allCases)
    func alertNumbers(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let cases: [(String, [String: Any], String)] = [
                ("accuracy 1e300", ["position": ["lat": 45.4, "lon": 9.2, "accuracy_m": 1e300]], "'position.accuracy_m'"),
                ("accuracy -1e300", ["position": ["lat": 45.4, "lon": 9.2, "accuracy_m": -1e300]], "'position.accuracy_m'"),
                ("age -1", ["position": ["lat": 45.4, "lon": 9.2, "age_s": -1.0]], "'position.age_s'"),
                ("bpm 9999", ["heart_rate": ["bpm": 9999]], "'heart_rate.bpm'"),
                ("trend 1e300", ["heart_rate": ["bpm": 150, "trend_bpm_per_min": 1e300]], "'heart_rate.trend_bpm_per_min'"),
                ("battery 101", ["battery_percent": 101], "'battery_percent'"),
                ("sequence -1", ["sequence": -1], "'sequence'"),
                ("kind with a script", ["kind": "<script>alert(1)</script>"], "'kind'"),
                ("kind with a header", ["kind": "hr_high\r\nBcc: attacker@example.net"], "'kind'"),
                ("NUL in the sms", ["sms": "SOS\u{0}"], "'sms'"),
                ("60 KB device name", ["device": String(repeating: "x", count: 60_000)], "'device'"),
            ]
            for (name, change, field) in cases {
                let body = AlertTests.message(Track.runID(), 0).merging(change) { $1 }
                let response = try await cloud.json(.post, "/v1/alerts", token: token, body)
                #expect(response.status == .badRequest, "\(name): \(response.status) \(response.text)")
                #expect(response.errorMessage.contains(field), "\(name): \(response.errorMessage)")
                #expect(response.body.readableBytes < 1024, "\(name): the refusal is \(response.body.readableBytes) bytes")
            }
            // A number no Double holds (the NaN-like case) is refused by the JSON decoder, which
            // cannot say where: 400 bad_json.
            let huge = try await Self.raw(cloud, .post, "/v1/alerts", token: token, #"""
                {"alert_id":"\#(Track.runID())","sequence":0,"type":"alert","test":false,"kind":"hr_high","time":"2026-05-10T07:37:19.000Z",
                 "position":{"lat":45.4,"lon":9.2,"accuracy_m":1e400}}
                """#)
            #expect(huge.status == .badRequest, "\(huge.text)")
            #expect(huge.errorCode == "bad_json", "\(huge.text)")
            #expect(try await cloud.store.counts().alerts == 0)
        }
    }

    @Test("an alert stored with accuracy 1e300 by an older server is shown, not a trap", arguments: Backend.allCases)
    func storedHugeAccuracy(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            _ = try await cloud.addDevice("pacer-7")
            let device = try await cloud.store.devices.devices()[0].id
            var message = AlertTests.message(Track.runID(), 0)
            message["position"] = ["lat": 45.4, "lon": 9.2, "accuracy_m": 1e300, "time": "9999-12-31T23:59:59.000Z"]
            let json = String(decoding: try JSONSerialization.data(withJSONObject: message), as: UTF8.self)
            let secret = Tokens.random(bytes: 24)
            _ = try await cloud.store.alerts.recordAlertMessage(AlertMessageInput(
                device: device, alertID: message["alert_id"] as! String, sequence: 0, type: "alert", kind: "hr_high", test: false,
                json: json, receivedMs: WallClock.milliseconds(), newSecret: secret, forward: []))
            let page = try await cloud.request(.get, "/a/\(secret)", token: nil)
            #expect(page.status == .ok)
            #expect(page.text.contains("45.400000"))
            #expect(!page.text.contains("within"))
        }
    }

    @Test("kinds are checked by shape: a newer device's kind is taken; times never refuse an SOS", arguments: Backend.allCases)
    func kindsAndTimes(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let newer = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0, kind: "hr_signal_lost"))
            #expect(newer.status == .created)
            for time in ["9999-12-31T23:59:59.000Z", "1970-01-01T00:00:00.000Z", "not a time", "2200-01-01T00:00:00.001Z"] {
                var body = AlertTests.message(Track.runID(), 0)
                body["time"] = time
                body["raised_at"] = time
                body["position"] = ["lat": 45.4, "lon": 9.2, "time": time]
                let response = try await cloud.json(.post, "/v1/alerts", token: token, body)
                #expect(response.status == .created, "\(time): \(response.text)")
                let page = try await cloud.request(.get, try Self.pagePath(response), token: nil)
                #expect(page.status == .ok)
                #expect(page.text.contains("device's time"), "\(time)")
            }
            // 64-bit sequences are the same on both stores (PostgreSQL's column was 32-bit).
            let alert = Track.runID()
            let big = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 1 << 40))
            #expect(big.status == .created, "\(big.text)")
            var last = AlertTests.message(alert, 2, type: "cancelled")
            last["sequence"] = Int(Int64.max)
            let max = try await cloud.json(.post, "/v1/alerts", token: token, last)
            #expect(max.status == .created, "\(max.text)")
            let listed = try await cloud.request(.get, "/v1/alerts?state=cancelled", token: token)
            #expect((listed.object["alerts"] as? [[String: Any]])?.first?["latest_sequence"] as? Int == Int(Int64.max))
        }
    }

    @Test("a repeated alert message with another body is 409; the same body is 200", arguments: Backend.allCases)
    func alertConflict(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let alert = Track.runID()
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 0)).status == .created)
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 0)).status == .ok)
            let other = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 0, bpm: 180))
            #expect(other.status == .conflict)
            #expect(other.errorCode == "conflict")
            #expect(try await cloud.store.counts().alertMessages == 1)
        }
    }

    @Test("bodies are UTF-8 JSON only: UTF-16, a BOM, a NUL or another charset are 4xx", arguments: Backend.allCases)
    func utf8Only(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let json = try JSONSerialization.data(withJSONObject: AlertTests.message(Track.runID(), 0))
            let text = String(decoding: json, as: UTF8.self)
            var utf16 = [UInt8]()
            for unit in text.utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
            let bodies: [(String, [UInt8])] = [("UTF-16LE", utf16), ("UTF-16 with BOM", [0xFF, 0xFE] + utf16),
                                               ("UTF-8 BOM", [0xEF, 0xBB, 0xBF] + Array(json)), ("invalid UTF-8", Array(json) + [0xC3])]
            for (name, body) in bodies {
                let response = try await cloud.request(.post, "/v1/alerts", token: token, body: body, headers: [.contentType: "application/json"])
                #expect(response.status == .badRequest, "\(name): \(response.status)")
                #expect(response.errorCode == "bad_json", "\(name)")
            }
            let charset = try await cloud.request(.post, "/v1/alerts", token: token, body: Array(json),
                                                  headers: [.contentType: "application/json; charset=utf-16"])
            #expect(charset.status == .unsupportedMediaType)
            let escapedNUL = try await Self.raw(cloud, .put, "/v1/position", token: token,
                                                #"{"time":"2026-05-10T07:30:00.000Z","lat":45.0,"lon":9.0,"run_id":"a\u0000"}"#)
            #expect(escapedNUL.status == .badRequest)
            #expect(try await cloud.store.counts().alerts == 0)
            #expect(try await cloud.request(.get, "/v1/alerts", token: token).status == .ok)
        }
    }

    @Test("position and summary numbers and times are range-checked; a far-future position does not hold the place",
          arguments: Backend.allCases)
    func positionsAndSummaries(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let base: [String: Any] = ["time": "2026-05-10T07:30:00.000Z", "lat": 45.0, "lon": 9.0]
            let positions: [(String, [String: Any], String)] = [
                ("year 9999", ["time": "9999-12-31T00:00:00.000Z"], "'time'"), ("year 1979", ["time": "1979-12-31T23:59:59.000Z"], "'time'"),
                ("accuracy 1e300", ["accuracy_m": 1e300], "'accuracy_m'"), ("accuracy -1", ["accuracy_m": -1.0], "'accuracy_m'"),
                ("speed 1e300", ["speed_mps": 1e300], "'speed_mps'"), ("heart rate 301", ["heart_rate": 301], "'heart_rate'"),
            ]
            for (name, change, field) in positions {
                let response = try await cloud.json(.put, "/v1/position", token: token, base.merging(change) { $1 })
                #expect(response.status == .badRequest, "\(name)")
                #expect(response.errorMessage.contains(field), "\(name): \(response.errorMessage)")
            }
            // The latest time taken, then a true one: the server's clock decides, so it is stored.
            #expect(try await cloud.json(.put, "/v1/position", token: token, base.merging(["time": "2199-12-31T00:00:00.000Z"]) { $1 })
                .object["stored"] as? Bool == true)
            let now = WireTime.text(milliseconds: WallClock.milliseconds())
            let current = try await cloud.json(.put, "/v1/position", token: token, base.merging(["time": now, "lat": 46.0]) { $1 })
            #expect(current.object["stored"] as? Bool == true)
            #expect(try await cloud.request(.get, "/v1/position", token: token).object["lat"] as? Double == 46.0)

            let run = Track.runID()
            let summaries: [(String, [String: Any], String)] = [
                ("distance 1e300", ["distance_m": 1e300], "'distance_m'"), ("pace -1", ["avg_pace_s_per_km": -1.0], "'avg_pace_s_per_km'"),
                ("hr_avg 1e300", ["hr_avg": 1e300], "'hr_avg'"), ("start 2201", ["start_time": "2201-01-01T00:00:00.000Z"], "'start_time'"),
                ("chunks 100001", ["chunks": 100_001], "'chunks'"),
            ]
            for (name, change, field) in summaries {
                let response = try await cloud.json(.put, "/v1/runs/\(run)", token: token, Track.summary(chunks: 1).merging(change) { $1 })
                #expect(response.status == .badRequest, "\(name)")
                #expect(response.errorMessage.contains(field), "\(name): \(response.errorMessage)")
            }
            let maxTime = try await cloud.putChunk(run, 0, Array("\(Int64.max),45.0,9.0,3.0,1.0,1,\n".utf8), token: token)
            #expect(maxTime.status == .badRequest)
            #expect(maxTime.errorMessage.contains("time_ms"))
            #expect(try await cloud.store.counts().runs == 0)
            #expect(try await cloud.store.counts().chunks == 0)
        }
    }

    @Test("chunks are read as a stream within caps: a newline bomb and a huge field are refused at once, small",
          arguments: Backend.allCases)
    func chunkBombs(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let run = Track.runID()
            let newlines = try Gzip.compress([UInt8](repeating: 0x0A, count: 63 << 20))
            #expect(newlines.count < 1 << 20)
            let started = ContinuousClock.now
            let bomb = try await cloud.putChunk(run, 0, newlines, token: token, gzip: true)
            let took = ContinuousClock.now - started
            #expect(bomb.status == .contentTooLarge)
            #expect(bomb.errorMessage.contains("\(TrackChunkFormat.maxLinesPerChunk) lines"))
            print("pacer-cloud \(backend): 63 MiB of gzipped newlines refused in \(took)")

            let field = try Gzip.compress(Array("1778398200000,".utf8) + [UInt8](repeating: 0x31, count: 60 << 20))
            let long = try await cloud.putChunk(run, 0, field, token: token, gzip: true)
            #expect(long.status == .badRequest)
            #expect(long.body.readableBytes < 1024, "the refusal is \(long.body.readableBytes) bytes")

            let tooMany = try await cloud.putChunk(run, 0, Track.chunk(Track.samples(TrackChunkFormat.maxLinesPerChunk + 1)), token: token)
            #expect(tooMany.status == .contentTooLarge)
            // CRLF line ends are taken, as the spec says.
            let crlf = Array(Track.chunk(Track.samples(3)).split(separator: 0x0A).map { Array($0) + [0x0D, 0x0A] }.joined())
            #expect(try await cloud.putChunk(run, 0, crlf, token: token).status == .created)
            #expect(try await cloud.store.counts().chunks == 1)
        }
    }

    @Test("a 24 h run at 1 Hz goes up and comes back (JSON and GPX); a run past the cap is refused", arguments: Backend.allCases)
    func dayLongRun(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let run = Track.runID()
            let perChunk = 600, day = 86_400
            for seq in 0..<(day / perChunk) {
                let body = try Gzip.compress(Track.chunk(Track.samples(perChunk, from: seq * perChunk)))
                let response = try await cloud.putChunk(run, seq, body, token: token, gzip: true)
                #expect(response.status == .created, "chunk \(seq): \(response.text)")
            }
            let summary = try await cloud.json(.put, "/v1/runs/\(run)", token: token, Track.summary(chunks: day / perChunk))
            #expect(summary.object["complete"] as? Bool == true)
            let shown = try await cloud.request(.get, "/v1/runs/\(run)", token: token)
            #expect(shown.status == .ok)
            let samples = shown.object["samples"] as? [[String: Any]] ?? []
            #expect(samples.count == day)
            #expect(samples.last?["time"] as? String == WireTime.text(milliseconds: Track.start + Int64(day - 1) * 1000))
            let gpx = try await cloud.request(.get, "/v1/runs/\(run)/gpx", token: token)
            #expect(gpx.text.components(separatedBy: "<trkpt ").count - 1 == day)
            #expect(gpx.text.hasSuffix("</gpx>\n"))

            let big = Track.runID()
            let full = try Gzip.compress(Track.chunk(Track.samples(TrackChunkFormat.maxLinesPerChunk)))
            let allowed = TrackChunkFormat.maxSamplesPerRun / TrackChunkFormat.maxLinesPerChunk
            for seq in 0..<allowed { #expect(try await cloud.putChunk(big, seq, full, token: token, gzip: true).status == .created) }
            let over = try await cloud.putChunk(big, allowed, full, token: token, gzip: true)
            #expect(over.status == .contentTooLarge)
            #expect(over.errorCode == "run_too_large")
            // A repeat of a stored chunk is still the idempotent 200, not the cap.
            #expect(try await cloud.putChunk(big, 0, full, token: token, gzip: true).status == .ok)
        }
    }

    @Test("every HTML answer has the security headers and no script", arguments: Backend.allCases)
    func securityHeaders(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let path = try Self.pagePath(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0)))
            for (uri, status) in [(path, HTTPResponse.Status.ok), ("/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", .notFound)] {
                let page = try await cloud.request(.get, uri, token: nil)
                #expect(page.status == status)
                let policy = page.headers[.contentSecurityPolicy] ?? ""
                #expect(policy.contains("default-src 'none'"))
                #expect(policy.contains("frame-ancestors 'none'"))
                #expect(!policy.contains("unsafe-inline"))
                #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
                #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                if status == .ok {
                    // The alert's page draws its map (issue #30): scripts from the server only, no
                    // inline script (the data is a JSON block), the origin alone as referrer (the
                    // tile server wants it; the path holds the secret).
                    #expect(policy.contains("script-src 'self';") && !policy.contains("unsafe"), "\(policy)")
                    #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "strict-origin")
                    let scripts = page.text.components(separatedBy: "<script").dropFirst()
                    #expect(!scripts.isEmpty && scripts.allSatisfy { $0.hasPrefix(#" type="application/json""#) || $0.hasPrefix(#" src="/assets/"#) })
                } else {
                    #expect(!policy.contains("script-src"))
                    #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                    #expect(!page.text.lowercased().contains("<script"))
                }
                // The style the policy allows by hash is the one in the page.
                #expect(page.text.contains("<style>\(AlertPage.style)</style>"))
            }
        }
    }

    @Test("an unknown method on a known path is 405 with Allow; the table matches the router", arguments: Backend.allCases)
    func methodNotAllowed(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let run = Track.runID()
            let paths = ["/health", "/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "/v1/runs", "/v1/runs/\(run)", "/v1/runs/\(run)/gpx",
                         "/v1/runs/\(run)/chunks/0", "/v1/position", "/v1/alerts"]
            let table = try await OpenAPIRouteTests.withRouter { _, routes in routes.accessRegistry }
            for path in paths {
                let allowed = try #require(table.methods(for: path))
                for method in [HTTPRequest.Method.get, .put, .post, .delete, .patch] {
                    let response = try await cloud.request(method, path, token: token, body: [])
                    if allowed.contains(method.rawValue) {
                        // The router has the route (a miss on a known path would be the 405).
                        #expect(response.status != .methodNotAllowed, "\(method) \(path): \(response.text)")
                    } else {
                        #expect(response.status == .methodNotAllowed, "\(method) \(path): \(response.status)")
                        #expect(response.headers[.allow] == allowed.joined(separator: ", "))
                        #expect(response.errorCode == "method_not_allowed")
                    }
                }
            }
            #expect(try await cloud.request(.get, "/v2/nothing", token: token).status == .notFound)
        }
    }
}
