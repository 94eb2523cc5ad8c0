#if canImport(Glibc)
import Glibc
#endif

/// A small file in pacerd's state directory, read whole and replaced whole: written to a
/// temporary file, synced and renamed into place, so a power cut leaves the old content or the
/// new, never half of either.
struct SyncFile: Sendable {
    let path: String
    /// Permissions of a file it creates: private by default (it may hold what the cloud sent).
    var mode: mode_t = 0o600

    /// `name` in the directory of `storePath` (`/var/lib/pacer/pacer.db` → `/var/lib/pacer/NAME`).
    init(beside storePath: String, name: String) {
        let directory = storePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        path = (directory.isEmpty ? "." : directory) + "/" + name
    }

    init(path: String, mode: mode_t) {
        self.path = path
        self.mode = mode
    }

    /// nil when there is no file.
    func read() throws(SyncFileError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw SyncFileError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw SyncFileError("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
            guard bytes.count <= Self.maxBytes else { throw SyncFileError("\(path) is larger than \(Self.maxBytes) bytes") }
        }
    }

    /// What a sync reply can be (HTTPClient's response limit) and some room.
    static let maxBytes = 2 << 20

    func write(_ bytes: [UInt8]) throws(SyncFileError) {
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SyncFileError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        var offset = 0
        var failure: Int32 = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += written
        }
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        guard failure == 0 else {
            unlink(temporary)
            throw SyncFileError("cannot write \(temporary): \(String(cString: strerror(failure)))")
        }
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw SyncFileError("cannot replace \(path): \(String(cString: strerror(failure)))")
        }
    }
}

public struct SyncFileError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
