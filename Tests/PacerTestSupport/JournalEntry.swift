/// One entry of pacerd's journal as it writes it outside systemd: a `<N>message` line on stderr
/// (sd-daemon(3); N is the syslog priority, the structured fields are left out).
public struct JournalEntry: Sendable, Equatable, CustomStringConvertible {
    public var priority: Int
    public var message: String

    public init(priority: Int, message: String) {
        self.priority = priority
        self.message = message
    }

    /// The entries of `stderr`, in order; a line without a `<N>` prefix continues the entry before it.
    public static func parse(_ stderr: String) -> [JournalEntry] {
        var entries: [JournalEntry] = []
        for line in stderr.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.first == "<", let close = line.firstIndex(of: ">"),
                let priority = Int(line[line.index(after: line.startIndex)..<close]), (0...7).contains(priority) {
                entries.append(JournalEntry(priority: priority, message: String(line[line.index(after: close)...])))
            } else if !entries.isEmpty {
                entries[entries.count - 1].message += "\n" + line
            }
        }
        return entries
    }

    public var description: String { "<\(priority)>\(message)" }
}
