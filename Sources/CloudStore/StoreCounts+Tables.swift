import CloudModel

/// The tables each count is of, and the order rows are deleted from them.
extension StoreCounts {
    /// A device's tables, children first: the order `removeDevice` deletes from them.
    static let deviceTables = ["chunk", "run", "position", "position_trail", "alert_answer", "alert_message", "alert", "notice",
                               "device_state", "device"]
    /// An account's own tables, the account last: what `deleteAccount` deletes after its devices'.
    static let accountTables = ["session", "account_token", "link_code", "account"]
    static let allTables = deviceTables + ["outbox"] + accountTables

    /// Counts filled in by `count(table)` for each of `tables`.
    static func tabulate(_ tables: [String] = allTables, _ count: (String) throws -> Int) rethrows -> StoreCounts {
        var counts = StoreCounts()
        for table in tables {
            let value = try count(table)
            switch table {
            case "device": counts.devices = value
            case "chunk": counts.chunks = value
            case "run": counts.runs = value
            case "position": counts.positions = value
            case "alert": counts.alerts = value
            case "alert_message": counts.alertMessages = value
            case "account": counts.accounts = value
            case "session": counts.sessions = value
            case "account_token": counts.accountTokens = value
            case "link_code": counts.linkCodes = value
            case "notice": counts.notices = value
            case "device_state": counts.deviceStates = value
            case "alert_answer": counts.alertAnswers = value
            case "position_trail": counts.trailPoints = value
            default: counts.outbox = value
            }
        }
        return counts
    }
}
