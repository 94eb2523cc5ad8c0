import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bound AF_UNIX datagram socket standing in for systemd's notify socket or journald's.
final class DatagramSocket {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = try Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw POSIXError(.init(rawValue: error) ?? .EIO)
        }
        self.path = path
        self.descriptor = fd
    }

    private var isOpen = true

    /// Stops receiving but leaves the path: senders then get ECONNREFUSED.
    func closeKeepingPath() {
        if isOpen { close(descriptor) }
        isOpen = false
    }

    /// Closes and unlinks the socket.
    func remove() {
        closeKeepingPath()
        unlink(path)
    }

    /// Every datagram queued now. Senders have finished (their process exited) before this
    /// is called, and a Unix datagram is queued by the time sendmsg returns, so not waiting
    /// loses nothing.
    func pendingDatagrams() -> [[UInt8]] {
        guard isOpen else { return [] }
        var datagrams: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count < 0 { break }
            datagrams.append(Array(buffer[..<count]))
        }
        return datagrams
    }

    static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw POSIXError(.ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return address
    }

    /// Whether something is listening at `path` (a datagram connect succeeds only then).
    static func isAnswering(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, var address = try? address(path) else { return false }
        defer { close(fd) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}
