import Foundation
import Glibc

/// tools/https-sink on a free port of 127.0.0.1: an HTTP(S) server that records every request it
/// reads and answers by `Rules` (status, a sequence of statuses, delay, never), for tests of
/// anything that sends HTTP. With TLS (the default) it serves a certificate for 127.0.0.1 and
/// localhost signed by a throwaway CA made with the `openssl` command; clients trust `caFile`.
/// Stopped by PID on `stop()` or when the last reference goes. Blocking: async tests create it
/// through `offPool`.
public final class HTTPSSink: Sendable {
    /// How the sink answers; the options of tools/https-sink.
    public struct Rules: Sendable {
        /// Every answer's status, after `statusSequence`.
        public var status: Int
        /// The statuses of the first answers, in turn.
        public var statusSequence: [Int]
        /// Waits this long before answering.
        public var delay: Duration?
        /// Never answers: reads the request, records it, then keeps the connection open and silent.
        public var hang: Bool
        /// The response body: `body`, or `bodyBytes` bytes of "x" when given.
        public var body: String
        public var bodyBytes: Int?
        /// Sends the body with Transfer-Encoding: chunked, without a Content-Length.
        public var chunked: Bool
        /// Faults for the first requests, in turn: "reset" (a TCP reset after half the body),
        /// "slow" (an answer after `faultDelay`), or a status code.
        public var faults: [String]
        public var faultDelay: Duration
        /// Mutual TLS: only clients with a certificate this CA signed (PEM) get through.
        public var clientCA: String?
        /// Path suffix → status, answered to every request whose path ends so (no turn taken).
        public var pathStatus: [(suffix: String, status: Int)]
        /// Extra headers on every answer.
        public var headers: [(String, String)]

        public init(
            status: Int = 201, statusSequence: [Int] = [], delay: Duration? = nil, hang: Bool = false,
            body: String = "", bodyBytes: Int? = nil, chunked: Bool = false, faults: [String] = [], faultDelay: Duration = .seconds(10),
            clientCA: String? = nil, pathStatus: [(suffix: String, status: Int)] = [], headers: [(String, String)] = []
        ) {
            self.clientCA = clientCA
            self.pathStatus = pathStatus
            self.headers = headers
            self.faults = faults
            self.faultDelay = faultDelay
            self.status = status
            self.statusSequence = statusSequence
            self.delay = delay
            self.hang = hang
            self.body = body
            self.bodyBytes = bodyBytes
            self.chunked = chunked
        }

        var arguments: [String] {
            var arguments = ["--status", String(status)]
            if !statusSequence.isEmpty { arguments += ["--status-sequence", statusSequence.map(String.init).joined(separator: ",")] }
            if let delay {
                let (seconds, attoseconds) = delay.components
                arguments += ["--delay", String(Double(seconds) + Double(attoseconds) / 1e18)]
            }
            if hang { arguments.append("--hang") }
            if let bodyBytes { arguments += ["--body-bytes", String(bodyBytes)] } else if !body.isEmpty { arguments += ["--body", body] }
            if chunked { arguments.append("--chunked") }
            if let clientCA { arguments += ["--client-ca", clientCA] }
            for rule in pathStatus { arguments += ["--path-status", "\(rule.suffix)=\(rule.status)"] }
            for (name, value) in headers { arguments += ["--header", "\(name): \(value)"] }
            if !faults.isEmpty {
                let (seconds, attoseconds) = faultDelay.components
                arguments += ["--faults", faults.joined(separator: ","), "--fault-delay", String(Double(seconds) + Double(attoseconds) / 1e18)]
            }
            return arguments
        }
    }

    /// One request as the sink read and recorded it.
    public struct Request: Sendable {
        public var method: String
        /// The request target: path and query, as sent.
        public var path: String
        /// As received, in order.
        public var headers: [(String, String)]
        /// Exactly the bytes received.
        public var body: [UInt8]
        /// The body as UTF-8 (undecodable bytes replaced).
        public var bodyText: String
        /// When it was read, in seconds since the epoch.
        public var time: Double
        /// The status it is answered with; nil when the sink hangs or reset the connection.
        public var status: Int?
        /// The client's TCP port: the same for requests that came on one connection.
        public var clientPort: Int?

