import Foundation
import Glibc

/// A minimal SMTP client (RFC 5321) for alert e-mails to a relay: EHLO, MAIL, RCPT, DATA,
/// QUIT over plain TCP, no authentication or TLS (use a local relay). Blocking sockets on a
/// thread of its own, with 10 s timeouts, so the async pool never waits on the network.
struct SMTPClient: Sendable {
    var host: String
    var port: Int
    var timeoutSeconds = 10

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func send(from: String, to: String, subject: String, text: String) async throws {
        for address in [from, to] where !address.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x3C && $0 != 0x3E }) {
            throw Failure(description: "the address \(DeviceInput.quoted(address)) has characters SMTP cannot carry")
        }
        let message = try Self.message(from: from, to: to, subject: subject, text: text)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result { try self.sendBlocking(from: from, to: to, message: message) })
            }
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
            throw Failure(description: "a header value holds a line break: \(DeviceInput.quoted(value.debugDescription))")
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

    private func sendBlocking(from: String, to: String, message: [UInt8]) throws {
        let fd = try connect()
        defer { close(fd) }
        var reader = ReplyReader(fd: fd)
        try reader.expect(220, after: "connecting")
        try command(fd, "EHLO pacer-cloud", &reader, expect: 250)
        try command(fd, "MAIL FROM:<\(from)>", &reader, expect: 250)
        try command(fd, "RCPT TO:<\(to)>", &reader, expect: 250)
        try command(fd, "DATA", &reader, expect: 354)
        try write(fd, message + Array("\r\n.\r\n".utf8))
        try reader.expect(250, after: "the message")
        try? command(fd, "QUIT", &reader, expect: 221)
    }

    private func command(_ fd: Int32, _ line: String, _ reader: inout ReplyReader, expect code: Int) throws {
        try write(fd, line + "\r\n")
        try reader.expect(code, after: String(line.prefix(while: { $0 != ":" && $0 != " " })))
    }

    private func write(_ fd: Int32, _ text: String) throws {
        try write(fd, Array(text.utf8))
    }

    private func write(_ fd: Int32, _ data: [UInt8]) throws {
        var bytes = data[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "sending to \(host):\(port) failed: \(String(cString: strerror(errno)))") }
            bytes = bytes.dropFirst(sent)
        }
    }

    private func connect() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            lastError = String(cString: strerror(errno))
            close(fd)
        }
        throw Failure(description: "cannot connect to SMTP server \(host):\(port): \(lastError)")
    }

    /// Reads SMTP replies ("250-…" continuation lines, then "250 …").
    private struct ReplyReader {
        let fd: Int32
        var buffer: [UInt8] = []

        mutating func expect(_ code: Int, after what: String) throws {
            var lines: [String] = []
            while true {
                let line = try readLine()
                lines.append(line)
                let bytes = Array(line.utf8)
                if bytes.count < 4 || bytes[3] != UInt8(ascii: "-") { break }
            }
            guard let last = lines.last, Int(last.prefix(3)) == code else {
                throw Failure(description: "SMTP server answered '\(lines.joined(separator: " / "))' to \(what); expected \(code)")
            }
        }

        private mutating func readLine() throws -> String {
            while true {
                if let newline = buffer.firstIndex(of: 0x0A) {
                    let line = buffer[..<newline]
                    buffer.removeSubrange(...newline)
                    return String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
                }
                var chunk = [UInt8](repeating: 0, count: 1024)
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else {
                    throw Failure(description: count == 0 ? "the SMTP server closed the connection" : "reading from the SMTP server failed: \(String(cString: strerror(errno)))")
                }
                buffer += chunk[..<count]
            }
        }
    }
}
