#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Interrupts the server thread's poll() from other threads: a self-pipe. One byte is written
/// per batch of wake-ups (the flag), and the write end is closed under the same lock so a late
/// wake() from a handler never writes into a reused descriptor.
final class Waker: Sendable {
    private struct State {
        var writeEnd: Int32
        var wakePending = false
        var stopRequested = false
    }

    let readEnd: Int32
    private let state: Mutex<State>

    init() throws(ControlServerError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .systemCall("pipe", path: nil, errno: errno) }
        for end in ends {
            Syscalls.setCloseOnExec(end)
            _ = Syscalls.setNonBlocking(end)
        }
        readEnd = ends[0]
        state = Mutex(State(writeEnd: ends[1]))
    }

    func wake() {
        state.withLock { state in
            guard !state.wakePending, state.writeEnd >= 0 else { return }
            state.wakePending = true
            var byte: UInt8 = 1
            _ = write(state.writeEnd, &byte, 1)
        }
    }

    func requestStop() {
        state.withLock { $0.stopRequested = true }
        wake()
    }

    var stopRequested: Bool { state.withLock { $0.stopRequested } }

    /// Server thread: called when the read end is readable. Clearing the flag and emptying the
    /// pipe happen under the lock wake() writes under: otherwise a wake() between the two would
    /// see its byte drained while the flag stayed set, and every later wake(), stop included,
    /// would be skipped while poll() sleeps for ever.
    func drain() {
        state.withLock { state in
            state.wakePending = false
            var buffer = [UInt8](repeating: 0, count: 64)
            while buffer.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
        }
    }

    func close() {
        state.withLock { state in
            if state.writeEnd >= 0 { Glibc.close(state.writeEnd) }
            state.writeEnd = -1
        }
        Glibc.close(readEnd)
    }
}
