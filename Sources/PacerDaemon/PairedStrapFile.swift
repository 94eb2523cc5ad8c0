import BlueZ
#if canImport(Glibc)
import Glibc
#endif

/// The strap chosen with `pacerctl strap pair`, one address in a file beside the run store
/// (`/var/lib/pacer/paired-strap`). Written whole and renamed into place, so a power cut leaves
/// the old choice or the new one, never half of either.
struct PairedStrapFile: Sendable {
    let path: String

    init(storePath: String) {
        let directory = storePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        path = (directory.isEmpty ? "." : directory) + "/paired-strap"
    }

    /// nil when there is no file; a file that does not hold an address is reported, not guessed at.
    func read() throws(PairedStrapError) -> StrapAddress? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw PairedStrapError(message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = Glibc.read(descriptor, &buffer, buffer.count)
        guard count >= 0 else { throw PairedStrapError(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
        let text = String(decoding: buffer[..<count], as: UTF8.self).split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
        if text.isEmpty { return nil }
        guard let address = StrapAddress(text) else { throw PairedStrapError(message: "\(path) holds \"\(text)\", which is not a Bluetooth address; pair the strap again") }
        return address
    }

    /// Stores `address`, or removes the choice when nil.
    func write(_ address: StrapAddress?) throws(PairedStrapError) {
        guard let address else {
            if unlink(path) != 0 && errno != ENOENT { throw PairedStrapError(message: "cannot remove \(path): \(String(cString: strerror(errno)))") }
            return
        }
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw PairedStrapError(message: "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array((address.text + "\n").utf8)
        let written = Glibc.write(descriptor, bytes, bytes.count)
        let synced = fsync(descriptor)
        let failure = errno
        close(descriptor)
        guard written == bytes.count, synced == 0 else {
            unlink(temporary)
            throw PairedStrapError(message: "cannot write \(temporary): \(String(cString: strerror(written < 0 || synced != 0 ? failure : ENOSPC)))")
        }
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw PairedStrapError(message: "cannot replace \(path): \(String(cString: strerror(failure)))")
        }
    }
}

struct PairedStrapError: Error, Sendable, CustomStringConvertible {
    let message: String
    var description: String { message }
}
