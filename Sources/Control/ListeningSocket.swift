#if canImport(Glibc)
import Glibc
#endif

/// The bound, listening socket and the identity of its file, so that stopping removes only the
/// file this server created (not one a newer pacerd has bound since).
struct ListeningSocket: Sendable {
    let fd: Int32
    let path: String
    private let device: UInt64
    private let inode: UInt64

    static func open(_ configuration: ControlServer.Configuration) throws(ControlServerError) -> ListeningSocket {
        let path = configuration.socketPath
        guard Syscalls.withUnixAddress(path, { _, _ in () }) != nil else { throw .socketPathTooLong(path: path) }
        try removeStaleSocket(at: path)

        let fd = Syscalls.unixStreamSocket()
        guard fd >= 0 else { throw .systemCall("socket", path: nil, errno: errno) }
        func fail(_ call: String) -> ControlServerError {
            let error = ControlServerError.systemCall(call, path: path, errno: errno)
            close(fd)
            return error
        }
        guard Syscalls.withUnixAddress(path, { bind(fd, $0, $1) }) == 0 else { throw fail("bind") }
        // Mode and group are set before listen(): until then connect() is refused, so nobody
        // gets in through the umask's permissions in between.
        guard chmod(path, mode_t(configuration.socketMode)) == 0 else {
            let error = fail("chmod")
            unlink(path)
            throw error
        }
        // Only when the group differs: under pacerd.service the socket is born in group pacer
        // (Group=pacer), and the unit's system-call filter refuses chown altogether.
        if let group = configuration.group, Syscalls.groupOfFile(at: path) != group, chown(path, uid_t.max, gid_t(group)) != 0 {
            let error = fail("chown")
            unlink(path)
            throw error
        }
        guard let identity = Syscalls.fileType(at: path), Syscalls.setNonBlocking(fd), listen(fd, 16) == 0 else {
            let error = fail("listen")
            unlink(path)
            throw error
        }
        return ListeningSocket(fd: fd, path: path, device: identity.device, inode: identity.inode)
    }

    /// A socket file left by a pacerd that did not stop cleanly is removed; a live one (something
    /// accepts connections) or anything that is not a socket is an error.
    private static func removeStaleSocket(at path: String) throws(ControlServerError) {
        guard let existing = Syscalls.fileType(at: path) else { return }
        guard existing.isSocket else { throw .notASocket(path: path) }
        let probe = Syscalls.unixStreamSocket()
        guard probe >= 0 else { throw .systemCall("socket", path: nil, errno: errno) }
        let connected = Syscalls.withUnixAddress(path, { connect(probe, $0, $1) }) == 0
        close(probe)
        if connected { throw .alreadyListening(path: path) }
        guard unlink(path) == 0 || errno == ENOENT else { throw .systemCall("unlink", path: path, errno: errno) }
    }

    func closeAndRemove() {
        close(fd)
        if let current = Syscalls.fileType(at: path), current.device == device, current.inode == inode {
            unlink(path)
        }
    }
}
