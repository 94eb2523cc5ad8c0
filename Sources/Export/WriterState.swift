/// Where a writer is in its begin/add/end sequence; shared by both writers.
enum WriterState: Equatable {
    case ready, writing, ended, failed

    /// Throws unless the writer is between `begin` and `end`.
    func requireWriting() throws {
        switch self {
        case .writing: return
        case .ready: throw ExportError.notBegun
        case .ended: throw ExportError.alreadyEnded
        case .failed: throw ExportError.sinkFailed
        }
    }

    /// Hands `text` to `sink`; a sink that throws leaves the writer failed.
    mutating func emit(_ text: String, to sink: (String) throws -> Void) throws {
        do {
            try sink(text)
        } catch {
            self = .failed
            throw error
        }
    }

    func requireReady() throws {
        switch self {
        case .ready: return
        case .writing: throw ExportError.alreadyBegun
        case .ended: throw ExportError.alreadyEnded
        case .failed: throw ExportError.sinkFailed
        }
    }
}
