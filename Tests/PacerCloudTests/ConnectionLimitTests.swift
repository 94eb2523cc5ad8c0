import Foundation
import Glibc
import Logging
import NIOCore
@testable import PacerCloud
import PacerTestSupport
import Synchronization
import Testing

/// Issue 31, connections and file descriptors: the live pacer-cloud (real sockets, real
/// process) against more connections than its caps: unfinished headers, bodies announced and
/// never sent, long-polls with one token. The process lives, the excess is refused cleanly
/// (503 with Retry-After at accept, 429 for long-polls), and stalled connections are closed
/// after their timeout. Counts are small (caps lowered to tens) and timeouts short (2 s).
@Suite("pacer-cloud: connection caps and client timeouts", .timeLimit(.minutes(10)))
struct ConnectionLimitTests {
    static let short = ["--header-timeout", "3", "--idle-timeout", "2", "--body-timeout", "2"]

    @Test("slowloris: 80 unfinished headers against a cap of 50; 30 refused with 503 at once, the rest closed after the header timeout (3 s)")
    func unfinishedHeadersAboveTheTotalCap() async throws {
        let cloud = try await offPool {
            try CloudServer(serveArguments: Self.short + ["--max-connections", "50", "--max-connections-per-address", "1000"])
        }
        defer { cloud.stop() }
        let opened = try await offPool { try (0..<80).map { _ in try RawConnection(port: cloud.port, from: "127.0.0.2") } }
        for connection in opened { try connection.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ") }
        // Refused at accept: a 503 with Retry-After, or (when the close overtook the answer) a plain close.
        let early = try await offPool { RawConnection.read(opened, for: .milliseconds(1500)) }
        let refused = early.filter { $0.closed }
        #expect(refused.count == 30, "refused \(refused.count) of 80 (cap 50)")
        #expect(refused.contains { $0.text.hasPrefix("HTTP/1.1 503") && $0.text.contains("Retry-After: 5") && $0.text.contains("too_many_connections") },
                "\(refused.first?.text.prefix(200) ?? "")")
        #expect(cloud.isRunning)
        // All 50 held: a newcomer is refused the same way, never left hanging.
        let full = try await offPool { try RawConnection(port: cloud.port).exchange("GET /health HTTP/1.1\r\nHost: x\r\n\r\n") }
        #expect(full.text.isEmpty || full.text.hasPrefix("HTTP/1.1 503"), "\(full.text.prefix(200))")
        // The header timeout (3 s) closes every one of the 50 that never finished its headers.
        let rest = try await offPool { RawConnection.read(opened, for: .seconds(6)) }
        #expect(rest.allSatisfy { $0.closed }, "still open: \(rest.filter { !$0.closed }.count)")
        #expect(rest.allSatisfy { !$0.text.contains("200 OK") })
        #expect(cloud.isRunning)
        #expect(try await offPool { try CloudServer.get(cloud.url + "/health", token: nil).status } == 200)
    }

    @Test("per client address: 80 from one address against a cap of 40; another address is served meanwhile")
    func perAddressCap() async throws {
        let cloud = try await offPool {
            try CloudServer(serveArguments: Self.short + ["--max-connections", "200", "--max-connections-per-address", "40"])
        }
        defer { cloud.stop() }
        let opened = try await offPool { try (0..<80).map { _ in try RawConnection(port: cloud.port, from: "127.0.0.3") } }
        for connection in opened { try connection.send("GET /health HTTP/1.1\r\nHost: x\r\n") }
        let early = try await offPool { RawConnection.read(opened, for: .milliseconds(1500)) }
        #expect(early.filter(\.closed).count == 40)
        // 127.0.0.1 is another client: it gets its answer while 127.0.0.3 holds its 40.
        #expect(try await offPool { try CloudServer.get(cloud.url + "/health", token: nil).status } == 200)
        let rest = try await offPool { RawConnection.read(opened, for: .seconds(6)) }
        #expect(rest.allSatisfy { $0.closed })
        #expect(cloud.isRunning)
    }

