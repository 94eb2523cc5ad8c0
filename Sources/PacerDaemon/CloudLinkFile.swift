import Control
import PacerConfig
#if canImport(Glibc)
import Glibc
#endif

/// `cloud-link.json` beside the run store (`/var/lib/pacer/cloud-link.json`): the device's link
/// to its account. Mode 0600 (it holds the bearer token), written whole and renamed into place,
/// so a power cut leaves the old link or the new one, never half of either.
struct CloudLinkFile: Sendable {
    let path: String

    init(storePath: String) {
        let directory = storePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        path = (directory.isEmpty ? "." : directory) + "/cloud-link.json"
    }

    /// nil when there is no file; a file that is not a link is reported, not guessed at.
    func read() throws(CloudLinkFileError) -> CloudLink? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw CloudLinkFileError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 65_536 {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            guard count >= 0 else { throw CloudLinkFileError("cannot read \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        guard let value = try? JSONValue(parsing: bytes),
              let url = value["url"]?.stringValue, let token = value["token"]?.stringValue, !token.isEmpty else {
            throw CloudLinkFileError("\(path) is not a cloud link (JSON with url and token); link again with pacerctl cloud link URL CODE")
        }
        return CloudLink(url: url, token: token, device: value["device"]?.stringValue ?? "", account: value["account"]?.stringValue ?? "",
                         linkedAt: value["linked_at"]?.stringValue ?? "")
    }

    /// Stores `link`, or removes it when nil.
    func write(_ link: CloudLink?) throws(CloudLinkFileError) {
        guard let link else {
            if unlink(path) != 0 && errno != ENOENT { throw CloudLinkFileError("cannot remove \(path): \(String(cString: strerror(errno)))") }
            return
        }
        let json: JSONValue = ["url": .string(link.url), "token": .string(link.token), "device": .string(link.device),
                               "account": .string(link.account), "linked_at": .string(link.linkedAt)]
        let bytes = Array((json.serialized() + "\n").utf8)
        let temporary = path + ".new"
        unlink(temporary)  // O_CREAT keeps an old file's mode: a fresh one gets 0600
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CloudLinkFileError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = Glibc.write(descriptor, bytes, bytes.count)
        let synced = fsync(descriptor)
        let failure = errno
        close(descriptor)
        guard written == bytes.count, synced == 0 else {
            unlink(temporary)
            throw CloudLinkFileError("cannot write \(temporary): \(String(cString: strerror(written < 0 || synced != 0 ? failure : ENOSPC)))")
        }
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw CloudLinkFileError("cannot replace \(path): \(String(cString: strerror(failure)))")
        }
    }
}

struct CloudLinkFileError: Error, Sendable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
