#if canImport(Glibc)
import Glibc
#endif

/// The few socket and file calls Control makes, each wrapped once so errno handling and the
/// sockaddr_un plumbing live in one place.
enum Syscalls {
    /// sun_path holds 108 bytes including the terminating NUL.
    static let maximumSocketPathBytes = 107

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    static func unixStreamSocket() -> Int32 {
        socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    /// Calls `body` with the socket address of `path`; nil when the path does not fit.
    static func withUnixAddress<Result>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result? {
        let pathBytes = Array(path.utf8)
        guard !pathBytes.isEmpty, pathBytes.count <= maximumSocketPathBytes, !pathBytes.contains(0) else {
            return nil
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }

    static func setNonBlocking(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0
    }

    static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    /// The peer's pid, uid and gid as the kernel recorded them at connect(): SO_PEERCRED.
    static func peerCredentials(_ fd: Int32) -> ControlPeer? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: Glibc hides it behind _GNU_SOURCE,
        // so read the same three 32-bit fields into a tuple of the same layout.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
            length == MemoryLayout<(Int32, UInt32, UInt32)>.size
        else { return nil }
        return ControlPeer(pid: credentials.0, uid: credentials.1, gid: credentials.2)
    }

    /// Sends without blocking and without SIGPIPE; returns bytes sent, or -errno.
    static func sendNow(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        let sent = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        return sent >= 0 ? sent : -Int(errno)
    }

    /// Reads a small text file whole (for /proc); nil when it cannot be read.
    static func readSmallFile(_ path: String, limit: Int = 65_536) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while contents.count < limit {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            contents.append(contentsOf: buffer[0..<count])
        }
        return contents
    }

    /// What is at `path` without following a symlink: nil when nothing is there (or it cannot be seen).
    static func groupOfFile(at path: String) -> UInt32? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_gid
    }

    static func fileType(at path: String) -> (isSocket: Bool, device: UInt64, inode: UInt64)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return ((info.st_mode & S_IFMT) == S_IFSOCK, UInt64(info.st_dev), UInt64(info.st_ino))
    }
}
