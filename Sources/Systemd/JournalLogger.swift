internal import CSystemd

#if canImport(Glibc)
import Glibc
#endif

/// Log lines for journald. When stderr is the journal (`JOURNAL_STREAM`, see `JournalStream`),
/// each message goes through sd_journal_sendv with its structured fields; otherwise it is
/// written to stderr as `<N>message` lines (sd-daemon(3)), which journald, if it reads that
/// stream after all, still files under the right priority. The choice is made once, at init:
/// sd_journal_sendv succeeds even when no journald listens, so its result cannot decide.
public struct JournalLogger: Sendable {
    public enum Destination: Sendable, Equatable {
        /// Native journal protocol: fields kept.
        case journal
        /// `<N>` lines on stderr: extra fields dropped.
        case standardError
    }

    enum Output: Sendable, Equatable {
        case journal
        case descriptor(Int32)
    }

    let output: Output
    /// Sent as SYSLOG_IDENTIFIER, which `journalctl -t` selects on.
    let identifier: String?

    /// Decides by `$JOURNAL_STREAM` against fd 2 now; create it once, at start-up.
    public init(identifier: String? = nil) {
        self.init(
            output: JournalStream.stderrIsJournal() ? .journal : .descriptor(2),
            identifier: identifier)
    }

    init(output: Output, identifier: String?) {
        self.output = output
        self.identifier = identifier
    }

    public var destination: Destination {
        output == .journal ? .journal : .standardError
    }

    /// Sends one entry. `fields` are extra journal fields (RUN_ID, COMPONENT, CODE_FILE…); their
    /// names are fixed as `JournalFieldName.normalized` describes, and unusable ones, or ones
    /// that would replace MESSAGE or PRIORITY, are dropped. Never fails: if the journal refuses
    /// the entry, the message goes to stderr instead.
    public func send(priority: JournalPriority, message: String, fields: [String: String] = [:]) {
        switch output {
        case .journal:
            let entry = Self.journalEntry(
                priority: priority, message: message, fields: fields, identifier: identifier)
            if Self.sendToJournal(entry) >= 0 { return }
            // fd 2 is the journal's stream socket here, so the line still reaches it.
            Self.writeAll(Self.prefixedLines(priority: priority, message: message), to: 2)
        case .descriptor(let fd):
            Self.writeAll(Self.prefixedLines(priority: priority, message: message), to: fd)
        }
    }
}

extension JournalLogger {
    struct Field: Equatable {
        let name: String
        let value: String
    }

    static let reservedNames: Set<String> = ["MESSAGE", "PRIORITY"]

    /// MESSAGE, PRIORITY and SYSLOG_IDENTIFIER first, then the caller's fields by name, so the
    /// datagram does not depend on dictionary order.
    static func journalEntry(
        priority: JournalPriority, message: String, fields: [String: String], identifier: String?
    ) -> [Field] {
        var entry = [
            Field(name: "MESSAGE", value: message),
            Field(name: "PRIORITY", value: String(priority.rawValue)),
        ]
        if let identifier { entry.append(Field(name: "SYSLOG_IDENTIFIER", value: identifier)) }
        let extra = fields.compactMap { raw, value -> Field? in
            guard let name = JournalFieldName.normalized(raw), !reservedNames.contains(name)
            else { return nil }
            return Field(name: name, value: value)
        }
        // Two raw names can normalize alike (`run_id`, `RUN_ID`); the journal keeps both values.
        return entry + extra.sorted { ($0.name, $0.value) < ($1.name, $1.value) }
    }

    /// One iovec per `NAME=value`; sd_journal_sendv switches to the length-prefixed form itself
    /// for values with newlines. Returns its result (negative errno on failure).
    static func sendToJournal(_ entry: [Field]) -> Int32 {
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in entry {
            let start = buffer.count
            buffer.append(contentsOf: field.name.utf8)
            buffer.append(UInt8(ascii: "="))
            buffer.append(contentsOf: field.value.utf8)
            ranges.append(start..<buffer.count)
        }
        return buffer.withUnsafeMutableBufferPointer { bytes -> Int32 in
            guard let base = bytes.baseAddress else { return -EINVAL }
            var vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            return sd_journal_sendv(&vectors, Int32(vectors.count))
        }
    }

    /// `<N>` before every line of the message, each line ending in a newline; one trailing
    /// newline in the message does not add an empty line.
    static func prefixedLines(priority: JournalPriority, message: String) -> [UInt8] {
        let prefix = Array("<\(priority.rawValue)>".utf8)
        var lines = message.utf8.split(
            separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        var text: [UInt8] = []
        text.reserveCapacity(message.utf8.count + lines.count * (prefix.count + 1))
        for line in lines {
            text.append(contentsOf: prefix)
            text.append(contentsOf: line)
            text.append(UInt8(ascii: "\n"))
        }
        return text
    }

    /// One write(2) for the whole message where the kernel allows (a pipe takes up to
    /// PIPE_BUF = 4096 bytes atomically), so concurrent messages do not interleave mid-line;
    /// retried on EINTR and continued after a short write. Other errors drop the message:
    /// there is nowhere left to report them.
    static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        bytes.withUnsafeBytes { raw in
            guard var next = raw.baseAddress else { return }
            var remaining = raw.count
            while remaining > 0 {
                let written = write(fd, next, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                next += written
                remaining -= written
            }
        }
    }
}
