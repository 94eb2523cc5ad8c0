import Foundation
import PacerConfig
import PacerTestSupport
import Testing
@testable import PacerDaemon

#if canImport(Glibc)
import Glibc
#endif

/// `cloud-link.json`: the token's file is 0600 whatever was there before, written whole, and a
/// file that is not a link is reported rather than half-used.
@Suite(.timeLimit(.minutes(10))) struct CloudLinkFileTests {
    static let link = CloudLink(url: "https://cloud.example.org", token: "dG9rZW4", device: "ann-pi", account: "Ann \"the runner\"",
                                linkedAt: "2026-11-25T22:00:00.000Z")

    @Test func roundTripsAt0600AndIsRemoved() throws {
        let directory = try TemporaryDirectory(prefix: "pacer-link")
        let file = CloudLinkFile(storePath: directory.file("pacer.db"))
        #expect(file.path == directory.file("cloud-link.json"))
        #expect(try file.read() == nil)
        // A world-readable leftover of a crashed write must not pass its mode on.
        _ = FileManager.default.createFile(atPath: file.path + ".new", contents: Data("old".utf8), attributes: [.posixPermissions: 0o644])
        try file.write(Self.link)
        var info = stat()
        #expect(stat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try file.read() == Self.link)
        #expect(!FileManager.default.fileExists(atPath: file.path + ".new"))
        try file.write(nil)
        #expect(try file.read() == nil)
        try file.write(nil)  // nothing to remove is no error
    }

    @Test func aFileThatIsNoLinkIsReported() throws {
        let directory = try TemporaryDirectory(prefix: "pacer-link")
        let file = CloudLinkFile(storePath: directory.file("pacer.db"))
        for text in ["", "{}", #"{"url":"https://x","token":""}"#, "not json"] {
            try text.write(toFile: file.path, atomically: true, encoding: .utf8)
            #expect(throws: StateFileError.self, "\(text)") { try file.read() }
        }
    }
}
