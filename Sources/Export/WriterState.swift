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

    func requireReady() throws {
        switch self {
        case .ready: return
        case .writing: throw ExportError.alreadyBegun
        case .ended: throw ExportError.alreadyEnded
        case .failed: throw ExportError.sinkFailed
        }
    }
}
