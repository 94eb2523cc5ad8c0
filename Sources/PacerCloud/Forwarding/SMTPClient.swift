import CloudModel
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PacerContract

/// A minimal SMTP client (RFC 5321) for alert e-mails to a relay: EHLO, [STARTTLS (RFC 3207),
/// EHLO, AUTH PLAIN or LOGIN (RFC 4954),] MAIL, RCPT, DATA, QUIT, on SwiftNIO with NIOSSL.
/// With `security` .starttls, a server that does not offer STARTTLS, or whose certificate does
/// not verify, gets nothing: no password and no message go out in plain text (a man in the
/// middle can strip STARTTLS from the EHLO answer). The whole session has one deadline.
struct SMTPClient: Sendable {
    var host: String
    var port: Int
    var security: MailSettings.Security = .plain
    var credentials: MailSettings.Credentials?
    /// PEM file of the CAs the server's certificate is checked against; nil: the system's.
    var trustRoots: String?
    var timeout: Duration = .seconds(30)

    init(host: String, port: Int, security: MailSettings.Security = .plain, credentials: MailSettings.Credentials? = nil,
         trustRoots: String? = nil) {
        self.host = host
        self.port = port
        self.security = security
        self.credentials = credentials
        self.trustRoots = trustRoots
    }

    init(_ settings: MailSettings) {
        self.init(host: settings.host, port: settings.port, security: settings.security, credentials: settings.credentials,
                  trustRoots: settings.trustRoots)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func send(from: String, to: String, subject: String, text: String) async throws {
        for address in [from, to] where !address.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x3C && $0 != 0x3E }) {
            throw Failure(description: "the address \(WireLimits.quoted(address)) has characters SMTP cannot carry")
        }
        if credentials != nil, security == .plain {
            throw Failure(description: "refusing to send the SMTP password to \(host):\(port) without TLS: use STARTTLS")
        }
        let message = try Self.message(from: from, to: to, subject: subject, text: text)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.session(from: from, to: to, message: message) }
            group.addTask {
                try await Task.sleep(for: self.timeout)
                throw Failure(description: "the SMTP session with \(self.host):\(self.port) took longer than \(self.timeout)")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// The message as sent after DATA, without the final ".": CRLF line ends, dot-stuffed.
    static func message(from: String, to: String, subject: String, text: String) throws -> [UInt8] {
        let date = DateFormatter()
        date.locale = Locale(identifier: "en_US_POSIX")
        date.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let headers = [
            "From: \(from)", "To: \(to)", "Subject: \(try headerValue(subject))", "Date: \(date.string(from: Date()))",
            "Message-ID: <\(Tokens.random(bytes: 12))@pacer-cloud>", "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: 8bit", "",
        ]
        return Array(headers.joined(separator: "\r\n").utf8) + [0x0D, 0x0A] + dotStuffed(Array(text.utf8))
    }

    /// A header value: refused if it holds a CR or LF (a header injection), else ASCII as it is
    /// and anything else as RFC 2047 encoded words of at most 75 characters, folded.
    static func headerValue(_ value: String) throws -> String {
        guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else {
            throw Failure(description: "a header value holds a line break: \(WireLimits.quoted(value.debugDescription))")
        }
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return value }
        // 45 bytes of UTF-8 make 60 of base64; "=?utf-8?B?" and "?=" make the word 72. Words end
        // on character boundaries, so each decodes alone.
        var words: [String] = []
        var piece: [UInt8] = []
        for character in value {
            let bytes = Array(String(character).utf8)
            if piece.count + bytes.count > 45, !piece.isEmpty {
                words.append("=?utf-8?B?\(Data(piece).base64EncodedString())?=")
                piece = []
            }
            piece += bytes
        }
        if !piece.isEmpty { words.append("=?utf-8?B?\(Data(piece).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    /// The body with every line break CRLF (a lone CR or LF is one too: SMTP has no other) and
    /// every line that starts with "." given a second one, all on bytes: Swift's "\r\n" is one
    /// Character, so a split on "\n" would miss the "\n" of "\r\r\n" and let ".\r\n" end the
    /// message early.
    static func dotStuffed(_ text: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count + 16)
        var lineStart = true
        var index = 0
        while index < text.count {
            let byte = text[index]
            if byte == 0x0D || byte == 0x0A {
                out += [0x0D, 0x0A]
                lineStart = true
                if byte == 0x0D, index + 1 < text.count, text[index + 1] == 0x0A { index += 1 }
            } else {
                if lineStart, byte == 0x2E { out.append(0x2E) }
                out.append(byte)
                lineStart = false
            }
            index += 1
        }
        return out
    }

    private func session(from: String, to: String, message: [UInt8]) async throws {
        let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(10))
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                }
        } catch {
            throw Failure(description: "cannot connect to SMTP server \(host):\(port): \(error)")
        }
        try await channel.executeThenClose { inbound, outbound in
            var conversation = Conversation(server: "\(host):\(port)", replies: inbound.makeAsyncIterator(), outbound: outbound)
            try await conversation.expect(220, after: "connecting")
            var capabilities = try await conversation.command("EHLO pacer-cloud", expect: 250)
            if security == .starttls {
                guard capabilities.contains(where: { $0.uppercased() == "STARTTLS" }) else {
                    throw Failure(description: "the SMTP server \(host):\(port) does not offer STARTTLS; refusing to send in plain text")
                }
                try await conversation.command("STARTTLS", expect: 220)
                try await startTLS(on: channel.channel)
                capabilities = try await conversation.command("EHLO pacer-cloud", expect: 250)
            }
            if let credentials { try await conversation.authenticate(credentials, capabilities: capabilities) }
            try await conversation.command("MAIL FROM:<\(from)>", expect: 250)
            try await conversation.command("RCPT TO:<\(to)>", expect: 250)
            try await conversation.command("DATA", expect: 354)
            try await conversation.write(message + Array("\r\n.\r\n".utf8), before: "the message")
            try await conversation.expect(250, after: "the message")
            _ = try? await conversation.command("QUIT", expect: 221)
        }
    }

    /// Puts TLS under the conversation (after the server's 220 to STARTTLS): the certificate is
    /// checked against `trustRoots` and the host name (or IP address) connected to.
    private func startTLS(on channel: any Channel) async throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let trustRoots { configuration.trustRoots = .file(trustRoots) }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw Failure(description: "cannot set up TLS for \(host):\(port): \(error)")
        }
        // An IP address is checked against the certificate's IP entries, and is no SNI name.
        let serverHostname = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
        // The handler is made and added on the channel's event loop (it is not Sendable).
        try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverHostname), position: .first)
        }.get()
    }

    /// Commands and replies ("250-..." continuation lines, then "250 ...").
    private struct Conversation {
        let server: String
        var replies: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        var buffer: [UInt8] = []

        /// Sends `line`; the reply's text lines (after the code) when its code is `code`.
        @discardableResult
        mutating func command(_ line: String, expect code: Int) async throws -> [String] {
            let verb = String(line.prefix(while: { $0 != ":" && $0 != " " }))
            try await write(Array((line + "\r\n").utf8), before: verb)
            return try await expect(code, after: verb)
        }

        /// Sends bytes; when the connection is gone, the error says why (a failed TLS
        /// handshake arrives on the read side, the write only sees a closed channel).
        mutating func write(_ bytes: [UInt8], before what: String) async throws {
            do {
                try await outbound.write(ByteBuffer(bytes: bytes))
            } catch {
                var cause = String(describing: error)
                do {
                    _ = try await replies.next()
                } catch let readError {
                    cause = String(describing: readError)
                }
                throw Failure(description: "the connection to SMTP server \(server) failed before \(what): \(cause)")
            }
        }

        @discardableResult
        mutating func expect(_ code: Int, after what: String) async throws -> [String] {
            let (received, lines) = try await reply(after: what)
            guard received == code else {
                throw Failure(description: "SMTP server \(server) answered '\(lines.joined(separator: " / "))' to \(what); expected \(code)")
            }
            return lines.map { String($0.dropFirst(4)) }
        }

        /// AUTH PLAIN when offered, else AUTH LOGIN. Neither the password nor its base64 is
        /// ever part of an error.
        mutating func authenticate(_ credentials: MailSettings.Credentials, capabilities: [String]) async throws {
            let offered = capabilities.filter { $0.uppercased().hasPrefix("AUTH ") }
                .flatMap { $0.dropFirst(5).split(separator: " ").map { $0.uppercased() } }
            let user = Data(credentials.username.utf8).base64EncodedString()
            let password = Data(credentials.password.utf8).base64EncodedString()
            var steps: [(String, Int)]
            if offered.contains("PLAIN") {
                steps = [("AUTH PLAIN " + Data([0] + Array(credentials.username.utf8) + [0] + Array(credentials.password.utf8)).base64EncodedString(), 235)]
            } else if offered.contains("LOGIN") {
                steps = [("AUTH LOGIN", 334), (user, 334), (password, 235)]
            } else {
                throw Failure(description: "the SMTP server \(server) offers no AUTH PLAIN or LOGIN (it offers: \(offered.joined(separator: " ")))")
            }
            for (line, code) in steps {
                let (received, lines) = try await send(line, after: "AUTH")
                guard received == code else {
                    if received == 535 || received == 454 || received == 534 {
                        throw Failure(description: "the SMTP server \(server) refused the user name or password of '\(credentials.username)': \(lines.joined(separator: " / "))")
                    }
                    throw Failure(description: "SMTP server \(server) answered '\(lines.joined(separator: " / "))' to AUTH; expected \(code)")
                }
            }
        }

        private mutating func send(_ line: String, after what: String) async throws -> (Int, [String]) {
            try await write(Array((line + "\r\n").utf8), before: what)
            return try await reply(after: what)
        }

        private mutating func reply(after what: String) async throws -> (Int, [String]) {
            var lines: [String] = []
            while true {
                let line = try await readLine(after: what)
                lines.append(line)
                let bytes = Array(line.utf8)
                if bytes.count < 4 || bytes[3] != UInt8(ascii: "-") { break }
            }
            return (Int(lines.last?.prefix(3) ?? "") ?? 0, lines)
        }

        private mutating func readLine(after what: String) async throws -> String {
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = buffer[..<newline]
                    defer { buffer.removeSubrange(...newline) }
                    return String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
                }
                // A server that talks without end is not an SMTP server.
                guard buffer.count < 64 * 1024 else { throw Failure(description: "SMTP server \(server) sent a line longer than 64 KiB") }
                let chunk: ByteBuffer?
                do {
                    chunk = try await replies.next()
                } catch {
                    throw Failure(description: "the connection to SMTP server \(server) failed after \(what): \(error)")
                }
                guard let chunk else { throw Failure(description: "the SMTP server \(server) closed the connection after \(what)") }
                buffer += chunk.readableBytesView
            }
        }
    }
}
