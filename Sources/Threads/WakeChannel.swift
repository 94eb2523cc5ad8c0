#if canImport(Glibc)
import Glibc
#endif

/// A socket pair that wakes a thread from poll(2) when its owner stops it. Once
/// signalled it stays readable (nothing drains it), so every later wait returns at once.
public final class WakeChannel: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    public init() {
        var fds: [Int32] = [-1, -1]
        // SOCK_CLOEXEC at creation: a separate fcntl would race with a fork elsewhere.
        let type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue)
        if socketpair(AF_UNIX, type, 0, &fds) == 0 {
            readEnd = fds[0]
            writeEnd = fds[1]
        } else {
            readEnd = -1
            writeEnd = -1
        }
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    public var isOpen: Bool { readEnd >= 0 }

    /// The descriptor to poll for POLLIN.
    public var descriptor: Int32 { readEnd }

    public func signal() {
        guard writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        // A full buffer (EAGAIN) means it is signalled already.
        _ = send(writeEnd, &byte, 1, Int32(MSG_NOSIGNAL))
    }

    public var isSignalled: Bool { wait(timeout: .zero) }

    /// Consumes every signal so far, so the channel can be waited on again: a doorbell rather
    /// than a latch. A signal after this is never lost.
    public func drain() {
        guard readEnd >= 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &bytes, bytes.count) == bytes.count {}
    }

    /// Waits up to `timeout` (nil: for ever); true once signalled.
    public func wait(timeout: Duration?) -> Bool {
        var entry = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        let milliseconds = timeout.map(MonotonicTime.pollMilliseconds) ?? -1
        while true {
            let result = poll(&entry, 1, milliseconds)
            if result >= 0 { return result > 0 }
            if errno != EINTR { return false }
        }
    }
}
