import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The manager's end of sd_notify: a datagram socket a test passes to pacerd as NOTIFY_SOCKET.
/// Collects every datagram with the monotonic time it arrived.
public final class NotifyListener: @unchecked Sendable {
    public let path: String
    private let fd: Int32
    private let lock = NSLock()
    private var received: [(at: ContinuousClock.Instant, text: String)] = []
    private var stopped = false

    public init(directory: String) throws {
        path = directory + "/notify.sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // The thread keeps the listener alive until `stop()`; it outlives the call.
        Thread { [self] in self.receiveLoop() }.start()
    }

    private func receiveLoop() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !lock.withLock({ stopped }) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                let text = String(decoding: buffer[0..<n], as: UTF8.self)
                lock.withLock { received.append((ContinuousClock.now, text)) }
            }
        }
        close(fd)
    }

    /// Returns at once (it runs in tests' `defer`, on the cooperative pool): the receiving
    /// thread sees the flag within its 100 ms receive timeout and closes the socket itself.
    public func stop() {
        lock.withLock { stopped = true }
        unlink(path)
    }

    /// Every assignment received so far (one per line of each datagram), in order.
    public var assignments: [(at: ContinuousClock.Instant, line: String)] {
        lock.withLock { received.flatMap { item in item.text.split(separator: "\n").map { (item.at, String($0)) } } }
    }

    public var statusLines: [String] {
        assignments.compactMap { $0.line.hasPrefix("STATUS=") ? String($0.line.dropFirst(7)) : nil }
    }

    /// Waits until an assignment satisfies `predicate`; returns when it arrived.
    @discardableResult
    public func wait(timeout: Duration = .seconds(20), for predicate: @escaping @Sendable (String) -> Bool) async -> ContinuousClock.Instant? {
        (try? await offPool { self.waitBlocking(timeout: timeout, for: predicate) }) ?? nil
    }

    private func waitBlocking(timeout: Duration, for predicate: (String) -> Bool) -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let hit = assignments.first(where: { predicate($0.line) }) { return hit.at }
            usleep(10_000)
        }
        return nil
    }
}
