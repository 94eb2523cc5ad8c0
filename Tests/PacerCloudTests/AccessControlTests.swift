import CloudModel
import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PacerCloud
import PacerTestSupport
import Synchronization
import Testing

/// Rate limits, revoked and removed devices, links and logs, through the API; each tries to
/// get past the rule it checks.
@Suite("pacer-cloud: access control", .timeLimit(.minutes(10)))
struct AccessControlTests {
    static func limits(page: RateLimit? = nil, device: RateLimit? = nil, address: RateLimit? = nil) -> CloudConfiguration {
        CloudConfiguration(rateLimits: RateLimits(alertPagePerAddress: page, uploadPerDevice: device, uploadPerAddress: address))
    }

    static let three = RateLimit(burst: 3, period: .seconds(30))  // 3 at once, then one per 10 s

    @Test("alert page lookups over the limit get 429 with Retry-After, as HTML with the page's headers", arguments: Backend.allCases)
    func alertPageLimited(backend: Backend) async throws {
        let clock = SteppedClock()
        try await Cloud.with(backend, configuration: Self.limits(page: Self.three), now: clock.now) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let page = try #require(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0)).object["page"] as? String)
            let path = String(page[try #require(page.range(of: "/a/")).lowerBound...])
            #expect(try await cloud.request(.get, path, token: nil).status == .ok)
            // Guesses count as much as the real page.
            #expect(try await cloud.request(.get, "/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", token: nil).status == .notFound)
            #expect(try await cloud.request(.get, path, token: nil).status == .ok)
            let refused = try await cloud.request(.get, path, token: nil)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.retryAfter] == "10")
            #expect(refused.headers[.contentType] == "text/html; charset=utf-8")
            #expect(refused.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(refused.text.contains("Try again in 10 s"))
            #expect(!refused.text.contains("SOS"))  // nothing of the alert is shown
            clock.advance(.seconds(4))
            #expect(try await cloud.request(.get, path, token: nil).headers[.retryAfter] == "6")
            clock.advance(.seconds(6))
            #expect(try await cloud.request(.get, path, token: nil).status == .ok)
        }
    }

    @Test("uploads over the device's limit get 429 with Retry-After; reads, other devices and alerts go on", arguments: Backend.allCases)
    func uploadsLimitedPerDevice(backend: Backend) async throws {
        let clock = SteppedClock()
        try await Cloud.with(backend, configuration: Self.limits(device: Self.three), now: clock.now) { cloud in
            let a = try await cloud.addDevice("a")
            let b = try await cloud.addDevice("b")
            let run = Track.runID()
            for seq in 0..<3 {
                #expect(try await cloud.putChunk(run, seq, Track.chunk(Track.samples(5, from: seq * 5)), token: a).status == .created)
            }
            let refused = try await cloud.putChunk(run, 3, Track.chunk(Track.samples(5, from: 15)), token: a)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.errorCode == "rate_limited")
            #expect(refused.headers[.retryAfter] == "10")
            #expect(refused.errorMessage.contains("this device"))
            #expect(try await cloud.store.counts().chunks == 3)  // refused before anything was stored
            let position: [String: Any] = ["time": "2026-05-10T07:30:00.000Z", "lat": 45.5, "lon": 9.2]
            #expect(try await cloud.json(.put, "/v1/position", token: a, position).status == .tooManyRequests)
            #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: a, Track.summary(chunks: 4)).status == .tooManyRequests)
            // Alerts are never limited: an SOS must get through.
            for seq in 0..<10 {
                #expect(try await cloud.json(.post, "/v1/alerts", token: a, AlertTests.message(Track.runID(), seq)).status == .created)
            }
            #expect(try await cloud.request(.get, "/v1/runs", token: a).status == .ok)
            #expect(try await cloud.putChunk(Track.runID(), 0, Track.chunk(Track.samples(5)), token: b).status == .created)
            // A wrong token is 401, not 429: the device limit needs a device.
            #expect(try await cloud.putChunk(run, 3, Track.chunk(Track.samples(5)), token: "not-a-token").status == .unauthorized)
            clock.advance(.seconds(10))
            #expect(try await cloud.putChunk(run, 3, Track.chunk(Track.samples(5, from: 15)), token: a).status == .created)
        }
    }

    @Test("uploads per address are limited before the token is looked at; alerts are not", arguments: Backend.allCases)
    func uploadsLimitedPerAddress(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: Self.limits(address: Self.three), now: SteppedClock().now) { cloud in
            let a = try await cloud.addDevice("a")
            for _ in 0..<3 {
                #expect(try await cloud.putChunk(Track.runID(), 0, Track.chunk(Track.samples(5)), token: "guessed-token").status == .unauthorized)
            }
            let refused = try await cloud.putChunk(Track.runID(), 0, Track.chunk(Track.samples(5)), token: a)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.errorMessage.contains("this address"))
            #expect(try await cloud.json(.post, "/v1/alerts", token: a, AlertTests.message(Track.runID(), 0)).status == .created)
        }
    }

    @Test("an IPv6 client is limited by its /64, whichever of its addresses it uses", arguments: Backend.allCases)
    func ipv6ClientsByPrefix(backend: Backend) async throws {
        var configuration = Self.limits(address: Self.three)
        configuration.trustedProxies = ["127.0.0.1", "::1"]
        try await Cloud.with(backend, configuration: configuration, now: SteppedClock().now, testing: .live) { cloud in
            func upload(from address: String) async throws -> HTTPResponse.Status {
                var headers: HTTPFields = [.contentType: "application/x-pacer-track"]
                headers[HTTPField.Name("X-Forwarded-For")!] = address
                return try await cloud.request(.put, "/v1/runs/\(Track.runID())/chunks/0", token: "guessed-token",
                                               body: Track.chunk(Track.samples(5)), headers: headers).status
            }
            var statuses: [HTTPResponse.Status] = []
            for address in ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2::3", "2001:db8:1:2:ffff:ffff:ffff:9", "2001:db8:1:3::1", "198.51.100.7"] {
                statuses.append(try await upload(from: address))
            }
            // The fourth is a new address of the same /64; the fifth is another /64.
            #expect(statuses == [.unauthorized, .unauthorized, .unauthorized, .tooManyRequests, .unauthorized, .unauthorized])
        }
    }

    @Test("with the default limits a device's 24 h backlog (150 chunks, summaries, a position) drains without a 429", arguments: Backend.allCases)
    func backlogDrains(backend: Backend) async throws {
        // The clock stands still: all of it must fit in the bursts, whatever the refill.
        try await Cloud.with(backend, now: SteppedClock().now) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            var statuses: [HTTPResponse.Status] = []
            for run in 0..<3 {
                let runID = Track.runID()
                for seq in 0..<50 {
                    statuses.append(try await cloud.putChunk(runID, seq, Track.chunk(Track.samples(3, from: run * 1000 + seq * 3)), token: token).status)
                }
                statuses.append(try await cloud.json(.put, "/v1/runs/\(runID)", token: token, Track.summary(chunks: 50)).status)
            }
            let position: [String: Any] = ["time": "2026-05-10T07:30:00.000Z", "lat": 45.5, "lon": 9.2]
            statuses.append(try await cloud.json(.put, "/v1/position", token: token, position).status)
            #expect(statuses.count == 154)
            #expect(statuses.allSatisfy { $0 == .created || $0 == .ok }, "\(Set(statuses.map(\.code)))")
        }
    }

    @Test("a revoked token gets 401 at once; its device's data stays; another device is untouched", arguments: Backend.allCases)
    func revokedToken(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let other = try await cloud.addDevice("pacer-8")
            let run = Track.runID()
            #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(5)), token: token).status == .created)
            #expect(try await cloud.store.devices.revokeDevice(name: "pacer-7"))
            for uri in ["/v1/runs", "/v1/position", "/v1/alerts"] {
                let response = try await cloud.request(.get, uri, token: token)
                #expect(response.status == .unauthorized, "\(uri)")
            }
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0)).status == .unauthorized)
            #expect(try await cloud.request(.get, "/v1/runs", token: other).status == .ok)
            #expect(try await cloud.store.counts().chunks == 1)
            #expect(try await cloud.store.devices.devices().map(\.revoked) == [true, false])
            #expect(try await cloud.store.devices.revokeDevice(name: "nobody") == false)
            // Its token's hash is gone from the table: not even the stored hash authenticates.
            #expect(try await cloud.store.devices.device(tokenHash: Tokens.hash(token)) == nil)
        }
    }

    @Test("a removed device loses its token, runs, position, alerts and pages", arguments: Backend.allCases)
    func removedDevice(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let other = try await cloud.addDevice("pacer-8")
            for owner in [token, other] {
                let run = Track.runID()
                #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(5)), token: owner).status == .created)
                #expect(try await cloud.putChunk(run, 1, Track.chunk(Track.samples(5, from: 5)), token: owner).status == .created)
                #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: owner, Track.summary(chunks: 2)).status == .created)
                #expect(try await cloud.json(.put, "/v1/position", token: owner, ["time": "2026-05-10T07:30:00.000Z", "lat": 45.5, "lon": 9.2]).status == .ok)
            }
            let alert = Track.runID()
            let page = try #require(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 0)).object["page"] as? String)
            #expect(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(alert, 1, type: "cancelled")).status == .created)
            let path = String(page[page.range(of: "/a/")!.lowerBound...])

            let removed = try #require(try await cloud.store.removeDevice(name: "pacer-7"))
            var expected = StoreCounts()
            (expected.devices, expected.runs, expected.chunks, expected.positions, expected.alerts, expected.alertMessages) = (1, 1, 2, 1, 1, 2)
            #expect(removed == expected)
            #expect(try await cloud.request(.get, "/v1/runs", token: token).status == .unauthorized)
            #expect(try await cloud.request(.get, path, token: nil).status == .notFound)
            let left = try await cloud.store.counts()
            #expect((left.devices, left.runs, left.chunks, left.positions, left.alerts) == (1, 1, 2, 1, 0))
            #expect(try await cloud.store.removeDevice(name: "pacer-7") == nil)
            // The name is free again, with a new token.
            let again = try await cloud.addDevice("pacer-7")
            #expect(try await cloud.request(.get, "/v1/runs", token: again).status == .ok)
        }
    }

    @Test("two instances on one PostgreSQL both refuse a token revoked by a third connection at once")
    func revokedAcrossInstances() async throws {
        let server = try await offPool { try PostgresServer() }
        defer { server.stop() }
        let url = server.url()
        let admin = try await CloudStore.open(DatabaseURL(url))
        try await admin.withRunning {
            try await admin.migrate()
            let token = try await CloudApplication.addDevice(store: admin, name: "pacer-7", email: nil, webhook: nil).1
            let first = try CloudApplication.make(store: try await CloudStore.open(DatabaseURL(url)), configuration: CloudConfiguration())
            let second = try CloudApplication.make(store: try await CloudStore.open(DatabaseURL(url)), configuration: CloudConfiguration())
            try await first.test(.router) { one async throws -> Void in
                try await second.test(.router) { two async throws -> Void in
                    let auth: HTTPFields = [.authorization: "Bearer \(token)"]
                    for client in [one, two] {
                        // Warm: a cache, if there were one, would hold the device now.
                        #expect(try await client.execute(uri: "/v1/runs", method: .get, headers: auth).status == .ok)
                        #expect(try await client.execute(uri: "/v1/runs", method: .get, headers: auth).status == .ok)
                    }
                    #expect(try await admin.devices.revokeDevice(name: "pacer-7"))
                    for client in [one, two] {
                        #expect(try await client.execute(uri: "/v1/runs", method: .get, headers: auth).status == .unauthorized)
                    }
                }
            }
        }
    }

    @Test("links come from the public URL, never from the Host header", arguments: Backend.allCases)
    func linksIgnoreHost(backend: Backend) async throws {
        let evil: HTTPFields = [.init("Host")!: "evil.example"]
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let reply = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0), headers: evil)
            // The harness binds 127.0.0.1:8080 without a public URL: links name the loopback bind.
            #expect((reply.object["page"] as? String)?.hasPrefix("http://127.0.0.1:8080/a/") == true)
            let list = try await cloud.request(.get, "/v1/alerts", token: token, headers: evil)
            #expect(!list.text.contains("evil.example"))
        }
        try await Cloud.with(backend, configuration: CloudConfiguration(publicURL: "https://cloud.example.org/")) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let reply = try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0), headers: evil)
            #expect((reply.object["page"] as? String)?.hasPrefix("https://cloud.example.org/a/") == true)
        }
    }

    @Test("the link base: a public URL always, a loopback bind's own address, else a refusal")
    func linkBase() throws {
        let none = CloudConfiguration()
        #expect(try none.linkBase(host: "127.0.0.1", port: 8080) == "http://127.0.0.1:8080")
        #expect(try none.linkBase(host: "::1", port: 9000) == "http://[::1]:9000")
        #expect(try none.linkBase(host: "localhost", port: 80) == "http://localhost:80")
        for host in ["0.0.0.0", "::", "192.0.2.7", "cloud.example.org"] {
            #expect(throws: ConfigurationError.self, "\(host)") { try none.linkBase(host: host, port: 8080) }
        }
        let public_ = CloudConfiguration(publicURL: "https://cloud.example.org/pacer/")
        #expect(try public_.linkBase(host: "0.0.0.0", port: 8080) == "https://cloud.example.org/pacer")
        for bad in ["cloud.example.org", "ftp://cloud.example.org", "https://", "https://a.example?x=1", "https://a.example/#f",
                    "https://user@a.example", "https://a.example/\r\nBcc:"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try CloudConfiguration(publicURL: bad).linkBase(host: "127.0.0.1", port: 1) }
        }
    }

    @Test("a 500 on an alert page logs neither the page's secret nor the bearer token")
    func secretsStayOutOfLogs() async throws {
        let log = LogCapture()
        try await Cloud.with(.sqlite, logger: Logger(label: "pacer-cloud") { _ in CapturingLogHandler(sink: log) }) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let page = try #require(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0)).object["page"] as? String)
            let secret = String(page.split(separator: "/").last!)
            // The injected fault: the alert table goes away under the running server.
            let database = try #require(cloud.databasePath)
            // The CLI waits for the server's writer as any other writer must (it has no busy
            // timeout of its own: a transaction in progress made it fail with "database is locked").
            let dropped = try await offPool { try DaemonFixture.runBlocking("/usr/bin/sqlite3", ["-cmd", ".timeout 10000", database, "DROP TABLE alert"]) }
            #expect(dropped.status == 0, "\(dropped.stderr)")
            let failed = try await cloud.request(.get, "/a/\(secret)", token: token)
            #expect(failed.status == .internalServerError)
            let lines = log.lines
            #expect(lines.contains { $0.contains("GET /a/<redacted> failed") && $0.contains("no such table") }, "\(lines)")
            #expect(!lines.contains { $0.contains(secret) || $0.contains(token) }, "\(lines)")
        }
    }

    @Test("redaction: page secrets in paths, tokens and secrets inside error text")
    func redaction() {
        #expect(LogRedaction.path("/a/Zm9vYmFyYmF6cXV4cXV1eA") == "/a/<redacted>")
        #expect(LogRedaction.path("/a/Zm9vYmFyYmF6cXV4cXV1eA/x?y=1") == "/a/<redacted>")
        #expect(LogRedaction.path("/v1/runs/3f2b?secret=1") == "/v1/runs/3f2b")
        #expect(LogRedaction.path("/health") == "/health")
        let secrets = LogRedaction.secrets(path: "/a/Zm9vYmFyYmF6cXV4cXV1eA", authorization: "Bearer tok-1234567890")
        #expect(LogRedaction.text("bind Zm9vYmFyYmF6cXV4cXV1eA and tok-1234567890", removing: secrets) == "bind <redacted> and <redacted>")
    }
}

/// Every log line, with its metadata, as the handlers received them.
final class LogCapture: Sendable {
    private let stored = Mutex<[String]>([])
    var lines: [String] { stored.withLock { $0 } }
    func append(_ line: String) { stored.withLock { $0.append(line) } }
}

/// Logs everything (trace and up) into a `LogCapture`, metadata included: a secret put there
/// by a middleware would be caught too.
struct CapturingLogHandler: LogHandler {
    let sink: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        sink.append("\(event.level) \(event.message) \(all)")
    }
}