    @Test("fifty bodies announced at 1 MB and never sent are closed after the body timeout; an idle keep-alive after the idle timeout")
    func stalledBodiesAndIdleConnections() async throws {
        let cloud = try await offPool { try CloudServer(serveArguments: Self.short) }
        defer { cloud.stop() }
        let token = cloud.token
        let opened = try await offPool { try (0..<50).map { _ in try RawConnection(port: cloud.port) } }
        let started = ContinuousClock.now
        for connection in opened {
            try connection.send("PUT /v1/position HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"time\":")
        }
        let ends = try await offPool { RawConnection.read(opened, for: .seconds(8)) }
        #expect(ends.allSatisfy { $0.closed }, "still open after 8 s: \(ends.filter { !$0.closed }.count)")
        // Not before the timeout: the body's pause is what closes them (generous upper bound).
        #expect(ContinuousClock.now - started >= .seconds(2))
        #expect(cloud.isRunning)
        #expect(try await offPool { try CloudServer.get(cloud.url + "/health", token: nil).status } == 200)

        // A keep-alive connection answered once and then left idle is closed after 2 s.
        let idle = try await offPool { try RawConnection(port: cloud.port) }
        let answered = try await offPool { try idle.exchange("GET /health HTTP/1.1\r\nHost: x\r\n\r\n", until: "{\"status\":\"ok\"}") }
        #expect(answered.text.hasPrefix("HTTP/1.1 200"))
        #expect(!answered.closed)
        #expect(try await offPool { idle.read(for: .seconds(6)) }.closed)
    }

