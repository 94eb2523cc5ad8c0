import Foundation
import Glibc

/// tools/smtp-sink on a free port of 127.0.0.1: an SMTP server that records every message it
/// accepts, for tests of anything that sends e-mail. Stopped by PID on `stop()` or when the
/// last reference goes. Blocking: async tests create it through `offPool`.
public final class SMTPSink: Sendable {
    /// One message as the sink accepted it.
    public struct Message: Sendable {
        public var mailFrom: String
        public var recipients: [String]
        /// Headers and body as sent (dot-stuffing undone), CRLF line ends.
        public var data: String
    }

    public let port: UInt16
    public let directory: TemporaryDirectory
    private let process: ChildProcess

    public static var scriptPath: String { DaemonFixture.repositoryRoot + "/tools/smtp-sink" }
    public var logFile: String { directory.file("messages.jsonl") }

    /// The certificates it offers STARTTLS with (made by `init(starttls: true)`); clients trust `caFile`.
    public let certificates: HTTPSSink.Certificates?

    /// With `starttls`, a throwaway CA's certificate for 127.0.0.1 and STARTTLS; with
    /// `credentials`, AUTH (`authMethods`) required before MAIL.
    public init(starttls: Bool = false, credentials: (user: String, password: String)? = nil, authMethods: [String] = ["PLAIN", "LOGIN"],
                timeout: Duration = .seconds(10)) throws(ChildProcessError) {
        directory = try TemporaryDirectory(prefix: "pacer-smtp-sink")
        let stdout = directory.file("stdout")
        var arguments = ["--log", directory.file("messages.jsonl")]
        certificates = starttls ? try HTTPSSink.Certificates.make(in: directory, name: "smtp") : nil
        if let certificates { arguments += ["--cert", certificates.certificateFile, "--key", certificates.keyFile] }
        if let credentials {
            arguments += ["--user", credentials.user, "--password", credentials.password, "--auth-methods", authMethods.joined(separator: ",")]
        }
        process = try ChildProcess(Self.scriptPath, arguments,
                                   stdout: .file(stdout), stderr: .file(directory.file("stderr")))
        let deadline = ContinuousClock.now + timeout
        var listening: UInt16?
        while listening == nil {
            let text = (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first, text.contains("\n"), line.hasPrefix("listening on ") {
                listening = UInt16(line.dropFirst("listening on ".count))
                if listening == nil { break }
            } else if let status = process.status {
                throw ChildProcessError(message: "smtp-sink exited (\(status)) before listening: \(Self.read(directory.file("stderr")))")
            } else if ContinuousClock.now >= deadline {
                break
            } else {
                usleep(5_000)
            }
        }
        guard let listening else {
            process.blockingTerminate()
            throw ChildProcessError(message: "smtp-sink did not say it listens within \(timeout): \(Self.read(directory.file("stderr")))")
        }
        port = listening
    }

    deinit {
        process.killAndReap()
    }

    public func stop() {
        process.blockingTerminate()
    }

    /// The messages accepted so far, in order.
    public func messages() -> [Message] {
        Self.read(logFile).split(separator: "\n").compactMap { line in
            guard let json = try? JSON(parsing: String(line)), let from = json["mail_from"]?.string, let data = json["data"]?.string
            else { return nil }
            return Message(mailFrom: from, recipients: (json["rcpt_to"]?.array ?? []).compactMap(\.string), data: data)
        }
    }

    /// Every command line received so far (EHLO, MAIL FROM:…, DATA, QUIT…), in order; the
    /// messages' own lines are not commands.
    public func commands() -> [String] {
        Self.read(logFile).split(separator: "\n").compactMap { line in (try? JSON(parsing: String(line)))?["command"]?.string }
    }

    /// Every command line with whether it came over TLS, in order.
    public func commandsWithTLS() -> [(command: String, tls: Bool)] {
        Self.read(logFile).split(separator: "\n").compactMap { line in
            guard let json = try? JSON(parsing: String(line)), let command = json["command"]?.string else { return nil }
            return (command, json["tls"]?.bool ?? false)
        }
    }

    /// Each AUTH: the name given, whether it was right, whether it came over TLS.
    public func authentications() -> [(user: String, ok: Bool, tls: Bool)] {
        Self.read(logFile).split(separator: "\n").compactMap { line in
            guard let json = try? JSON(parsing: String(line)), let user = json["auth"]?.string else { return nil }
            return (user, json["ok"]?.bool ?? false, json["tls"]?.bool ?? false)
        }
    }

    /// Polls until at least `count` messages are recorded or `timeout` passes.
    public func waitForMessages(count: Int, timeout: Duration = .seconds(10)) -> [Message] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = messages()
            if seen.count >= count || ContinuousClock.now >= deadline { return seen }
            usleep(20_000)
        }
    }

    private static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}
