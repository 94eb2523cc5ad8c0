import Foundation
import Testing

@testable import Systemd

#if canImport(Glibc)
import Glibc
#endif

/// The native journal protocol as sd_journal_sendv really sends it. libsystemd always sends to
/// /run/systemd/journal/socket, so the test binds that path itself: only where no journald
/// runs (this container has none), and as root. Serialized: the path is one per machine.
@Suite(
    .serialized,
    .enabled(
        if: FakeJournald.canInstall,
        "needs root and a free /run/systemd/journal/socket (no journald)"),
    .timeLimit(.minutes(10))
)
struct FakeJournaldTests {
    @Test func structuredFieldsGoToTheJournal() async throws {
        let journald = try FakeJournald()
        defer { journald.remove() }
        let marker = UUID().uuidString

        let result = try await #require(
            processExitsWith: .success,
            observing: [\.standardOutputContent, \.standardErrorContent]
        ) { [marker = marker as String] in
            // As systemd sets it: the identity of the stream that is this process's stderr.
            guard let stderr = JournalStream.identity(ofDescriptor: 2) else { exit(2) }
            setenv("JOURNAL_STREAM", "\(stderr.device):\(stderr.inode)", 1)
            let logger = JournalLogger(identifier: "pacerd")
            ChildOutput.write(logger.destination == .journal ? "journal" : "stderr")
            logger.send(
                priority: .warning, message: "GPS lost\nsince 12:04:05",
                fields: [
                    "TEST_MARKER": marker, "run_id": "12", "COMPONENT": "gps", "_PID": "1",
                    "MESSAGE": "forged", "CODE_FILE": "GPSService.swift", "EMPTY": "",
                    "NOTE": "multi\nline=value",
                ])
        }
        #expect(result.standardOutputText == "journal")
        #expect(result.standardErrorText == "")  // nothing fell back to stderr

        let entries = try journald.entries().filter {
            $0.contains { $0 == ("TEST_MARKER", marker) }
        }
        try #require(entries.count == 1)
        let fields = entries[0]
        #expect(
            fields.map(\.name) == [
                "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "COMPONENT", "EMPTY",
                "NOTE", "PID", "RUN_ID", "TEST_MARKER",
            ])
        let values = Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(values["MESSAGE"] == "GPS lost\nsince 12:04:05")
        #expect(values["PRIORITY"] == "4")
        #expect(values["SYSLOG_IDENTIFIER"] == "pacerd")
        #expect(values["RUN_ID"] == "12")
        #expect(values["COMPONENT"] == "gps")
        #expect(values["PID"] == "1")  // "_PID" would be journald's own; it is renamed
        #expect(values["CODE_FILE"] == "GPSService.swift")
        #expect(values["EMPTY"] == "")
        #expect(values["NOTE"] == "multi\nline=value")
    }

    /// JOURNAL_STREAM matched at start, but the journal socket refuses the entry (journald
    /// gone, its socket left behind): the message still goes out, as a `<N>` line on stderr.
    @Test func refusedEntryFallsBackToStderr() async throws {
        let journald = try FakeJournald()
        journald.stopListening()  // the path stays; sendmsg now gets ECONNREFUSED
        defer { journald.remove() }

        let result = try await #require(
            processExitsWith: .success,
            observing: [\.standardOutputContent, \.standardErrorContent]
        ) {
            guard let stderr = JournalStream.identity(ofDescriptor: 2) else { exit(2) }
            setenv("JOURNAL_STREAM", "\(stderr.device):\(stderr.inode)", 1)
            let logger = JournalLogger(identifier: "pacerd")
            ChildOutput.write(logger.destination == .journal ? "journal" : "stderr")
            logger.send(priority: .critical, message: "Store unwritable", fields: ["RUN_ID": "12"])
        }
        #expect(result.standardOutputText == "journal")
        #expect(result.standardErrorText == "<2>Store unwritable\n")
    }
}

/// A stand-in journald: a datagram socket at journald's path, with the directories it had to
/// create removed again afterwards.
final class FakeJournald {
    static let socketPath = "/run/systemd/journal/socket"
    static let directories = ["/run/systemd", "/run/systemd/journal"]

    /// Root (to write under /run) and no journald answering at the path. A socket nobody
    /// answers on is a leftover of an interrupted run of these tests, and is replaced.
    static var canInstall: Bool {
        guard geteuid() == 0 else { return false }
        var info = stat()
        if lstat(socketPath, &info) == 0 {
            return (info.st_mode & S_IFMT) == S_IFSOCK && !DatagramSocket.isAnswering(socketPath)
        }
        return true
    }

    private var socket: DatagramSocket?
    private var created: [String] = []

    init() throws {
        for directory in Self.directories where access(directory, F_OK) != 0 {
            guard mkdir(directory, 0o755) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
            created.append(directory)
        }
        unlink(Self.socketPath)  // a leftover, as canInstall established
        socket = try DatagramSocket(path: Self.socketPath)
    }

    func stopListening() {
        socket?.closeKeepingPath()
    }

    func remove() {
        socket?.remove()
        socket = nil
        for directory in created.reversed() { rmdir(directory) }
        created = []
    }

    /// The datagrams received so far, each parsed into its fields in order.
    func entries() throws -> [[(name: String, value: String)]] {
        try (socket?.pendingDatagrams() ?? []).map(JournalDatagram.parse)
    }
}

/// journald's native protocol (systemd's JOURNAL_NATIVE_PROTOCOL.md): fields in order, each
/// `NAME=value\n`, or, for values that contain a newline, `NAME\n`, the length as a 64-bit
/// little-endian integer, the value's bytes and `\n`.
enum JournalDatagram {
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    static func parse(_ bytes: [UInt8]) throws -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        var index = 0
        while index < bytes.count {
            guard let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) else {
                throw Malformed(description: "field without a newline at byte \(index)")
            }
            let line = bytes[index..<newline]
            if let equals = line.firstIndex(of: UInt8(ascii: "=")) {
                fields.append((text(line[..<equals]), text(line[(equals + 1)...])))
                index = newline + 1
                continue
            }
            let sizeStart = newline + 1
            guard sizeStart + 8 <= bytes.count else {
                throw Malformed(description: "truncated length")
            }
            let size = bytes[sizeStart..<sizeStart + 8].reversed().reduce(UInt64(0)) {
                $0 << 8 | UInt64($1)
            }
            let valueStart = sizeStart + 8
            guard size <= UInt64(bytes.count - valueStart - 1),
                bytes[valueStart + Int(size)] == UInt8(ascii: "\n")
            else { throw Malformed(description: "bad binary field \(text(line))") }
            fields.append((text(line), text(bytes[valueStart..<valueStart + Int(size)])))
            index = valueStart + Int(size) + 1
        }
        return fields
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
