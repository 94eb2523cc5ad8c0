import Threads
import Glibc
import Synchronization

/// What `GPSDClient.stop()` shares with the client's thread: the stop request, the wake-up for
/// its waits, and the socket to shut down if the thread is inside a blocking read.
final class ConnectionControl: Sendable {
    let wake = WakeChannel()
    private let state = Mutex(State())
    /// Cleared by the thread once gps_close is done and the stream is finished.
    private let running = Atomic<Bool>(false)

    private struct State {
        var stopRequested = false
        /// The socket of the open connection, while the thread has one.
        var socket: Int32?
    }

    var isStopRequested: Bool { state.withLock { $0.stopRequested } }

    var isRunning: Bool { running.load(ordering: .acquiring) }

    func markRunning(_ value: Bool) { running.store(value, ordering: .releasing) }

    func requestStop() {
        state.withLock { state in
            state.stopRequested = true
            // gps_read blocks in recv when libgps holds part of a line; shutdown ends that at
            // once. Done under the lock that also guards close, so it never hits a reused fd.
            if let socket = state.socket { _ = shutdown(socket, Int32(SHUT_RDWR)) }
        }
        wake.signal()
    }

    /// Registers the new connection's socket; false if a stop came first (then close it).
    func adopt(socket: Int32) -> Bool {
        state.withLock { state in
            guard !state.stopRequested else { return false }
            state.socket = socket
            return true
        }
    }

    /// Runs `close` (gps_close) with the socket unregistered, under the lock.
    func closeConnection(_ close: () -> Void) {
        state.withLock { state in
            state.socket = nil
            close()
        }
    }
}
