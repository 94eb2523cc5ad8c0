import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PacerCloud
import PacerTestSupport
import Testing

/// The built pacer-cloud as an operator runs it, and a live socket for what needs a real peer.
@Suite("pacer-cloud: command line and live socket", .timeLimit(.minutes(10)))
struct CLITests {
    static let binary = DaemonFixture.binary("pacer-cloud")

    static func run(_ arguments: [String]) async throws -> DaemonFixture.CtlResult {
        try await offPool { try DaemonFixture.runBlocking(binary, arguments) }
    }

    @Test("serve on a non-loopback address without a public URL refuses to start: exit 78 and why")
    func refusesWithoutPublicURL() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-cli")
        let port = String(try FreePort.tcp())
        for host in ["0.0.0.0", "::"] {
            let result = try await Self.run(["serve", "--host", host, "--port", port, "--database", "sqlite:" + directory.file("cloud.db")])
            #expect(result.status == 78, "\(result.stderr)")
            #expect(result.stderr.contains("refusing to listen on \(host) without --public-url"), "\(result.stderr)")
            #expect(result.stderr.contains("never from a request's Host header"))
        }
        // The same from a config file; and a bad public URL is refused the same way.
        try "database = sqlite:\(directory.file("cloud.db"))\nhost = 0.0.0.0\nport = \(port)\n"
            .write(toFile: directory.file("pacer-cloud.conf"), atomically: true, encoding: .utf8)
        let fromFile = try await Self.run(["serve", "--config", directory.file("pacer-cloud.conf")])
        #expect(fromFile.status == 78 && fromFile.stderr.contains("refusing to listen on 0.0.0.0"), "\(fromFile.stderr)")
        let badURL = try await Self.run(["serve", "--config", directory.file("pacer-cloud.conf"), "--public-url", "cloud.example.org"])
        #expect(badURL.status == 78 && badURL.stderr.contains("is not an http(s) URL"), "\(badURL.stderr)")
        // Nothing was created: it stopped before opening the database.
        #expect(!FileManager.default.fileExists(atPath: directory.file("cloud.db")))
    }

    @Test("the shipped config file starts the server (its database and port overridden here)")
    func shippedConfigServes() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-conf")
        let port = try FreePort.tcp()
        let config = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/pacer-cloud.conf").standardized.path
        let process = try ChildProcess(Self.binary, ["serve", "--config", config, "--database", "sqlite:" + directory.file("cloud.db"),
                                                     "--port", String(port)], stderr: .file(directory.file("serve.err")))
        defer { process.killAndReap() }
        var status = 0
        for _ in 0..<200 where status != 200 && process.isRunning {
            status = (try? await offPool { try CloudServer.get("http://127.0.0.1:\(port)/health", token: nil).status }) ?? 0
            if status != 200 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(status == 200, "\((try? String(contentsOfFile: directory.file("serve.err"), encoding: .utf8)) ?? "")")
    }

    @Test("device revoke: the running server answers 401 at once; device remove says what it deleted")
    func revokeAndRemove() async throws {
        let server = try await offPool { try CloudServer(device: "pacer-7") }
        defer { server.stop() }
        let database = ["--database", server.databaseURL]
        #expect(try await offPool { try CloudServer.get(server.url + "/v1/runs", token: server.token).status } == 200)

        let unknown = try await Self.run(["device", "revoke", "nobody"] + database)
        #expect(unknown.status != 0 && unknown.stderr.contains("no device is named 'nobody'"), "\(unknown.stderr)")

        let revoked = try await Self.run(["device", "revoke", "pacer-7"] + database)
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(revoked.stdout.contains("token revoked; its requests get 401 from now on. Its runs and alerts are kept"))
        #expect(try await offPool { try CloudServer.get(server.url + "/v1/runs", token: server.token).status } == 401)
        let list = try await Self.run(["device", "list"] + database)
        #expect(list.stdout.hasPrefix("pacer-7\t") && list.stdout.contains("\trevoked"), "\(list.stdout)")

        let second = try await Self.run(["device", "add", "pacer-8"] + database)
        let token = try #require(second.stdout.split(separator: "\n").first.map(String.init))
        let chunk = Track.chunk(Track.samples(5))
        let upload = try await offPool {
            try DaemonFixture.runBlocking("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT",
                                                            "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/x-pacer-track",
                                                            "--data-binary", String(decoding: chunk, as: UTF8.self),
                                                            server.url + "/v1/runs/\(Track.runID())/chunks/0"])
        }
        #expect(upload.stdout == "201")
        let removed = try await Self.run(["device", "remove", "pacer-8"] + database)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("device pacer-8 removed with its token: deleted 0 runs (1 chunks), 0 live position, 0 alerts"),
                "\(removed.stdout)")
        #expect(removed.stdout.contains("already queued are still sent"))
        #expect(try await offPool { try CloudServer.get(server.url + "/v1/runs", token: token).status } == 401)
        let after = try await Self.run(["device", "list"] + database)
        #expect(!after.stdout.contains("pacer-8"))
    }

    @Test("user add|list|confirm|delete and device assign, as an operator runs them")
    func userCommands() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-users")
        let database = ["--database", "sqlite:" + directory.file("cloud.db")]
        /// pacer-cloud with `stdin` piped in (the password is never an argument).
        func run(_ arguments: [String], stdin: String) async throws -> DaemonFixture.CtlResult {
            let quoted = ([Self.binary] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            return try await offPool { try DaemonFixture.runBlocking("/bin/sh", ["-c", "printf '%s\\n' '\(stdin)' | \(quoted)"]) }
        }
        let added = try await run(["user", "add", "Ann@Example.org", "--display-name", "Ann", "--timezone", "Europe/Rome"] + database,
                                  stdin: "a long enough password")
        #expect(added.status == 0 && added.stdout.hasPrefix("account ann@example.org added"), "\(added.stderr)")
        let weak = try await run(["user", "add", "bob@example.org"] + database, stdin: "password1234")
        #expect(weak.status != 0 && weak.stderr.contains("password is one of the most common passwords"), "\(weak.stderr)")
        let taken = try await run(["user", "add", "ANN@example.org"] + database, stdin: "another long password")
        #expect(taken.status != 0 && taken.stderr.contains("exists already"), "\(taken.stderr)")
        let noPassword = try await run(["user", "add", "carl@example.org"] + database, stdin: "")
        #expect(noPassword.status != 0 && noPassword.stderr.contains("standard input"), "\(noPassword.stderr)")

        var list = try await Self.run(["user", "list"] + database)
        #expect(list.stdout.hasPrefix("ann@example.org\t") && list.stdout.contains("\tunconfirmed\tAnn\tEurope/Rome"), "\(list.stdout)")
        #expect(try await Self.run(["user", "confirm", "ann@example.org"] + database).status == 0)
        list = try await Self.run(["user", "list"] + database)
        #expect(list.stdout.contains("\tconfirmed\tAnn"), "\(list.stdout)")

        #expect(try await Self.run(["device", "add", "pacer-7"] + database).status == 0)
        let unknownAccount = try await Self.run(["device", "assign", "pacer-7", "nobody@example.org"] + database)
        #expect(unknownAccount.status != 0 && unknownAccount.stderr.contains("no account has the address 'nobody@example.org'"))
        let assigned = try await Self.run(["device", "assign", "pacer-7", "ann@example.org"] + database)
        #expect(assigned.status == 0 && assigned.stdout.contains("now belongs to ann@example.org"), "\(assigned.stderr)")
        #expect(try await Self.run(["device", "list"] + database).stdout.contains("\tann@example.org"))

        let deleted = try await Self.run(["user", "delete", "ann@example.org"] + database)
        #expect(deleted.status == 0 && deleted.stdout.contains("deleted with 1 devices"), "\(deleted.stdout) \(deleted.stderr)")
        #expect(try await Self.run(["user", "list"] + database).stdout.isEmpty)
        #expect(try await Self.run(["device", "list"] + database).stdout.isEmpty)
        #expect(try await Self.run(["user", "delete", "ann@example.org"] + database).status != 0)

        for bad in [["--session-idle", "10"], ["--session-idle", "7200", "--session-max", "3600"]] {
            let refused = try await Self.run(["serve", "--port", String(try FreePort.tcp())] + bad + database)
            #expect(refused.status != 0 && refused.stderr.contains("--session-idle and --session-max are seconds from 60"), "\(refused.stderr)")
        }
    }

    @Test("X-Forwarded-For is believed only from a trusted proxy: a spoofed one cannot dodge the limit")
    func forwardedFor() async throws {
        for trusted in [false, true] {
            let directory = try TemporaryDirectory(prefix: "pacer-cloud-xff")
            let configuration = CloudConfiguration(
                rateLimits: RateLimits(alertPagePerAddress: RateLimit(burst: 1, period: .seconds(3600)), uploadPerDevice: nil, uploadPerAddress: nil),
                trustedProxies: trusted ? ["127.0.0.1", "::1"] : [])
            let app = try CloudApplication.make(store: try await CloudStore.open(.sqlite(path: directory.file("cloud.db"))), configuration: configuration)
            try await app.test(.live) { client async throws -> Void in
                #expect(try await Self.lookup(client, from: "198.51.100.1") == .notFound)
                // Another claimed address: a new client only when the peer is a trusted proxy.
                #expect(try await Self.lookup(client, from: "198.51.100.2") == (trusted ? .notFound : .tooManyRequests), "trusted: \(trusted)")
                #expect(try await Self.lookup(client, from: "198.51.100.1") == .tooManyRequests)
                // Prepending a fake address does not help either: the proxy's own entry is rightmost.
                #expect(try await Self.lookup(client, from: "203.0.113.50, 198.51.100.1") == .tooManyRequests)
            }
        }
    }

    /// An alert page lookup (of no alert) claiming to come from `address`.
    static func lookup(_ client: some TestClientProtocol, from address: String) async throws -> HTTPResponse.Status {
        try await client.execute(uri: "/a/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", method: .get, headers: [.init("X-Forwarded-For")!: address]).status
    }
}
