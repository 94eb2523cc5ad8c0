#if canImport(Glibc)
import Glibc
#endif

/// A socket pair that one thread rings and another waits on: the speech thread's "there is work" and an
/// utterance's "stop now". A ring before the wait is never lost (the byte stays in the socket); a
/// wait consumes all rings so far. (Not an eventfd: Swift's Glibc module does not import
/// sys/eventfd.h. Unlike `Threads.WakeChannel` it can be rung and waited on again and again.)
final class Doorbell: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        // CLOEXEC at creation: a separate fcntl would race with a fork elsewhere.
        let type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue)
        if socketpair(AF_UNIX, type, 0, &ends) == 0 {
            readEnd = ends[0]
            writeEnd = ends[1]
        } else {
            readEnd = -1
            writeEnd = -1
        }
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    func ring() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        // EAGAIN means the buffer is full: it is rung already.
        _ = send(writeEnd, &byte, 1, Int32(MSG_NOSIGNAL))
    }

    /// Waits up to `timeoutNs` (nil: for ever) for a ring; true when rung. Callers keep the real
    /// state elsewhere and look at it after every return, so a spurious wake-up is harmless.
    @discardableResult
    func wait(timeoutNs: UInt64?) -> Bool {
        let milliseconds: Int32 = timeoutNs.map { Int32(clamping: ($0 + 999_999) / 1_000_000) } ?? -1
        guard readEnd >= 0 else {
            // No socket (out of descriptors): degrade to short naps; the caller re-checks its state.
            usleep(UInt32(milliseconds < 0 ? 10_000 : min(milliseconds, 10) * 1000))
            return false
        }
        var entry = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, milliseconds) > 0 else { return false }  // timed out, or EINTR
        var drain = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &drain, drain.count) == drain.count {}
        return true
    }
}