        init?(_ json: JSON) {
            guard let method = json["method"]?.string, let path = json["path"]?.string else { return nil }
            self.method = method
            self.path = path
            headers = (json["headers"]?.array ?? []).compactMap { pair in
                guard let name = pair[0]?.string, let value = pair[1]?.string else { return nil }
                return (name, value)
            }
            body = Array(Data(base64Encoded: json["body_base64"]?.string ?? "") ?? Data())
            bodyText = json["body"]?.string ?? ""
            time = json["time"]?.number ?? 0
            status = json["status"]?.int
            clientPort = json["client_port"]?.int
        }

        /// The first header named `name`, compared without regard to case.
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        /// How many headers named `name` arrived.
        public func headerCount(_ name: String) -> Int {
            headers.count(where: { $0.0.lowercased() == name.lowercased() })
        }
    }

    /// A throwaway CA and a server certificate it signed for IP 127.0.0.1 and DNS localhost, as
    /// PEM files; valid from now for two days.
    public struct Certificates: Sendable {
        public var caFile: String
        public var certificateFile: String
        public var keyFile: String

        /// Makes them with `openssl` (P-256 keys: quick) as `name`-ca.pem, `name`.pem and
        /// `name`.key in `directory`. Each call makes a new CA, which trusts nothing made before.
        public static func make(in directory: TemporaryDirectory, name: String = "sink") throws(ChildProcessError) -> Certificates {
            let caKey = directory.file(name + "-ca.key")
            let ca = directory.file(name + "-ca.pem")
            let key = directory.file(name + ".key")
            let request = directory.file(name + ".csr")
            let certificate = directory.file(name + ".pem")
            let extensions = directory.file(name + ".ext")
            let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            do {
                try """
                    subjectAltName = IP:127.0.0.1, DNS:localhost
                    basicConstraints = critical, CA:FALSE
                    keyUsage = critical, digitalSignature
                    extendedKeyUsage = serverAuth

                    """.write(toFile: extensions, atomically: true, encoding: .utf8)
            } catch {
                throw ChildProcessError(message: "cannot write \(extensions): \(error)")
            }
            try BlockingCommand.run("openssl", ["req", "-x509"] + curve + [
                "-keyout", caKey, "-out", ca, "-days", "2", "-subj", "/CN=Pacer test CA \(name)",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ]).check()
            try BlockingCommand.run("openssl", ["req", "-new"] + curve + [
                "-keyout", key, "-out", request, "-subj", "/CN=localhost",
            ]).check()
            // A random serial: clients cache nothing across runs, but two certificates from one
            // CA with the same serial would be invalid.
            try BlockingCommand.run("openssl", [
                "x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-days", "2",
                "-set_serial", "0x" + String(UInt64.random(in: 1...UInt64.max >> 1), radix: 16),
                "-extfile", extensions, "-out", certificate,
            ]).check()
            return Certificates(caFile: ca, certificateFile: certificate, keyFile: key)
        }

