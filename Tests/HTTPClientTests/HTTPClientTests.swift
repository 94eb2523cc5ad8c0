import Foundation
import Glibc
import Synchronization
import Testing

import HTTPClient
import PacerTestSupport

/// The error `body` threw; nil (and a recorded issue) when it returned a response.
/// (Closures do not infer typed throws yet, hence the cast.)
private func failure(_ body: () async throws -> HTTPResponse) async -> HTTPClientError? {
    do {
        let response = try await body()
        Issue.record("expected an error, got status \(response.status)")
        return nil
    } catch let error as HTTPClientError {
        return error
    } catch {
        Issue.record("not an HTTPClientError: \(error)")
        return nil
    }
}

private func sink(tls: Bool = true, _ rules: HTTPSSink.Rules = .init()) async throws -> HTTPSSink {
    try await offPool { try HTTPSSink(tls: tls, rules: rules) }
}

private func seconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) + Double(attoseconds) / 1e18
}

@Suite(.timeLimit(.minutes(10))) struct HTTPClientTests {
    @Test func postsJSONOverHTTPSWithThePrivateCA() async throws {
        let server = try await sink(.init(status: 201, body: #"{"id":"sos-1"}"#))
        let client = HTTPClient(configuration: .init(caFile: server.caFile, userAgent: "pacerd/test"))
        // Over 1 KiB: libcurl would add "Expect: 100-continue" to such a body if let.
        let text = #"{"kind":"sos","note":"\#(String(repeating: "é✓", count: 600))","lat":45.5035034}"#
        let response = try await client.perform(HTTPRequest(
            method: "POST", url: server.url + "/v1/alerts?device=pi-1",
            headers: [("Content-Type", "application/json"), ("X-Pacer-Device", "pi-1"), ("X-Empty", "")],
            body: Array(text.utf8)))

        #expect(response.status == 201)
        #expect(response.isSuccess)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"id":"sos-1"}"#)
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("Content-Length") == "14")

        let requests = server.requests()
        try #require(requests.count == 1)
        let request = requests[0]
        #expect(request.method == "POST")
        #expect(request.path == "/v1/alerts?device=pi-1")
        #expect(request.body == Array(text.utf8))
        #expect(request.bodyText == text)
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.headerCount("Content-Type") == 1)
        #expect(request.header("Content-Length") == String(text.utf8.count))
        #expect(request.header("X-Pacer-Device") == "pi-1")
        #expect(request.header("X-Empty") == "")
        #expect(request.header("User-Agent") == "pacerd/test")
        #expect(request.header("Host") == "127.0.0.1:\(server.port)")
        #expect(request.header("Expect") == nil)
        #expect(request.status == 201)
    }

    @Test func getOverPlainHTTPAndLocalhostByName() async throws {
        let server = try await sink(tls: false, .init(status: 200, body: "pong"))
        let response = try await HTTPClient().perform(HTTPRequest(url: "http://localhost:\(server.port)/ping"))
        #expect(response.status == 200)
        #expect(response.body == Array("pong".utf8))
        let request = try #require(server.requests().first)
        #expect(request.method == "GET")
        #expect(request.body.isEmpty)
        #expect(request.header("Content-Type") == nil)
    }

    @Test func withoutACAFileTheSystemStoreDoesNotTrustTheTestCA() async throws {
        let server = try await sink()
        let error = await failure { try await HTTPClient().perform(HTTPRequest(url: server.url + "/")) }
        guard case .tls(let detail) = error else {
            Issue.record("expected .tls, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("certificate"))
        #expect(server.requests().isEmpty)
    }

    @Test func aServerSignedByAnotherCAIsRefusedAndReceivesNothing() async throws {
        let server = try await sink()
        let otherDirectory = try TemporaryDirectory(prefix: "pacer-other-ca")
        let other = try await offPool { try HTTPSSink.Certificates.make(in: otherDirectory, name: "other") }
        let client = HTTPClient(configuration: .init(caFile: other.caFile))
        let error = await failure {
            try await client.perform(HTTPRequest(
                method: "POST", url: server.url + "/v1/alerts", headers: [("Content-Type", "application/json")],
                body: Array(#"{"secret":true}"#.utf8)))
        }
        guard case .tls(let detail) = error else {
            Issue.record("expected .tls, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("certificate"))
        #expect(error?.description.hasPrefix("TLS handshake failed") == true)
        // The server saw the handshake fail and got no request.
        let stderr = try await offPool { () -> String in
            let deadline = ContinuousClock.now + .seconds(5)
            while !server.standardError().contains("TLS handshake failed"), ContinuousClock.now < deadline {
                usleep(10_000)
            }
            return server.standardError()
        }
        #expect(stderr.contains("TLS handshake failed"))
        #expect(server.requests().isEmpty)
    }

    @Test func aPortNobodyListensOnCannotConnect() async throws {
        let port = try FreePort.tcp()
        let error = await failure {
            try await HTTPClient().perform(HTTPRequest(method: "POST", url: "http://127.0.0.1:\(port)/v1/alerts", body: [1]))
        }
        guard case .couldNotConnect(let host, let errorPort, let detail) = error else {
            Issue.record("expected .couldNotConnect, got \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(errorPort == Int(port))
        #expect(!detail.isEmpty)
        #expect(error?.description.hasPrefix("cannot connect to 127.0.0.1 port \(port): ") == true)
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let server = try await sink(.init(hang: true))
        let client = HTTPClient(configuration: .init(caFile: server.caFile))
        let clock = ContinuousClock()
        let start = clock.now
        let error = await failure {
            try await client.perform(HTTPRequest(method: "POST", url: server.url + "/", body: [0x7B, 0x7D], timeout: .seconds(1)))
        }
        let elapsed = clock.now - start
        guard case .timedOut(let after, let detail) = error else {
            Issue.record("expected .timedOut, got \(String(describing: error))")
            return
        }
        #expect(after == .seconds(1))
        #expect(detail.contains("timed out"))
        #expect(elapsed >= .milliseconds(950))
        // Returned at all: the server never answers, so this is the timeout, not a reply. How
        // promptly is not for a unit test on a loaded machine (the whole suite on two cores).
        #expect(elapsed < .seconds(15), "took \(seconds(elapsed)) s")
        // It did arrive; it just was never answered.
        #expect(server.requests().map(\.status) == [nil])
    }

    @Test func aTLSHandshakeThatNeverHappensHitsTheConnectTimeout() async throws {
        // A socket that listens but never accepts: the kernel completes TCP, nobody answers TLS.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(listening)
        let port = UInt16(bigEndian: address.sin_port)
        let error = await failure {
            try await HTTPClient().perform(HTTPRequest(
                url: "https://127.0.0.1:\(port)/", timeout: .seconds(10), connectTimeout: .milliseconds(800)))
        }
        guard case .timedOut(let after, _) = error else {
            Issue.record("expected .timedOut, got \(String(describing: error))")
            return
        }
        #expect(after == .milliseconds(800))
    }

    @Test func aSlowAnswerWithinTheTimeoutSucceeds() async throws {
        let server = try await sink(.init(status: 201, delay: .milliseconds(700)))
        let client = HTTPClient(configuration: .init(caFile: server.caFile))
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await client.perform(HTTPRequest(method: "POST", url: server.url + "/", body: [1], timeout: .seconds(5)))
        #expect(response.status == 201)
        #expect(clock.now - start >= .milliseconds(700))
    }

    @Test func aRequestDoesNotWaitBehindAHangingOne() async throws {
        let hanging = try await sink(.init(hang: true))
        let good = try await sink(.init(status: 201))
        let order = Mutex<[String]>([])
        let slow = Task {
            let error = await failure {
                try await HTTPClient(configuration: .init(caFile: hanging.caFile))
                    .perform(HTTPRequest(method: "POST", url: hanging.url + "/upload", body: [1], timeout: .seconds(3)))
            }
            order.withLock { $0.append("upload") }
            return error
        }
        // The upload is in flight (the server holds it) before the alert starts.
        let held = try await offPool { hanging.waitForRequests(count: 1) }
        try #require(held.count == 1)
        let response = try await HTTPClient(configuration: .init(caFile: good.caFile))
            .perform(HTTPRequest(method: "POST", url: good.url + "/sos", body: [2], timeout: .seconds(4)))
        order.withLock { $0.append("sos") }
        #expect(response.status == 201)
        let slowError = await slow.value
        #expect(order.withLock { $0 } == ["sos", "upload"])
        if case .timedOut = slowError {} else { Issue.record("expected .timedOut, got \(String(describing: slowError))") }
    }

    @Test func cancellingTheTaskAbandonsTheRequest() async throws {
        let server = try await sink(.init(hang: true))
        let client = HTTPClient(configuration: .init(caFile: server.caFile))
        let task = Task {
            await failure { try await client.perform(HTTPRequest(url: server.url + "/", timeout: .seconds(20))) }
        }
        try #require(try await offPool { server.waitForRequests(count: 1) }.count == 1)
        let clock = ContinuousClock()
        let start = clock.now
        task.cancel()
        let error = await task.value
        #expect(error == .cancelled)
        // Well before the request's own 20 s timeout: the cancel did it.
        #expect(clock.now - start < .seconds(15), "took \(seconds(clock.now - start)) s")
    }

    @Test func anErrorStatusIsAResponse() async throws {
        let server = try await sink(.init(status: 201, statusSequence: [503, 503], body: "busy"))
        let client = HTTPClient(configuration: .init(caFile: server.caFile))
        var statuses: [Int] = []
        for _ in 0..<3 {
            let response = try await client.perform(HTTPRequest(method: "POST", url: server.url + "/", body: [1]))
            statuses.append(response.status)
            #expect(response.body == Array("busy".utf8))
        }
        #expect(statuses == [503, 503, 201])
        #expect(server.requests().map(\.status) == [503, 503, 201])
    }

    @Test(arguments: [false, true])
    func aBodyOverTheLimitIsTooLarge(chunked: Bool) async throws {
        let server = try await sink(.init(bodyBytes: 5000, chunked: chunked))
        let client = HTTPClient(configuration: .init(caFile: server.caFile, maxResponseBytes: 1000))
        let error = await failure { try await client.perform(HTTPRequest(url: server.url + "/big")) }
        #expect(error == .tooLarge(limit: 1000))
        #expect(error?.description == "response body larger than the limit of 1000 bytes; abandoned")

        let exact = HTTPClient(configuration: .init(caFile: server.caFile, maxResponseBytes: 5000))
        let response = try await exact.perform(HTTPRequest(url: server.url + "/big"))
        #expect(response.body == Array(repeating: UInt8(ascii: "x"), count: 5000))
    }

    @Test func malformedRequestsAreRefusedBeforeSending() async {
        let client = HTTPClient()
        for url in ["", "not a url", "ftp://127.0.0.1/x", "/relative/path", "file:///etc/passwd"] {
            let error = await failure { try await client.perform(HTTPRequest(url: url)) }
            #expect(error == .invalidURL(url), "\(url)")
        }
        let injected = await failure {
            try await client.perform(HTTPRequest(url: "http://127.0.0.1:9/", headers: [("X-A", "1\r\nX-B: 2")]))
        }
        guard case .invalidRequest = injected else {
            Issue.record("expected .invalidRequest, got \(String(describing: injected))")
            return
        }
        let method = await failure { try await client.perform(HTTPRequest(method: "GET /x", url: "http://127.0.0.1:9/")) }
        guard case .invalidRequest = method else {
            Issue.record("expected .invalidRequest, got \(String(describing: method))")
            return
        }
    }

    @Test func anUnknownHostCannotBeResolved() async {
        // .invalid is reserved (RFC 6761): it never resolves, with or without a network.
        let error = await failure { try await HTTPClient().perform(HTTPRequest(url: "https://pacer-test.invalid/")) }
        #expect(error == .couldNotResolve(host: "pacer-test.invalid"))
    }

    /// A session's requests share one connection (and so one TLS handshake); after a failure
    /// it connects afresh.
    @Test func aSessionReusesItsConnection() async throws {
        let server = try await sink(.init(faults: ["reset"]))
        let caFile = server.caFile, url = server.url
        let outcomes = try await offPool { () -> [Bool] in
            // Made and used on one thread, as the uplink does.
            let session = HTTPSession(configuration: .init(caFile: caFile))
            return (0..<4).map { n in (try? session.perform(HTTPRequest(method: "PUT", url: url + "/\(n)", body: [UInt8(n)], timeout: .seconds(10)))) != nil }
        }
        #expect(outcomes == [false, true, true, true], "the first is reset, the rest go through")
        let answered = server.requests().filter { $0.status == 201 }
        #expect(answered.count == 3)
        #expect(Set(answered.compactMap(\.clientPort)).count == 1, "one connection for the three: \(answered.map(\.clientPort))")
    }

    /// Mutual TLS: with the device's certificate the server lets it in; without, the handshake fails.
    @Test func aClientCertificateIsPresentedWhenConfigured() async throws {
        let directory = try TemporaryDirectory(prefix: "mtls")
        let certificates = try await offPool { try HTTPSSink.Certificates.make(in: directory) }
        let client = try await offPool { try certificates.clientCertificate(in: directory) }
        let server = try await offPool { try HTTPSSink(tls: true, rules: .init(clientCA: certificates.caFile), certificates: certificates) }
        defer { server.stop() }
        let request = HTTPRequest(method: "PUT", url: server.url + "/v1/position", body: Array("{}".utf8), timeout: .seconds(10))
        let withCertificate = HTTPClient(configuration: .init(caFile: certificates.caFile, clientCertificate: client.certificate, clientKey: client.key))
        #expect(try await withCertificate.perform(request).status == 201)
        let without = HTTPClient(configuration: .init(caFile: certificates.caFile))
        await #expect(throws: HTTPClientError.self) { try await without.perform(request) }
        #expect(server.requests().count == 1)
    }
}
