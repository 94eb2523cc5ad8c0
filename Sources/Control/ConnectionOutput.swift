#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The reply bytes queued for one connection, shared between the handlers (which append, on the
/// cooperative pool) and the server thread (which writes them to the socket without blocking).
///
/// Chunks wait while more than `limit` bytes are unsent, so a streamed export holds at most
/// about `limit` bytes per client, however long the run. Final replies never wait.
final class ConnectionOutput: Sendable {
    private struct State {
        var pending: [UInt8] = []
        var sent = 0
        /// Why the connection is gone; set once, after which everything is dropped.
        var closedReason: String?
        var drainWaiter: CheckedContinuation<Void, Never>?
        var requestFinished = false

        var unsent: Int { pending.count - sent }
    }

    let limit: Int
    private let waker: Waker
    private let state = Mutex(State())

    init(limit: Int, waker: Waker) {
        self.limit = limit
        self.waker = waker
    }

    // MARK: Handler side

    func sendChunk(_ line: [UInt8]) async throws(ControlStreamError) {
        enum Attempt { case queued, full, closed(String) }
        while true {
            let attempt: Attempt = state.withLock { state in
                if let reason = state.closedReason { return .closed(reason) }
                guard state.unsent < limit else { return .full }
                state.pending.append(contentsOf: line)
                return .queued
            }
            switch attempt {
            case .queued:
                waker.wake()
                return
            case .full:
                await waitForRoom()
            case .closed(let reason):
                throw ControlStreamError(reason: reason)
            }
        }
    }

    private func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.closedReason != nil || state.unsent < limit { return true }
                state.drainWaiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Queues the request's last line and lets the server thread read the connection's next request.
    func finishRequest(_ line: [UInt8]) {
        state.withLock { state in
            guard state.closedReason == nil else { return }
            state.pending.append(contentsOf: line)
            state.requestFinished = true
        }
        waker.wake()
    }

    var closedReason: String? { state.withLock { $0.closedReason } }

    // MARK: Server thread side

    /// For replies the server thread makes itself (rejected request lines): no wake needed.
    func enqueue(_ line: [UInt8]) {
        state.withLock { state in
            if state.closedReason == nil { state.pending.append(contentsOf: line) }
        }
    }

    var hasUnsent: Bool { state.withLock { $0.unsent > 0 } }

    func takeRequestFinished() -> Bool {
        state.withLock { state in
            defer { state.requestFinished = false }
            return state.requestFinished
        }
    }

    enum FlushOutcome: Equatable {
        case idle
        case wrote(bytes: Int, allSent: Bool)
        case failed(errno: Int32)
    }

    /// Writes as much as the socket takes now. The lock is held across one non-blocking send(),
    /// a few microseconds, so handlers appending meanwhile only wait that long.
    func flush(to fd: Int32) -> FlushOutcome {
        let (outcome, waiter): (FlushOutcome, CheckedContinuation<Void, Never>?) = state.withLock { state in
            guard state.closedReason == nil, state.unsent > 0 else { return (.idle, nil) }
            var written = 0
            var failure: Int32?
            while state.unsent > 0 {
                let result = state.pending.withUnsafeBytes { bytes in
                    Syscalls.sendNow(fd, UnsafeRawBufferPointer(rebasing: bytes[state.sent...]))
                }
                if result > 0 {
                    state.sent += result
                    written += result
                } else if result == -Int(EINTR) {
                    continue
                } else {
                    if result != -Int(EAGAIN) && result != -Int(EWOULDBLOCK) { failure = Int32(-result) }
                    break
                }
            }
            compact(&state)
            var waiter: CheckedContinuation<Void, Never>?
            if state.unsent < limit / 2 || failure != nil {
                waiter = state.drainWaiter
                state.drainWaiter = nil
            }
            if let failure { return (.failed(errno: failure), waiter) }
            return (.wrote(bytes: written, allSent: state.unsent == 0), waiter)
        }
        waiter?.resume()
        return outcome
    }

    /// Drops what is queued and wakes a waiting chunk, which then throws with `reason`.
    func close(reason: String) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            if state.closedReason == nil { state.closedReason = reason }
            state.pending = []
            state.sent = 0
            defer { state.drainWaiter = nil }
            return state.drainWaiter
        }
        waiter?.resume()
    }

    private func compact(_ state: inout State) {
        if state.unsent == 0 {
            // Keep a small buffer for the next reply; give back what an export grew.
            state.pending.removeAll(keepingCapacity: state.pending.capacity <= 65_536)
            state.sent = 0
        } else if state.sent >= 65_536 && state.sent >= state.pending.count / 2 {
            state.pending.removeFirst(state.sent)
            state.sent = 0
        }
    }
}
