#if canImport(Glibc)
import Glibc
#endif

/// A small file of pacerd's beside the run store (`/var/lib/pacer/NAME`): read whole, and
/// written whole to NAME.new and renamed into place, so a power cut leaves the old content or
/// the new, never half of either.
struct StateFile: Sendable {
    let path: String

    init(besideStore storePath: String, named name: String) {
        let directory = storePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        path = (directory.isEmpty ? "." : directory) + "/" + name
    }

    /// The content (at most `limit` bytes), or nil when there is no file.
    func read(limit: Int) throws(StateFileError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw StateFileError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = Glibc.read(descriptor, &buffer, min(buffer.count, limit - bytes.count))
            guard count >= 0 else { throw StateFileError("cannot read \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return bytes
    }

    /// Stores `bytes` in a file of `mode` (a fresh one: a leftover's mode is not kept), or
    /// removes the file when nil.
    func write(_ bytes: [UInt8]?, mode: mode_t) throws(StateFileError) {
        guard let bytes else {
            if unlink(path) != 0 && errno != ENOENT { throw StateFileError("cannot remove \(path): \(String(cString: strerror(errno)))") }
            return
        }
        let temporary = path + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw StateFileError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = Glibc.write(descriptor, bytes, bytes.count)
        let synced = fsync(descriptor)
        let failure = errno
        close(descriptor)
        guard written == bytes.count, synced == 0 else {
            unlink(temporary)
            throw StateFileError("cannot write \(temporary): \(String(cString: strerror(written < 0 || synced != 0 ? failure : ENOSPC)))")
        }
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw StateFileError("cannot replace \(path): \(String(cString: strerror(failure)))")
        }
    }
}

struct StateFileError: Error, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
