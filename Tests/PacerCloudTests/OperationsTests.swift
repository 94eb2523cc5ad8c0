@testable import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerTestSupport
import Synchronization
import Testing
import Threads

/// What an operator runs pacer-cloud with (issue 31, deliverable 7): /metrics, and backup and restore.
@Suite("pacer-cloud: operations (metrics, backup, restore)", .timeLimit(.minutes(10)))
struct OperationsTests {
    static let metricsToken = "metrics-token-0123456789abcdef"

    /// The value of the one series of `name` whose labels contain every one of `labels`, or nil.
    static func value(_ exposition: String, _ name: String, _ labels: [String] = []) -> Double? {
        let lines = exposition.split(separator: "\n").filter { line in
            !line.hasPrefix("#") && (line.hasPrefix(name + "{") || line.hasPrefix(name + " ")) && labels.allSatisfy { line.contains($0) }
        }
        guard let line = lines.first, lines.count == 1 else { return nil }
        return line.split(separator: " ").last.flatMap { Double($0) }
    }

    static func scrape(_ cloud: Cloud) async throws -> String {
        let response = try await cloud.request(.get, "/metrics", token: metricsToken)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
        return response.text
    }

    @Test("/metrics is not served by default", arguments: Backend.allCases)
    func metricsAreOffByDefault(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let response = try await cloud.request(.get, "/metrics", token: Self.metricsToken)
            #expect(response.status == .notFound, "\(response.text)")
            #expect(!response.text.contains("pacer_cloud_"))
        }
    }

    @Test("/metrics refuses a missing or wrong token; requests, latencies, rate-limit refusals and the database are counted",
          arguments: Backend.allCases)
    func metricsCountRequests(backend: Backend) async throws {
        var configuration = CloudConfiguration()
        configuration.metricsAccess = MetricsSettings(token: Self.metricsToken)
        configuration.rateLimits.uploadPerDevice = RateLimit(parsing: "1/3600")
        try await Cloud.with(backend, configuration: configuration) { cloud in
            for token in [nil, "wrong", Self.metricsToken + "x"] {
                let refused = try await cloud.request(.get, "/metrics", token: token)
                #expect(refused.status == .unauthorized, "\(token ?? "no token")")
                #expect(!refused.text.contains("pacer_cloud_"))
            }
            let before = try await Self.scrape(cloud)
            let healthBefore = Self.value(before, "pacer_cloud_http_requests_total", [#"route="/health""#, #"status="200""#]) ?? 0

            let device = try await cloud.addDevice("pacer-metrics")
            for _ in 0..<3 { #expect(try await cloud.request(.get, "/health", token: nil).status == .ok) }
            let run = Track.runID()
            #expect(try await cloud.request(.get, "/v1/runs/\(run)", token: device).status == .notFound)
            #expect(try await cloud.request(.get, "/no/such/path/\(run)", token: nil).status == .notFound)
            // The first upload takes the device's one token, the second is refused by the limit.
            _ = try await cloud.json(.put, "/v1/position", token: device, ["lat": 45.5, "lon": 9.1])
            #expect(try await cloud.json(.put, "/v1/position", token: device, ["lat": 45.5, "lon": 9.1]).status == .tooManyRequests)

            let after = try await Self.scrape(cloud)
            #expect(Self.value(after, "pacer_cloud_http_requests_total", [#"route="/health""#, #"method="GET""#, #"status="200""#])
                == healthBefore + 3, "\(after)")
            #expect(Self.value(after, "pacer_cloud_http_request_duration_seconds_count", [#"route="/health""#]) == healthBefore + 3)
            #expect(Self.value(after, "pacer_cloud_http_request_duration_seconds_bucket", [#"route="/health""#, #"le="+Inf""#])
                == healthBefore + 3)
            // The route's pattern, never the raw path: no id in any label.
            #expect(Self.value(after, "pacer_cloud_http_requests_total", [#"route="/v1/runs/{run_id}""#, #"status="404""#]) == 1,
                    "\(after)")
            #expect(Self.value(after, "pacer_cloud_http_requests_total", [#"route="unmatched""#, #"status="404""#]) == 1)
            #expect(!after.contains(run))
            #expect(Self.value(after, "pacer_cloud_http_requests_total", [#"route="/v1/position""#, #"status="429""#]) == 1)
            #expect(Self.value(after, "pacer_cloud_rate_limit_refusals_total", [#"limit="uploads""#]) == 1, "\(after)")
            // Nothing is in flight between requests; the database was used and timed.
            #expect(Self.value(after, "pacer_cloud_http_requests_in_flight", [#"route="/health""#]) == 0)
            // SQLite: every statement timed. Both: the forwarder's probe (once the first outbox pass ran).
            if backend == .sqlite {
                #expect((Self.value(after, "pacer_cloud_database_seconds_count", [#"store="sqlite""#]) ?? 0) > 0, "\(after)")
            }
            let store = backend == .sqlite ? "sqlite" : "postgres"
            var probes = Self.value(after, "pacer_cloud_database_probe_seconds_count", [#"store="\#(store)""#]) ?? 0
            for _ in 0..<100 where probes == 0 {
                try await Task.sleep(for: .milliseconds(50))
                probes = Self.value(try await Self.scrape(cloud), "pacer_cloud_database_probe_seconds_count", [#"store="\#(store)""#]) ?? 0
            }
            #expect(probes > 0, "\(after)")
        }
    }

    @Test("the gauges other code updates: connections and streams go up and down")
    func gauges() {
        let metrics = CloudMetrics()
        metrics.connectionOpened()
        metrics.connectionOpened()
        metrics.connectionClosed()
        metrics.streamOpened()
        metrics.outbox(pending: 3, lagSeconds: 1.5)
        let text = metrics.exposition()
        #expect(Self.value(text, "pacer_cloud_open_connections") == 1, "\(text)")
        #expect(Self.value(text, "pacer_cloud_open_streams") == 1)
        #expect(Self.value(text, "pacer_cloud_outbox_pending") == 3)
        #expect(Self.value(text, "pacer_cloud_outbox_lag_seconds") == 1.5)
        metrics.streamClosed()
        #expect(Self.value(metrics.exposition(), "pacer_cloud_open_streams") == 0)
    }

    @Test("the outbox's depth and lag: an undeliverable webhook stays pending and its lag grows", arguments: Backend.allCases)
    func outboxGauges(backend: Backend) async throws {
        var configuration = CloudConfiguration(outboxPoll: .milliseconds(100))
        configuration.metricsAccess = MetricsSettings(token: Self.metricsToken)
        try await Cloud.with(backend, configuration: configuration) { cloud in
            // Port 9 (discard) on loopback: nothing listens, every attempt fails at once.
            let device = try await CloudApplication.addDevice(store: cloud.store, name: "pacer-hook", email: nil, webhook: "http://127.0.0.1:9/hook")
            let posted = try await cloud.json(.post, "/v1/alerts", token: device.token, AlertTests.message(UUID().uuidString.lowercased(), 0))
            #expect(posted.status.code < 300, "\(posted.text)")
            var text = ""
            for _ in 0..<100 {
                text = try await Self.scrape(cloud)
                if (Self.value(text, "pacer_cloud_forwards_total", [#"channel="webhook""#, #"result="failed""#]) ?? 0) >= 1,
                   Self.value(text, "pacer_cloud_outbox_pending") == 1 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(Self.value(text, "pacer_cloud_outbox_pending") == 1, "\(text)")
            #expect((Self.value(text, "pacer_cloud_forwards_total", [#"channel="webhook""#, #"result="failed""#]) ?? 0) >= 1)
            // The status as the store reports it: one pending; not due again until its backoff ends.
            let status = try await cloud.store.outbox.outboxStatus(nowMs: WallClock.milliseconds())
            #expect(status.pending == 1)
            let later = try await cloud.store.outbox.outboxStatus(nowMs: WallClock.milliseconds() + 3_600_000)
            #expect(later.lagMs > 3_000_000, "an item an hour overdue: \(later)")
        }
    }

    // MARK: The live server's options

    @Test("serve --metrics-listen: /metrics on its own address only; --metrics-token-file: a short token is refused")
    func metricsListener() async throws {
        let port = try FreePort.tcp()
        let server = try await offPool { try CloudServer(device: "pacer-7", serveArguments: ["--metrics-listen", "127.0.0.1:\(port)"]) }
        defer { server.stop() }
        #expect(try await offPool { try CloudServer.get(server.url + "/health", token: nil).status } == 200)
        #expect(try await offPool { try CloudServer.get(server.url + "/metrics", token: nil).status } == 404)
        let (status, body) = try await offPool { try CloudServer.get("http://127.0.0.1:\(port)/metrics", token: nil) }
        let text = String(decoding: body, as: UTF8.self)
        #expect(status == 200)
        #expect((Self.value(text, "pacer_cloud_http_requests_total", [#"route="/health""#, #"status="200""#]) ?? 0) >= 1, "\(text)")

        let directory = try TemporaryDirectory(prefix: "pacer-cloud-metrics")
        try "short\n".write(toFile: directory.file("token"), atomically: true, encoding: .utf8)
        let refused = try await CLITests.run(["serve", "--database", "sqlite:" + directory.file("cloud.db"), "--port", String(try FreePort.tcp()),
                                              "--metrics-token-file", directory.file("token")])
        #expect(refused.status != 0 && refused.stderr.contains("at least 16"), "\(refused.stderr)")
        let badListen = try await CLITests.run(["serve", "--database", "sqlite:" + directory.file("cloud.db"), "--metrics-listen", "9464"])
        #expect(badListen.status != 0 && badListen.stderr.contains("is not HOST:PORT"), "\(badListen.stderr)")
    }

    // MARK: Backup and restore

    @Test("SQLite: backup while a writer writes, restore into a fresh database, read back; the refusals")
    func sqliteRoundTrip() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-backup")
        let source = "sqlite:" + directory.file("cloud.db")
        let store = try await CloudStore.open(.sqlite(path: directory.file("cloud.db")))
        try await store.migrate()
        _ = try await CloudApplication.addDevice(store: store, name: "first", email: nil, webhook: nil)
        // A writer adds devices all through the backup, as a serving instance would write.
        let stop = Atomic<Bool>(false)
        let writer = Task {
            var added = 0
            while !stop.load(ordering: .relaxed), added < 5_000 {
                _ = try await CloudApplication.addDevice(store: store, name: "busy-\(added)", email: nil, webhook: nil)
                added += 1
            }
            return added
        }
        try await Task.sleep(for: .milliseconds(200))
        let backup = directory.file("backup.db")
        let made = try await CLITests.run(["backup", backup, "--database", source])
        stop.store(true, ordering: .relaxed)
        let written = try await writer.value
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("backed up to \(backup)"))
        #expect(written > 0)
        #expect(!FileManager.default.fileExists(atPath: backup + "-wal"), "the backup is one self-contained file")

        let again = try await CLITests.run(["backup", backup, "--database", source])
        #expect(again.status != 0 && again.stderr.contains("exists already"), "\(again.stderr)")

        let target = "sqlite:" + directory.file("restored.db")
        let restored = try await CLITests.run(["restore", backup, "--database", target])
        #expect(restored.status == 0, "\(restored.stderr)")
        let copy = try await CloudStore.open(.sqlite(path: directory.file("restored.db")))
        let devices = try await copy.devices.devices().map(\.name)
        #expect(devices.contains("first"))
        // A snapshot: the devices up to some moment, every one whole, none after a gap.
        let busy = devices.filter { $0.hasPrefix("busy-") }.compactMap { Int($0.dropFirst(5)) }.sorted()
        #expect(busy == Array(0..<busy.count), "a consistent prefix of the writes, got \(busy.count) of \(written)")
        #expect(busy.count <= written)

        let refused = try await CLITests.run(["restore", backup, "--database", target])
        #expect(refused.status != 0 && refused.stderr.contains("is not empty") && refused.stderr.contains("--force"), "\(refused.stderr)")
        let forced = try await CLITests.run(["restore", backup, "--database", target, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let missing = try await CLITests.run(["restore", directory.file("nothing.db"), "--database", "sqlite:" + directory.file("other.db")])
        #expect(missing.status != 0 && missing.stderr.contains("no backup at"), "\(missing.stderr)")
    }

    @Test("PostgreSQL: pg_dump backup, pg_restore into a fresh database, read back; the refusals")
    func postgresRoundTrip() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-backup")
        let source = try await Cloud.freshPostgresDatabase()
        let added = try await CLITests.run(["device", "add", "pacer-pg", "--database", source])
        #expect(added.status == 0, "\(added.stderr)")
        let backup = directory.file("cloud.dump")
        let made = try await CLITests.run(["backup", backup, "--database", source])
        #expect(made.status == 0, "\(made.stderr)")
        let again = try await CLITests.run(["backup", backup, "--database", source])
        #expect(again.status != 0 && again.stderr.contains("exists already"), "\(again.stderr)")

        let target = try await Cloud.freshPostgresDatabase()
        let restored = try await CLITests.run(["restore", backup, "--database", target])
        #expect(restored.status == 0, "\(restored.stderr)")
        let list = try await CLITests.run(["device", "list", "--database", target])
        #expect(list.stdout.hasPrefix("pacer-pg\t"), "\(list.stdout) \(list.stderr)")

        // The target now holds data: refused without --force, replaced with it.
        let refused = try await CLITests.run(["restore", backup, "--database", target])
        #expect(refused.status != 0 && refused.stderr.contains("is not empty") && refused.stderr.contains("--force"), "\(refused.stderr)")
        let forced = try await CLITests.run(["restore", backup, "--database", target, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        let listed = try await CLITests.run(["device", "list", "--database", target])
        #expect(listed.stdout.split(separator: "\n").count == 1, "\(listed.stdout)")
    }

    @Test("a PostgreSQL tool that is not installed is named, with the package to install")
    func missingTool() throws {
        #expect(throws: StoreError.self) { try CloudBackup.tool("pg_dump_not_installed", path: "/nonexistent") }
        do {
            _ = try CloudBackup.tool("pg_dump_not_installed", path: "")
        } catch let error as StoreError {
            #expect(error.message.contains("pg_dump_not_installed is not installed"))
            #expect(error.message.contains("postgresql-client"))
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(try CloudBackup.tool("pg_dump", path: "") == "/usr/lib/postgresql/15/bin/pg_dump")
    }
}
