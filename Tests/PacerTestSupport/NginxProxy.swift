import Foundation
import Glibc

/// Debian's nginx running config/nginx/pacer-cloud.conf as shipped, with only what a test must
/// change: the listen addresses (free ports on 127.0.0.1, no IPv6), the certificate (a
/// throwaway CA's, for 127.0.0.1) and the upstream's port. Each of those must be found in the
/// file exactly as expected, so a changed file fails here instead of being tested half.
/// Stopped by its master's PID on `stop()` or when the last reference goes.
public final class NginxProxy: Sendable {
    public static let binary = "/usr/sbin/nginx"
    public static var configPath: String { DaemonFixture.repositoryRoot + "/config/nginx/pacer-cloud.conf" }

    public let directory: TemporaryDirectory
    public let httpsPort: UInt16
    public let httpPort: UInt16
    public let certificates: HTTPSSink.Certificates
    private let process: ChildProcess

    /// "https://127.0.0.1:PORT"
    public var url: String { "https://127.0.0.1:\(httpsPort)" }

    public init(upstreamPort: UInt16, timeout: Duration = .seconds(10)) throws(ChildProcessError) {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw ChildProcessError(message: "nginx is not installed (no \(Self.binary)): run tools/setup (Debian package nginx)")
        }
        directory = try TemporaryDirectory(prefix: "pacer-nginx")
        certificates = try HTTPSSink.Certificates.make(in: directory, name: "proxy")
        httpsPort = try FreePort.tcp()
        httpPort = try FreePort.tcp()
        guard var site = try? String(contentsOfFile: Self.configPath, encoding: .utf8) else {
            throw ChildProcessError(message: "cannot read \(Self.configPath)")
        }
        let replacements: [(String, String)] = [
            ("server 127.0.0.1:8080;", "server 127.0.0.1:\(upstreamPort);"),
            ("    listen 80;\n", "    listen 127.0.0.1:\(httpPort);\n"),
            ("    listen [::]:80;\n", ""),
            ("    listen 443 ssl http2;\n", "    listen 127.0.0.1:\(httpsPort) ssl http2;\n"),
            ("    listen [::]:443 ssl http2;\n", ""),
            ("ssl_certificate /etc/letsencrypt/live/cloud.example.org/fullchain.pem;", "ssl_certificate \(certificates.certificateFile);"),
            ("ssl_certificate_key /etc/letsencrypt/live/cloud.example.org/privkey.pem;", "ssl_certificate_key \(certificates.keyFile);"),
        ]
        for (expected, replacement) in replacements {
            guard site.components(separatedBy: expected).count == 2 else {
                throw ChildProcessError(message: "\(Self.configPath) no longer has exactly one '\(expected)' for the test to replace")
            }
            site = site.replacingOccurrences(of: expected, with: replacement)
        }
        let dir = directory.path
        // Workers would otherwise run as nobody, who cannot use the test's private directory.
        let user = getuid() == 0 ? "user root root;\n" : ""
        let main = """
            \(user)daemon off;
            worker_processes 1;
            pid \(dir)/nginx.pid;
            error_log \(dir)/error.log info;
            events { worker_connections 64; }
            http {
                access_log \(dir)/access.log;
                client_body_temp_path \(dir)/client-body;
                proxy_temp_path \(dir)/proxy;
                fastcgi_temp_path \(dir)/fastcgi;
                uwsgi_temp_path \(dir)/uwsgi;
                scgi_temp_path \(dir)/scgi;
                default_type application/octet-stream;
                include \(dir)/pacer-cloud.conf;
            }

            """
        do {
            try site.write(toFile: directory.file("pacer-cloud.conf"), atomically: true, encoding: .utf8)
            try main.write(toFile: directory.file("nginx.conf"), atomically: true, encoding: .utf8)
        } catch {
            throw ChildProcessError(message: "cannot write nginx's configuration: \(error)")
        }
        let arguments = ["-p", dir, "-c", directory.file("nginx.conf"), "-e", directory.file("startup.log")]
        try BlockingCommand.run(Self.binary, ["-t"] + arguments).check()
        process = try ChildProcess(Self.binary, arguments, stdout: .file(directory.file("stdout")), stderr: .file(directory.file("stderr")))
        let deadline = ContinuousClock.now + timeout
        while !FreePort.isAccepting(port: httpsPort) {
            if let status = process.status {
                throw ChildProcessError(message: "nginx exited (\(status)) before listening: \(errorLog())")
            }
            if ContinuousClock.now >= deadline {
                process.blockingTerminate()
                throw ChildProcessError(message: "nginx did not listen on \(httpsPort) within \(timeout): \(errorLog())")
            }
            usleep(20_000)
        }
    }

    deinit {
        process.killAndReap()
    }

    /// SIGTERM to the master (a fast shutdown; it stops its worker), by PID.
    public func stop() {
        process.blockingTerminate()
    }

    public func errorLog() -> String {
        ["startup.log", "error.log", "stderr"].map { (try? String(contentsOfFile: directory.file($0), encoding: .utf8)) ?? "" }
            .joined(separator: "\n")
    }
}
