import Foundation
import PacerTestSupport
import Testing

/// README's deployment: config/nginx/pacer-cloud.conf (Debian's nginx terminating TLS) in front
/// of the built pacer-cloud, on free ports with a throwaway CA.
@Suite(.timeLimit(.minutes(10))) struct ReverseProxyTests {
    /// curl, trusting only the proxy's CA: status, headers and body.
    static func curl(_ url: String, ca: String, _ extra: [String] = []) throws -> (status: Int, headers: String, body: String) {
        let directory = try TemporaryDirectory(prefix: "pacer-curl")
        let result = try DaemonFixture.runBlocking("/usr/bin/curl", [
            "-sS", "--max-time", "10", "--cacert", ca, "-D", directory.file("headers"), "-o", directory.file("body"),
            "-w", "%{http_code}",
        ] + extra + [url])
        let read = { (name: String) in (try? String(contentsOfFile: directory.file(name), encoding: .utf8)) ?? "" }
        return (Int(result.stdout) ?? 0, read("headers"), read("body"))
    }

    @Test("requests reach pacer-cloud over TLS through nginx; plain HTTP is redirected to https")
    func throughProxy() async throws {
        let cloud = try await offPool { try CloudServer() }
        let proxy = try await offPool { try NginxProxy(upstreamPort: cloud.port) }
        defer {
            proxy.stop()
            cloud.stop()
        }
        let ca = proxy.certificates.caFile
        let health = try await offPool { try Self.curl(proxy.url + "/health", ca: ca) }
        #expect(health.status == 200, "\(health) \(proxy.errorLog())")
        #expect(health.headers.lowercased().contains("strict-transport-security: max-age=63072000"))
        let position = #"{"time":"2026-05-10T07:30:00.000Z","lat":45.5,"lon":9.2,"accuracy_m":5}"#
        let put = try await offPool {
            try Self.curl(proxy.url + "/v1/position", ca: ca, ["-X", "PUT", "-H", "Authorization: Bearer \(cloud.token)",
                                                                "-H", "Content-Type: application/json", "--data-binary", position])
        }
        #expect((200..<300).contains(put.status), "\(put)")
        let runs = try await offPool { try Self.curl(proxy.url + "/v1/runs", ca: ca, ["-H", "Authorization: Bearer \(cloud.token)"]) }
        #expect(runs.status == 200, "\(runs)")
        #expect(try await offPool { try Self.curl(proxy.url + "/v1/runs", ca: ca) }.status == 401)
        // Over 1 MiB: pacer-cloud's own 413 with its JSON error comes back, not nginx's page.
        let big = proxy.directory.file("big.json")
        try Data(repeating: UInt8(ascii: "x"), count: 1_100_000).write(to: URL(fileURLWithPath: big))
        let tooLarge = try await offPool {
            try Self.curl(proxy.url + "/v1/position", ca: ca, ["-X", "PUT", "-H", "Authorization: Bearer \(cloud.token)",
                                                                "-H", "Content-Type: application/json", "--data-binary", "@" + big])
        }
        #expect(tooLarge.status == 413)
        #expect(tooLarge.body.contains("\"error\""), "\(tooLarge.body.prefix(200))")

        let plain = try await offPool {
            try DaemonFixture.runBlocking("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}",
                                                            "http://127.0.0.1:\(proxy.httpPort)/v1/runs"])
        }
        #expect(plain.stdout == "301 https://127.0.0.1/v1/runs", "\(plain.stdout) \(plain.stderr)")
    }

    @Test("the backend gets X-Forwarded-Proto https and X-Forwarded-For of the client, never the client's own")
    func forwardedHeaders() async throws {
        let backend = try await offPool { try HTTPSSink(tls: false, rules: .init(status: 200)) }
        let proxy = try await offPool { try NginxProxy(upstreamPort: backend.port) }
        defer {
            proxy.stop()
            backend.stop()
        }
        let answer = try await offPool {
            try Self.curl(proxy.url + "/v1/device/events", ca: proxy.certificates.caFile,
                          ["-H", "X-Forwarded-For: 203.0.113.9", "-H", "X-Forwarded-Proto: http"])
        }
        #expect(answer.status == 200, "\(answer) \(proxy.errorLog())")
        let request = try #require(try await offPool { backend.waitForRequests(count: 1) }.first)
        #expect(request.path == "/v1/device/events")
        #expect(request.headerCount("X-Forwarded-For") == 1)
        #expect(request.header("X-Forwarded-For") == "127.0.0.1")
        #expect(request.headerCount("X-Forwarded-Proto") == 1)
        #expect(request.header("X-Forwarded-Proto") == "https")
        #expect(request.header("Host") == "127.0.0.1")
    }
}
