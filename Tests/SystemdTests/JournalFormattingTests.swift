import Foundation
import Testing

@testable import Systemd

#if canImport(Glibc)
import Glibc
#endif

/// The logger's pure parts: field names, the entry it sends, the `<N>` lines, JOURNAL_STREAM.
@Suite(.timeLimit(.minutes(10)))
struct JournalFormattingTests {
    @Test(arguments: [
        ("RUN_ID", "RUN_ID"),
        ("run_id", "RUN_ID"),
        ("component", "COMPONENT"),
        ("code.file", "CODE_FILE"),
        ("gps-device", "GPS_DEVICE"),
        ("_PID", "PID"),  // leading "_" is for fields only journald sets
        ("__x", "X"),
        ("2fa", "FA"),  // may not start with a digit
        ("_9_LIVES", "LIVES"),
        ("HR2", "HR2"),
        ("niño", "NI__O"),  // two UTF-8 bytes, two underscores
        (String(repeating: "a", count: 100), String(repeating: "A", count: 64)),
    ])
    func fieldNameIsFixed(_ raw: String, _ expected: String) {
        #expect(JournalFieldName.normalized(raw) == expected)
        #expect(JournalFieldName.isValid(expected))
    }

    @Test(arguments: ["", "_", "___", "42", "_1", "\u{1F3C3}"])
    func fieldNameWithNothingUsableIsDropped(_ raw: String) {
        // The runner emoji is four bytes that become "____", and underscores lead: nothing left.
        #expect(JournalFieldName.normalized(raw) == nil)
    }

    @Test func entryOrderAndReservedNames() {
        let entry = JournalLogger.journalEntry(
            priority: .warning, message: "GPS lost",
            fields: [
                "run_id": "12", "COMPONENT": "gps", "MESSAGE": "forged", "priority": "0",
                "_": "nothing", "code_line": "42",
            ],
            identifier: "pacerd")
        #expect(
            entry == [
                .init(name: "MESSAGE", value: "GPS lost"),
                .init(name: "PRIORITY", value: "4"),
                .init(name: "SYSLOG_IDENTIFIER", value: "pacerd"),
                .init(name: "CODE_LINE", value: "42"),
                .init(name: "COMPONENT", value: "gps"),
                .init(name: "RUN_ID", value: "12"),
            ])
    }

    @Test func entryWithoutIdentifier() {
        let entry = JournalLogger.journalEntry(
            priority: .debug, message: "", fields: [:], identifier: nil)
        #expect(entry == [.init(name: "MESSAGE", value: ""), .init(name: "PRIORITY", value: "7")])
    }

    @Test func priorities() {
        #expect(JournalPriority.allCases.map(\.rawValue) == Array(0...7))
        #expect(JournalPriority.emergency < .error && JournalPriority.error < .debug)
    }

    @Test(arguments: [
        (JournalPriority.info, "Recording run 12", "<6>Recording run 12\n"),
        (.error, "Disk full\nrecording stopped", "<3>Disk full\n<3>recording stopped\n"),
        (.notice, "trailing newline\n", "<5>trailing newline\n"),
        (.warning, "a\n\nb", "<4>a\n<4>\n<4>b\n"),  // an empty line inside stays a line
        (.debug, "", "<7>\n"),
        (.emergency, "\n", "<0>\n"),
        (.critical, "two trailing\n\n", "<2>two trailing\n<2>\n"),
    ])
    func prefixedLines(_ priority: JournalPriority, _ message: String, _ expected: String) {
        let text = JournalLogger.prefixedLines(priority: priority, message: message)
        #expect(String(decoding: text, as: UTF8.self) == expected)
    }

    @Test(arguments: [
        ("2049:123456", JournalStream.Identity(device: 2049, inode: 123456)),
        ("0:0", JournalStream.Identity(device: 0, inode: 0)),
        ("18446744073709551615:1", JournalStream.Identity(device: .max, inode: 1)),
    ])
    func journalStreamParses(_ value: String, _ expected: JournalStream.Identity) {
        #expect(JournalStream.identity(fromEnvironment: value) == expected)
    }

    @Test(arguments: [
        "", ":", "2049", "2049:", ":123", "2049:123:1", "-1:5", "0x801:5", " 2049:5", "2049:5 ",
        "18446744073709551616:1", "٣:٤",
    ])
    func journalStreamRejects(_ value: String) {
        #expect(JournalStream.identity(fromEnvironment: value) == nil)
    }

    /// The decision against real descriptors: only the very file JOURNAL_STREAM names counts.
    @Test func journalStreamMatchesOnlyThatFile() throws {
        let directory = try Support.makeTemporaryDirectory()
        defer { Support.removeDirectory(directory) }
        let first = open(directory + "/a", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        let second = open(directory + "/b", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        defer {
            close(first)
            close(second)
        }
        let identity = try #require(JournalStream.identity(ofDescriptor: first))
        let value = "\(identity.device):\(identity.inode)"
        #expect(JournalStream.isJournal(environmentValue: value, descriptor: first))
        #expect(!JournalStream.isJournal(environmentValue: value, descriptor: second))
        #expect(!JournalStream.isJournal(environmentValue: nil, descriptor: first))
        #expect(!JournalStream.isJournal(environmentValue: "garbage", descriptor: first))
        #expect(JournalStream.identity(ofDescriptor: -1) == nil)
    }
}
