#if canImport(Glibc)
import Glibc
#endif

/// A file written through write(2) (Swift 6 cannot touch C's `stdout`), created beside its final
/// name and renamed into place on `commit()`, so a failed export never leaves half a file.
final class OutputFile {
    let path: String?
    private let temporary: String?
    private let fd: Int32

    /// nil path: standard output.
    init(path: String?) throws(OutputError) {
        self.path = path
        guard let path else {
            temporary = nil
            fd = 1
            return
        }
        let temp = path + ".partial"
        let opened = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard opened >= 0 else { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
        temporary = temp
        fd = opened
    }

    func write(_ text: String) throws(OutputError) {
        var text = text
        try check(text.withUTF8 { bytes in writeAll(bytes) })
    }

    func write(bytes: [UInt8]) throws(OutputError) {
        try check(bytes.withUnsafeBufferPointer { buffer in writeAll(buffer) })
    }

    /// Writes every byte; the errno of a failure.
    private func writeAll(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += n
        }
        return nil
    }

    private func check(_ failed: Int32?) throws(OutputError) {
        if let failed { throw OutputError(path: path ?? "standard output", reason: String(cString: strerror(failed))) }
    }

    func commit() throws(OutputError) {
        guard let path, let temporary else { return }
        guard fsync(fd) == 0, close(fd) == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw OutputError(path: path, reason: reason)
        }
    }

    func abandon() {
        guard let temporary else { return }
        close(fd)
        unlink(temporary)
    }
}

struct OutputError: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "\(path): \(reason)" }
}
