import Threads

#if canImport(Glibc)
import Glibc
#endif

/// One thread rings, another waits: the speech thread's "there is work" and an utterance's "stop
/// now". A ring before the wait is never lost; a wait consumes all rings so far (a WakeChannel
/// drained after each wake, so it can be rung again and again).
final class Doorbell: Sendable {
    private let channel = WakeChannel()

    func ring() {
        channel.signal()
    }

    /// Waits up to `timeoutNs` (nil: for ever) for a ring; true when rung. Callers keep the real
    /// state elsewhere and look at it after every return, so a spurious wake-up is harmless.
    @discardableResult
    func wait(timeoutNs: UInt64?) -> Bool {
        guard channel.isOpen else {
            // No socket (out of descriptors): degrade to short naps; the caller re-checks its state.
            let milliseconds = timeoutNs.map { min(($0 + 999_999) / 1_000_000, 10) } ?? 10
            usleep(UInt32(milliseconds * 1000))
            return false
        }
        let rung = channel.wait(timeout: timeoutNs.map { .nanoseconds(Int64(clamping: $0)) })
        if rung { channel.drain() }
        return rung
    }
}
