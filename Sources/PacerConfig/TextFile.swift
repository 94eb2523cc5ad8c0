#if canImport(Glibc)
import Glibc
#endif

/// Why a file could not be read, before anything in it was looked at.
enum TextFileError: Error, Sendable, Equatable {
    case missing
    case unreadable(reason: String)
}

/// Reads a small text file (config, workout) whole. Plain POSIX so that PacerConfig stays free of
/// Foundation; the size cap keeps a wrong path (a log, a device) from being slurped.
enum TextFile {
    static let maximumBytes = 1 << 20

    static func contents(atPath path: String) throws(TextFileError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw .missing }
            throw .unreadable(reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(reason: String(cString: strerror(errno)))
            }
            bytes += chunk[0..<n]
            guard bytes.count <= maximumBytes else { throw .unreadable(reason: "larger than 1 MiB") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