    @Test("long-polls with one token above the per-device cap: the excess gets 429 JSON, the first ones keep waiting and answer")
    func longPollsPerDevice() async throws {
        let cloud = try await offPool { try CloudServer(serveArguments: ["--long-polls-per-device", "4"]) }
        defer { cloud.stop() }
        let request = "GET /v1/device/answers?wait=4 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(cloud.token)\r\n\r\n"
        let first = try await offPool { try (0..<4).map { _ in try RawConnection(port: cloud.port) } }
        for connection in first { try connection.send(request) }
        try await Task.sleep(for: .milliseconds(500))
        let more = try await offPool { try (0..<12).map { _ in try RawConnection(port: cloud.port) } }
        let refusals = try await offPool { try more.map { try $0.exchange(request, until: "}}") } }
        #expect(refusals.allSatisfy { $0.text.hasPrefix("HTTP/1.1 429") && $0.text.contains("\"too_many_long_polls\"") && $0.text.contains("Retry-After") },
                "\(refusals.first?.text.prefix(300) ?? "")")
        #expect(try await offPool { try CloudServer.get(cloud.url + "/health", token: nil).status } == 200)
        let answers = try await offPool { RawConnection.read(first, for: .seconds(8), until: "\"last_id\":0}") }
        #expect(answers.allSatisfy { $0.text.hasPrefix("HTTP/1.1 200") && $0.text.contains("\"answers\":[]") }, "\(answers.map { $0.text.prefix(40) })")
        // Their slots are free again.
        #expect(try await offPool { try RawConnection(port: cloud.port).exchange(request.replacingOccurrences(of: "wait=4", with: "wait=1"), until: "}") }
            .text.hasPrefix("HTTP/1.1 200"))
    }

    @Test("under a lowered open-file limit (400) the caps are lowered to fit, and 300 connections are refused, not a crash")
    func loweredDescriptorLimit() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-nofile")
        let port = try FreePort.tcp()
        let process = try ChildProcess("/usr/bin/prlimit", [
            "--nofile=400:400", "--", DaemonFixture.binary("pacer-cloud"), "serve", "--port", String(port),
            "--database", "sqlite:" + directory.file("cloud.db"), "--header-timeout", "3",
        ], stderr: .file(directory.file("err")), newProcessGroup: true)
        defer { _ = process.killAndReap() }
        let log = { (try? String(contentsOfFile: directory.file("err"), encoding: .utf8)) ?? "" }
        let url = "http://127.0.0.1:\(port)"
        try await waitOffPool(timeout: .seconds(20), every: .milliseconds(100), orFail: "no /health: \(log())") {
            (try? CloudServer.get(url + "/health", token: nil).status) == 200
        }
        // 400 - 256 kept for the database and outgoing connections.
        #expect(log().contains("lowered to 144"), "\(log())")
        let opened = try await offPool { try (0..<300).map { _ in try RawConnection(port: port, from: "127.0.0.4") } }
        for connection in opened { try? connection.send("GET /health HTTP/1.1\r\nHost: x\r\n") }
        let early = try await offPool { RawConnection.read(opened, for: .milliseconds(1500)) }
        #expect(early.filter(\.closed).count >= 300 - 144)
        #expect(process.isRunning, "\(log())")
        let rest = try await offPool { RawConnection.read(opened, for: .seconds(6)) }
        #expect(rest.allSatisfy { $0.closed })
        #expect(process.isRunning, "\(log())")
        #expect(try await offPool { try CloudServer.get(url + "/health", token: nil).status } == 200)
    }

    @Test("an open-file limit too low for any cap: serve refuses to start (78) and says why")
    func descriptorLimitTooLow() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-nofile")
        let result = try await offPool {
            try DaemonFixture.runBlocking("/usr/bin/prlimit", [
                "--nofile=200:200", "--", DaemonFixture.binary("pacer-cloud"), "serve", "--port", String(try FreePort.tcp()),
                "--database", "sqlite:" + directory.file("cloud.db"),
            ])
        }
        #expect(result.status == 78, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains("RLIMIT_NOFILE") && result.stderr.contains("200"), "\(result.stderr)")
    }

    @Test("through the shipped nginx site a 32 MiB import reaches pacer-cloud (it stopped at nginx's 2 MB before)",
          .enabled(if: FileManager.default.isExecutableFile(atPath: NginxProxy.binary), "nginx is not installed"))
    func importSizeThroughNginx() async throws {
        let cloud = try await offPool { try CloudServer() }
        let proxy = try await offPool { try NginxProxy(upstreamPort: cloud.port) }
        defer {
            proxy.stop()
            cloud.stop()
        }
        let file = proxy.directory.file("import.bin")
        try Data(repeating: UInt8(ascii: "x"), count: 32 << 20).write(to: URL(fileURLWithPath: file))
        let result = try await offPool {
            try DaemonFixture.runBlocking("/usr/bin/curl", [
                "-sS", "--max-time", "60", "--cacert", proxy.certificates.caFile, "-o", "-", "-w", "\n%{http_code}",
                "-H", "Content-Type: multipart/form-data; boundary=pacer", "--data-binary", "@" + file, proxy.url + "/import",
            ])
        }
        let status = Int(result.stdout.split(separator: "\n").last ?? "") ?? 0
        // Not signed in, pacer-cloud refuses it its own way; what matters is that nginx let it through.
        #expect(status != 413 && status != 0, "\(result.stdout.suffix(300)) \(result.stderr)")
        #expect(!result.stdout.contains("<center>nginx</center>"), "\(result.stdout.suffix(300))")
    }

    @Test("the caps fit under a descriptor limit, or are lowered with a reason, or refused")
    func fitting() {
        let limits = ConnectionLimits.defaults
        #expect(limits.fitted(descriptorLimit: 8192).limits == limits)
        #expect(limits.fitted(descriptorLimit: 8192).message == nil)
        let lowered = limits.fitted(descriptorLimit: 1024)
        #expect(lowered.limits?.maxConnections == 1024 - ConnectionLimits.reservedDescriptors)
        #expect(lowered.message?.contains("LimitNOFILE") == true)
        #expect(limits.fitted(descriptorLimit: 100).limits == nil)
        // The unit's LimitNOFILE holds the default caps.
        let unit = (try? String(contentsOfFile: "systemd/pacer-cloud.service", encoding: .utf8)) ?? ""
        if let line = unit.split(separator: "\n").first(where: { $0.hasPrefix("LimitNOFILE=") }), let value = Int(line.dropFirst(12)) {
            #expect(limits.descriptorsNeeded <= value)
        } else {
            Issue.record("systemd/pacer-cloud.service sets no LimitNOFILE=N")
        }
    }

    @Test("connections are counted per IPv4 address and per IPv6 /64; a trusted proxy is held only to the total")
    func gateKeys() throws {
        let a = try SocketAddress(ipAddress: "2001:db8:1:2::1", port: 1), b = try SocketAddress(ipAddress: "2001:db8:1:2:ffff::9", port: 2)
        #expect(ConnectionGate.key(a) == ConnectionGate.key(b))
        #expect(ConnectionGate.key(a) != ConnectionGate.key(try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 1)))
        #expect(ConnectionGate.key(try SocketAddress(ipAddress: "192.0.2.7", port: 1)) == "192.0.2.7")
        #expect(ConnectionGate.key(try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 1)) == "192.0.2.7")
        var limits = ConnectionLimits.defaults
        limits.maxConnections = 5
        limits.maxConnectionsPerAddress = 2
        let gate = ConnectionGate(limits: limits, exempt: ["127.0.0.1"], logger: Logger(label: "test"))
        #expect(gate.admit("192.0.2.7", address: "192.0.2.7") == .admitted)
        #expect(gate.admit("192.0.2.7", address: "192.0.2.7") == .admitted)
        #expect(gate.admit("192.0.2.7", address: "192.0.2.7") != .admitted)
        for _ in 0..<3 { #expect(gate.admit("127.0.0.1", address: "127.0.0.1") == .admitted) }
        #expect(gate.admit("127.0.0.1", address: "127.0.0.1") != .admitted)
        gate.release("192.0.2.7")
        #expect(gate.open == 4)
        #expect(gate.admit("198.51.100.1", address: "198.51.100.1") == .admitted)
    }

    @Test("/metrics sees the gate: open connections go up and down, refusals are counted")
    func gateFeedsMetrics() {
        var limits = ConnectionLimits.defaults
        limits.maxConnections = 2
        let metrics = CloudMetrics()
        let gate = ConnectionGate(limits: limits, exempt: [], logger: Logger(label: "test"), metrics: metrics)
        #expect(gate.admit("192.0.2.7", address: "192.0.2.7") == .admitted)
        #expect(gate.admit("192.0.2.8", address: "192.0.2.8") == .admitted)
        #expect(gate.admit("192.0.2.9", address: "192.0.2.9") != .admitted)
        gate.release("192.0.2.7")
        let text = metrics.exposition()
        #expect(OperationsTests.value(text, "pacer_cloud_open_connections") == 1, "\(text)")
        #expect(OperationsTests.value(text, "pacer_cloud_refused_connections_total") == 1, "\(text)")
    }

    @Test("a session holds at most its cap of dashboard streams; the first keeps streaming")
    func streamsPerSession() async throws {
        var configuration = MonitorTests.config(lifetime: .milliseconds(1500), streams: 8)
        configuration.connections.streamsPerSession = 1
        try await Cloud.with(.sqlite, configuration: configuration) { cloud in
            let pair = try await MonitorTests.pair(cloud)
            async let first = pair.monitor.get("/watch/events")
            try await Task.sleep(for: .milliseconds(400))
            let second = try await pair.monitor.get("/watch/events")
            #expect(second.status == .tooManyRequests)
            #expect(try await first.status == .ok)
            #expect(try await pair.monitor.get("/watch/events").status == .ok)
        }
    }
}