        /// A client certificate (and key) signed by this CA, for mutual TLS; its CA key must be
        /// beside the CA as `make` left it.
        public func clientCertificate(in directory: TemporaryDirectory, name: String = "client") throws(ChildProcessError) -> (certificate: String, key: String) {
            let caKey = String(caFile.dropLast(".pem".count)) + ".key"
            let key = directory.file(name + ".key"), request = directory.file(name + ".csr"), certificate = directory.file(name + ".pem")
            let extensions = directory.file(name + ".ext")
            do {
                try "extendedKeyUsage = clientAuth\n".write(toFile: extensions, atomically: true, encoding: .utf8)
            } catch {
                throw ChildProcessError(message: "cannot write \(extensions): \(error)")
            }
            try BlockingCommand.run("openssl", ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                                "-keyout", key, "-out", request, "-subj", "/CN=pacer-device"]).check()
            try BlockingCommand.run("openssl", [
                "x509", "-req", "-in", request, "-CA", caFile, "-CAkey", caKey, "-days", "2",
                "-set_serial", "0x" + String(UInt64.random(in: 1...UInt64.max >> 1), radix: 16), "-extfile", extensions, "-out", certificate,
            ]).check()
            return (certificate, key)
        }
    }

    /// tools/https-sink in this repository.
    public static var scriptPath: String { DaemonFixture.repositoryRoot + "/tools/https-sink" }

    /// "https://127.0.0.1:PORT" ("http://…" without TLS), no trailing slash.
    public let url: String
    public let port: UInt16
    /// The CA to trust; nil without TLS.
    public var caFile: String? { certificates?.caFile }
    public let certificates: Certificates?
    public let directory: TemporaryDirectory
    private let process: ChildProcess

    public var pid: pid_t { process.pid }
    public var isRunning: Bool { process.isRunning }
    public var logFile: String { directory.file("requests.jsonl") }

    /// Makes the certificates (with `tls`; or reuses `certificates`, so a client's CA file stays
    /// valid), starts the sink on `port` (0: a free one) and returns once it listens.
    public init(tls: Bool = true, rules: Rules = Rules(), certificates reused: Certificates? = nil, port wanted: UInt16 = 0,
                timeout: Duration = .seconds(10)) throws(ChildProcessError) {
        directory = try TemporaryDirectory(prefix: "pacer-https-sink")
        if !tls {
            certificates = nil
        } else if let reused {
            certificates = reused
        } else {
            certificates = try Certificates.make(in: directory)
        }
        var arguments = ["--port", String(wanted), "--log", directory.file("requests.jsonl")] + rules.arguments
        if let certificates { arguments += ["--cert", certificates.certificateFile, "--key", certificates.keyFile] }
        let stdout = directory.file("stdout")
        process = try ChildProcess(Self.scriptPath, arguments, stdout: .file(stdout), stderr: .file(directory.file("stderr")))
        // The first stdout line, "listening on PORT", comes once the socket listens.
        let deadline = ContinuousClock.now + timeout
        var listening: UInt16?
        while listening == nil {
            let text = (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first, text.contains("\n"), line.hasPrefix("listening on ") {
                listening = UInt16(line.dropFirst("listening on ".count))
                if listening == nil { break }
            } else if let status = process.status {
                throw ChildProcessError(message: "https-sink exited (\(status)) before listening: \(Self.read(directory.file("stderr")))")
            } else if ContinuousClock.now >= deadline {
                break
            } else {
                usleep(5_000)
            }
        }
        guard let listening else {
            process.blockingTerminate()
            throw ChildProcessError(message: "https-sink did not say it listens within \(timeout): \(Self.read(stdout)) \(Self.read(directory.file("stderr")))")
        }
        port = listening
        url = (tls ? "https" : "http") + "://127.0.0.1:\(listening)"
    }

    deinit {
        process.killAndReap()
    }

    /// Stops the sink (SIGTERM, SIGKILL after `grace`) and reaps it; the log stays readable.
    public func stop(grace: Duration = .seconds(3)) {
        process.blockingTerminate(grace: grace)
    }

    /// The requests recorded so far, in the order read (complete lines only).
    public func requests() -> [Request] {
        let text = Self.read(logFile)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
        return lines.compactMap { line in (try? JSON(parsing: String(line))).flatMap(Request.init) }
    }

    /// Polls until at least `count` requests are recorded or `timeout` passes; those recorded then.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) -> [Request] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = requests()
            if seen.count >= count || ContinuousClock.now >= deadline { return seen }
            usleep(10_000)
        }
    }

    /// What the sink wrote to stderr (failed TLS handshakes, one line each).
    public func standardError() -> String { Self.read(directory.file("stderr")) }

    private static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}
