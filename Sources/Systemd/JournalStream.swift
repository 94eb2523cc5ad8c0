#if canImport(Glibc)
import Glibc
#endif

/// Whether stderr is connected to the journal. systemd sets `JOURNAL_STREAM=<st_dev>:<st_ino>`
/// (decimal) for a service whose output goes to journald, and a process is only talking to the
/// journal if its fd 2 is still that very stream (systemd.exec(5), sd_journal_stream_fd(3)): a
/// child that inherited the variable but had stderr redirected must not trust it.
enum JournalStream {
    struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    /// Parses `JOURNAL_STREAM`; nil when unset or malformed.
    static func identity(fromEnvironment value: String?) -> Identity? {
        guard let value else { return nil }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
            let device = UInt64(parts[0]), let inode = UInt64(parts[1])
        else { return nil }
        return Identity(device: device, inode: inode)
    }

    /// The device and inode of an open descriptor; nil when it is not open.
    static func identity(ofDescriptor fd: Int32) -> Identity? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    static func isJournal(environmentValue: String?, descriptor fd: Int32) -> Bool {
        guard let expected = identity(fromEnvironment: environmentValue) else { return false }
        return identity(ofDescriptor: fd) == expected
    }

    /// The decision for this process: `$JOURNAL_STREAM` against fd 2.
    static func stderrIsJournal() -> Bool {
        isJournal(
            environmentValue: getenv("JOURNAL_STREAM").map { String(cString: $0) }, descriptor: 2)
    }
}
