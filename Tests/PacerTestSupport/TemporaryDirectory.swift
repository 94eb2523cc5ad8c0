import Foundation
import Glibc

/// A fresh directory under /tmp, removed with everything in it by `remove()` or when the last
/// reference goes.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "pacer-test") throws(ChildProcessError) {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw ChildProcessError(message: "mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        path = String(cString: created)
    }

    deinit {
        remove()
    }

    /// `path` + "/" + `name`.
    public func file(_ name: String) -> String { path + "/" + name }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
