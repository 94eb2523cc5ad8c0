/// One chunk of a run's track, exactly as the device sent it.
public struct StoredChunk: Sendable, Equatable {
    public var runID: String
    public var seq: Int
    public var body: [UInt8]
    /// "gzip", or nil when the body is the plain track text.
    public var contentEncoding: String?
    /// SHA-256 (hex) of body and encoding: how a repeat is told from a conflict.
    public var digest: String
    /// How many samples the chunk holds: the run's cap is checked from these.
    public var samples: Int?

    public init(runID: String, seq: Int, body: [UInt8], contentEncoding: String?, digest: String, samples: Int? = nil) {
        self.runID = runID
        self.seq = seq
        self.body = body
        self.contentEncoding = contentEncoding
        self.digest = digest
        self.samples = samples
    }
}
