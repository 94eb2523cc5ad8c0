/// A journal entry the session decided on, without the daemon's journal types: the daemon maps
/// the level to a journal priority and adds COMPONENT and RUN_ID.
public struct SessionNote: Sendable, Equatable {
    /// syslog's numbers, which the journal's priorities are.
    public enum Level: Int32, Sendable {
        case critical = 2, error, warning, notice, info
    }

    public var level: Level
    public var component: String
    public var message: String
    public var runID: Int64?
    public var fields: [String: String]

    public init(_ level: Level, _ component: String, _ message: String, runID: Int64? = nil, fields: [String: String] = [:]) {
        self.level = level
        self.component = component
        self.message = message
        self.runID = runID
        self.fields = fields
    }
}
