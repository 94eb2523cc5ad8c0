import PacerCore

/// One upload waiting for the network.
public struct OutboxItem: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The newest live position (JSON).
        case position
        /// Chunk `sequence` of a run's track (gzipped `application/x-pacer-track`).
        case chunk(runUUID: String, sequence: Int)
        /// The run's summary (JSON, with its number of chunks), sent once every chunk is
        /// acknowledged: the run is then complete on the server.
        case summary(runUUID: String)
    }

    public var id: Int64
    public var kind: Kind
    public var runID: Int64?
    public var payload: [UInt8]
    public var attempts: Int
    public var lastError: String?
}

/// What waits for the network, for `pacerctl status`.
public struct OutboxCounts: Sendable, Equatable {
    public var runs: Int
    public var items: Int
    public var bytes: Int
    public var position: Bool
    public init(runs: Int = 0, items: Int = 0, bytes: Int = 0, position: Bool = false) {
        self.runs = runs
        self.items = items
        self.bytes = bytes
        self.position = position
    }
}

/// An upload the server refused for good, as `pacerctl status` lists it.
public struct RefusedUpload: Sendable, Equatable {
    public enum What: Sendable, Equatable {
        case position
        case chunk(Int)
        case summary
    }

    public var what: What
    public var runID: Int64?
    /// The status and the server's message, as the uplink noted it.
    public var error: String
    public var refusedAt: Timestamp

    /// "run 12 chunk 3: HTTP 413: …"
    public var description: String {
        let run = runID.map { "run \($0)" } ?? "run ?"
        let item = switch what {
        case .position: "the live position"
        case .chunk(let sequence): "\(run) chunk \(sequence)"
        case .summary: "\(run) summary"
        }
        return "\(item): \(error)"
    }
}
