/// A run's summary as stored: the JSON the device sent (re-encoded canonically, so a repeat
/// compares equal), and the fields the queries need.
public struct StoredSummary: Sendable, Equatable {
    public var runID: String
    public var json: String
    public var chunks: Int
    /// start_time in milliseconds since the epoch: the list's order.
    public var startMs: Int64

    public init(runID: String, json: String, chunks: Int, startMs: Int64) {
        self.runID = runID
        self.json = json
        self.chunks = chunks
        self.startMs = startMs
    }
}