/// A blocking TCP client on 127.0.0.1 whose source address can be another loopback address
/// (127.0.0.2, ...), so one test plays several clients.
final class RawConnection: Sendable {
    struct Reading: Sendable {
        var text: String
        /// The server closed it (EOF or reset) within the time read.
        var closed: Bool
    }

    private let fd: Int32

    init(port: UInt16, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: errno \(errno)") }
        if let source {
            var local = Self.address(source, port: 0)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { close(fd); throw FixtureError("bind \(source): errno \(errno)") }
        }
        var remote = Self.address("127.0.0.1", port: port)
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw FixtureError("connect: errno \(errno)") }
    }

    deinit { close(fd) }

    private static func address(_ ip: String, port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, ip, &address.sin_addr)
        return address
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw FixtureError("send: errno \(errno)") }
    }

    /// Sends `request` and reads until `marker` (or a close, or 5 s).
    func exchange(_ request: String, until marker: String? = nil) throws -> Reading {
        try send(request)
        return read(for: .seconds(5), until: marker)
    }

    /// Reads for up to `duration`, until the server closes or `marker` has been read.
    func read(for duration: Duration, until marker: String? = nil) -> Reading {
        read(until: ContinuousClock.now + duration, marker: marker)
    }

    /// Reads until `deadline` (once more without waiting when it has passed already), the
    /// server's close or `marker`: many connections read one after another share one deadline.
    func read(until deadline: ContinuousClock.Instant, marker: String? = nil) -> Reading {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let left = deadline - ContinuousClock.now
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = left > .zero ? Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)) : 0
            guard poll(&entry, 1, milliseconds) > 0 else {
                if left > .zero { continue }
                return Reading(text: String(decoding: data, as: UTF8.self), closed: false)
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return Reading(text: String(decoding: data, as: UTF8.self), closed: true) }
            data += buffer[0..<count]
            if let marker, String(decoding: data, as: UTF8.self).contains(marker) {
                return Reading(text: String(decoding: data, as: UTF8.self), closed: false)
            }
        }
    }

    /// Each connection read until one shared deadline `duration` from now.
    static func read(_ connections: [RawConnection], for duration: Duration, until marker: String? = nil) -> [Reading] {
        let deadline = ContinuousClock.now + duration
        return connections.map { $0.read(until: deadline, marker: marker) }
    }
}
