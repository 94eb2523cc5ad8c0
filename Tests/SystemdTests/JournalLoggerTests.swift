import Foundation
import Testing
import PacerTestSupport

@testable import Systemd

#if canImport(Glibc)
import Glibc
#endif

/// The logger end to end: bytes on a descriptor, and the stderr-or-journal decision in child
/// processes whose stderr the test reads.
@Suite(.timeLimit(.minutes(10)))
struct JournalLoggerTests {
    @Test func writesPrefixedLinesToItsDescriptor() throws {
        let pipe = try Pipe.make()
        defer { close(pipe.read) }
        let logger = JournalLogger(output: .descriptor(pipe.write), identifier: "pacerd")
        #expect(logger.destination == .standardError)
        logger.send(
            priority: .error, message: "Disk full\nrecording stopped", fields: ["RUN_ID": "12"])
        logger.send(priority: .info, message: "Idle, GPS no fix")
        close(pipe.write)
        #expect(pipe.readAll() == "<3>Disk full\n<3>recording stopped\n<6>Idle, GPS no fix\n")
    }

    /// Eight tasks log at once; every message arrives whole, its lines together.
    @Test func concurrentMessagesDoNotInterleave() async throws {
        let pipe = try Pipe.make()
        defer { close(pipe.read) }
        let logger = JournalLogger(output: .descriptor(pipe.write), identifier: nil)
        // Read while writing: 8 × 200 messages would overfill the 64 KiB pipe buffer.
        let reader = Task { try await offPool { pipe.readAll() } }  // a blocking read: off the pool
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for n in 0..<200 {
                        logger.send(
                            priority: .notice,
                            message: "task \(task) message \(n)\nsecond line \(task)-\(n)")
                    }
                }
            }
        }
        close(pipe.write)
        let lines = try await reader.value.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 8 * 200 * 2 + 1)  // and the empty piece after the last newline
        var seen = Set<String>()
        for index in stride(from: 0, to: lines.count - 1, by: 2) {
            let first = lines[index]
            let second = lines[index + 1]
            guard first.hasPrefix("<5>task "), let range = first.range(of: " message ") else {
                Issue.record("broken line: \(first)")
                continue
            }
            let task = first.dropFirst(8)[..<range.lowerBound]
            let n = first[range.upperBound...]
            #expect(second == "<5>second line \(task)-\(n)")
            seen.insert("\(task)-\(n)")
        }
        #expect(seen.count == 8 * 200)
    }

    @Test func withoutJournalStreamStderrGetsPrefixedLines() async throws {
        let result = try await #require(
            processExitsWith: .success,
            observing: [\.standardOutputContent, \.standardErrorContent]
        ) {
            unsetenv("JOURNAL_STREAM")
            let logger = JournalLogger(identifier: "pacerd")
            ChildOutput.write(logger.destination == .journal ? "journal" : "stderr")
            logger.send(
                priority: .error, message: "Disk full\nrecording stopped", fields: ["RUN_ID": "12"])
        }
        #expect(result.standardOutputText == "stderr")
        #expect(result.standardErrorText == "<3>Disk full\n<3>recording stopped\n")
    }

    /// As when systemd started the daemon with its output to the journal, but stderr was then
    /// redirected: JOURNAL_STREAM names another file (here the child's stdout pipe).
    @Test func journalStreamOfAnotherFileMeansStderr() async throws {
        let result = try await #require(
            processExitsWith: .success,
            observing: [\.standardOutputContent, \.standardErrorContent]
        ) {
            guard let stdout = JournalStream.identity(ofDescriptor: 1) else { exit(2) }
            setenv("JOURNAL_STREAM", "\(stdout.device):\(stdout.inode)", 1)
            let logger = JournalLogger(identifier: "pacerd")
            ChildOutput.write(logger.destination == .journal ? "journal" : "stderr")
            logger.send(priority: .warning, message: "GPS lost")
        }
        #expect(result.standardOutputText == "stderr")
        #expect(result.standardErrorText == "<4>GPS lost\n")
    }
}

/// A pipe, both ends close-on-exec. Each end is closed exactly once, by the test.
struct Pipe: Sendable {
    let read: Int32
    let write: Int32

    static func make() throws -> Pipe {
        var fds: [Int32] = [0, 0]
        // pipe2 is not imported (it needs _GNU_SOURCE); the window before FD_CLOEXEC only
        // matters if a child is spawned right then, and would just hold the pipe open longer.
        guard pipe(&fds) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return Pipe(read: fds[0], write: fds[1])
    }

    /// Reads until every writer has closed.
    func readAll() -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(read, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            data.append(contentsOf: buffer[..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }
}
