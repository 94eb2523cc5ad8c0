import Systemd

/// The daemon's journal: every entry carries COMPONENT (gps, run, store, control, config, ...)
/// and, during a run, RUN_ID, so `journalctl -u pacerd RUN_ID=12` shows one run's story.
struct DaemonLog: Sendable {
    private let send: @Sendable (JournalPriority, String, [String: String]) -> Void

    init(journal: JournalLogger = JournalLogger(identifier: "pacerd")) {
        send = { journal.send(priority: $0, message: $1, fields: $2) }
    }

    /// Entries to `send` instead of the journal: in-process tests read what the daemon would say.
    init(send: @escaping @Sendable (JournalPriority, String, [String: String]) -> Void) {
        self.send = send
    }

    func callAsFunction(_ priority: JournalPriority, _ component: String, _ message: String,
                        runID: Int64? = nil, fields: [String: String] = [:]) {
        var all = fields
        all["COMPONENT"] = component
        if let runID { all["RUN_ID"] = String(runID) }
        send(priority, message, all)
    }
}
