import Systemd

/// The daemon's journal: every entry carries COMPONENT (gps, run, store, control, config, ...)
/// and, during a run, RUN_ID, so `journalctl -u pacerd RUN_ID=12` shows one run's story.
struct DaemonLog: Sendable {
    let journal: JournalLogger

    init(journal: JournalLogger = JournalLogger(identifier: "pacerd")) {
        self.journal = journal
    }

    func callAsFunction(_ priority: JournalPriority, _ component: String, _ message: String,
                        runID: Int64? = nil, fields: [String: String] = [:]) {
        var all = fields
        all["COMPONENT"] = component
        if let runID { all["RUN_ID"] = String(runID) }
        journal.send(priority: priority, message: message, fields: all)
    }
}
