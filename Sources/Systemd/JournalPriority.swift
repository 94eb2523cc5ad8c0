/// syslog(3) priorities as the journal and the `<N>` stderr prefix (sd-daemon(3)) use them:
/// 0 is the most severe.
public enum JournalPriority: Int32, Sendable, CaseIterable, Comparable {
    case emergency = 0
    case alert = 1
    case critical = 2
    case error = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    /// Lower raw values are more severe, so `.error < .info`, as in syslog.
    public static func < (lhs: JournalPriority, rhs: JournalPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
