#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum FileHandleLike {
    static func standardError(_ text: String) {
        // `stderr` is a C global that Swift 6 rejects as shared mutable state; write(2) is not.
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

func exitWithStatus(_ status: Int32) -> Never {
    exit(status)
}
