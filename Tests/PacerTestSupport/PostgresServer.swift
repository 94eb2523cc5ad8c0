import Foundation
import Glibc
import Synchronization

/// A private PostgreSQL 15 server for tests: its own data directory under /tmp, its own free
/// port on 127.0.0.1, trust authentication for user `postgres`, stopped by the PID in its
/// postmaster.pid (SIGINT: fast shutdown) on `stop()` or when the last reference goes.
///
/// initdb and postgres refuse to run as root, so as root they run as the `postgres` system user
/// (`runuser -u postgres --`) in a directory chowned to it. The cluster is made once per test
/// process by initdb and copied for each server, which starts in well under a second.
/// Missing binaries are an error, never a skip: tools/setup installs them.
public final class PostgresServer: Sendable {
    public static let binDirectory = "/usr/lib/postgresql/15/bin"

    public let port: UInt16
    public let directory: TemporaryDirectory
    private let process: ChildProcess

    /// "postgres://postgres@127.0.0.1:PORT/DATABASE".
    public func url(database: String = "postgres") -> String { "postgres://postgres@127.0.0.1:\(port)/\(database)" }

    /// With `tls`, its certificate (for 127.0.0.1 and localhost) and the throwaway CA that signed it.
    public let certificates: HTTPSSink.Certificates?

    /// With `tls`, ssl=on with a certificate from a throwaway CA (`certificates`): clients may
    /// then connect with TLS or without. `settings`: more `name=value` server settings (`-c`),
    /// e.g. a larger max_connections for a server many tests share.
    public init(tls: Bool = false, timeout: Duration = .seconds(30), settings extraSettings: [String] = []) throws(ChildProcessError) {
        let template = try Self.template.get()
        directory = try TemporaryDirectory(prefix: "pacer-postgres")
        let data = directory.file("data")
        try Self.handToPostgres(directory.path)
        try Self.asPostgres("/bin/cp", ["-a", template.file("data"), data]).check()
        port = try FreePort.tcp()
        var settings: [String] = []
        if tls {
            let made = try HTTPSSink.Certificates.make(in: directory, name: "server")
            // postgres refuses a key that others can read; it reads it as user postgres.
            for file in [made.certificateFile, made.keyFile] { try Self.handToPostgres(file, mode: 0o600) }
            settings = ["-c", "ssl=on", "-c", "ssl_cert_file=" + made.certificateFile, "-c", "ssl_key_file=" + made.keyFile]
            certificates = made
        } else {
            certificates = nil
        }
        let stderr = directory.file("postgres.log")
        process = try ChildProcess(
            Self.runAsPostgres.first ?? Self.binDirectory + "/postgres",
            Array(Self.runAsPostgres.dropFirst()) + (Self.runAsPostgres.isEmpty ? [] : [Self.binDirectory + "/postgres"]) + [
                "-D", data, "-p", String(port), "-k", directory.path, "-c", "listen_addresses=127.0.0.1",
                // A test database needs no durability; this keeps the disk out of the timings.
                "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
            ] + settings + extraSettings.flatMap { ["-c", $0] },
            stdout: .file(stderr), stderr: .file(stderr))
        let deadline = ContinuousClock.now + timeout
        // postmaster.pid's status line says "ready" once connections are accepted (the port
        // opens earlier, while the server is still starting up).
        while !(Self.read(directory.file("data/postmaster.pid")).split(separator: "\n").dropFirst(7).first.map { $0.hasPrefix("ready") } ?? false)
            || !FreePort.isAccepting(port: port) {
            if let status = process.status {
                throw ChildProcessError(message: "postgres exited (\(status)) before accepting connections: \(Self.read(stderr))")
            }
            if ContinuousClock.now >= deadline {
                process.killAndReap()
                throw ChildProcessError(message: "postgres did not accept connections on port \(port) within \(timeout): \(Self.read(stderr))")
            }
            usleep(20_000)
        }
    }

    deinit {
        stop()
    }

    /// Fast shutdown of the postmaster by its PID, then the runuser wrapper and its group.
    public func stop() {
        if let text = try? String(contentsOfFile: directory.file("data/postmaster.pid"), encoding: .utf8),
            let line = text.split(separator: "\n").first, let pid = pid_t(line) {
            kill(pid, SIGINT)
            let deadline = ContinuousClock.now + .seconds(10)
            while kill(pid, 0) == 0, ContinuousClock.now < deadline { usleep(10_000) }
        }
        process.blockingTerminate()
    }

    /// Creates a database (for one test of a shared server). The wait is generous: in the start
    /// burst of the whole suite dozens of tests create theirs at once (each a copy of the template
    /// and a checkpoint), and a fresh clone's run here saw 17 of them pass 30 s.
    public func createDatabase(_ name: String) throws(ChildProcessError) {
        try BlockingCommand.run(Self.binDirectory + "/createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", name],
                                timeout: .seconds(180)).check()
    }

    /// What the server wrote to its log.
    public func log() -> String { Self.read(directory.file("postgres.log")) }

    // The cluster every server copies: initdb is the slow part (about 2 s).
    private static let template: Result<TemporaryDirectory, ChildProcessError> = Result { () throws(ChildProcessError) in
        let initdb = binDirectory + "/initdb"
        guard FileManager.default.isExecutableFile(atPath: initdb) else {
            throw ChildProcessError(message: "PostgreSQL 15 is not installed (no \(initdb)): run tools/setup (Debian package postgresql)")
        }
        let directory = try TemporaryDirectory(prefix: "pacer-postgres-template")
        // A static is never deinitialised: remove the template when the test process exits.
        templatePath.withLock { $0 = directory.path }
        atexit {
            if let path = PostgresServer.templatePath.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        }
        try handToPostgres(directory.path)
        try asPostgres(initdb, ["-D", directory.file("data"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync",
                                "--locale=C"], timeout: .seconds(120)).check()
        return directory
    }

    private static let templatePath = Mutex<String?>(nil)

    /// `runuser -u postgres --` as root (postgres refuses root), nothing otherwise.
    private static let runAsPostgres: [String] = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []

    private static func asPostgres(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(30))
        throws(ChildProcessError) -> CommandResult {
        if runAsPostgres.isEmpty { return try BlockingCommand.run(executable, arguments, timeout: timeout) }
        return try BlockingCommand.run(runAsPostgres[0], Array(runAsPostgres.dropFirst()) + [executable] + arguments, timeout: timeout)
    }

    private static func handToPostgres(_ path: String, mode: mode_t = 0o700) throws(ChildProcessError) {
        guard getuid() == 0 else {
            guard chmod(path, mode) == 0 else { throw ChildProcessError(message: "cannot chmod \(path): \(String(cString: strerror(errno)))") }
            return
        }
        guard let user = getpwnam("postgres") else {
            throw ChildProcessError(message: "no 'postgres' system user to run PostgreSQL as: run tools/setup (Debian package postgresql)")
        }
        guard chown(path, user.pointee.pw_uid, user.pointee.pw_gid) == 0, chmod(path, mode) == 0 else {
            throw ChildProcessError(message: "cannot hand \(path) to user postgres: \(String(cString: strerror(errno)))")
        }
    }

    private static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}
