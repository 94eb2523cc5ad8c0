import Glibc
import PacerTestSupport
import Synchronization
@testable import Buttons

/// A temporary directory with a FIFO standing in for the evdev device, and a writer end the test
/// opens once the reader has the FIFO open.
final class FIFOFixture {
    let directory: String
    let path: String
    private(set) var writer: Int32 = -1

    init() throws {
        var template = Array("/tmp/pacer-buttons-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw FixtureError("mkdtemp: \(errno)") }
        directory = String(cString: made)
        path = directory + "/event0"
    }

    deinit {
        closeWriter()
        unlink(path)
        rmdir(directory)
    }

    func makeFIFO() throws {
        guard mkfifo(path, 0o600) == 0 else { throw FixtureError("mkfifo: \(errno)") }
    }

    /// Non-blocking: fails (ENXIO) unless the reader has the FIFO open, which the test waits for.
    func openWriter() throws {
        writer = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard writer >= 0 else { throw FixtureError("open writer: \(errno)") }
    }

    func write(_ bytes: [UInt8]) throws {
        let written = bytes.withUnsafeBytes { Glibc.write(writer, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw FixtureError("write: \(written), errno \(errno)") }
    }

    func closeWriter() {
        if writer >= 0 { close(writer) }
        writer = -1
    }

    /// True once no reader has the FIFO open (poll reports POLLERR on the write end).
    var readerHasClosed: Bool {
        var entry = pollfd(fd: writer, events: Int16(POLLOUT), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLERR) != 0
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Consumes a reader's inputs on a task and lets the test wait for what it expects.
final class InputCollector: Sendable {
    private final class Storage: Sendable {
        let state = Mutex<(inputs: [ButtonInput], finished: Bool)>(([], false))
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ reader: EvdevButtonReader) {
        let storage = self.storage
        task = Task {
            for await input in reader.inputs { storage.state.withLock { $0.inputs.append(input) } }
            storage.state.withLock { $0.finished = true }
        }
    }

    var inputs: [ButtonInput] { storage.state.withLock { $0.inputs } }
    var finished: Bool { storage.state.withLock { $0.finished } }

    var keys: [EvdevKeyEvent] {
        inputs.compactMap { if case .key(let key) = $0 { key } else { nil } }
    }

    var opened: Int { inputs.filter { if case .deviceOpened = $0 { true } else { false } }.count }

    var unavailableReasons: [String] {
        inputs.compactMap { if case .deviceUnavailable(_, let reason) = $0 { reason } else { nil } }
    }

    func cancel() { task.cancel() }

    /// Polls until `condition` holds or `timeout` passes (a liveness bound, not a latency target).
    @discardableResult
    func wait(timeout: Duration = .seconds(10), until condition: (InputCollector) -> Bool) async -> Bool {
        await eventually(timeout: timeout, every: .milliseconds(5)) { condition(self) }
    }
}
