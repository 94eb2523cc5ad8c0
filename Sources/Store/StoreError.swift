/// What can go wrong with the store, worded for the operator who reads the journal.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database could not be opened or written (permissions, full disk, not a database).
    case unavailable(String)
    /// Stored data that does not decode: never silently skipped.
    case corrupt(String)
    case noSuchRun(Int64)
    case noSuchGoal(Int64)
    /// A write into a run that is not recording.
    case notRecording(Int64)

    public var description: String {
        switch self {
        case .unavailable(let why): "store unavailable: \(why)"
        case .corrupt(let what): "store data is corrupt: \(what)"
        case .noSuchRun(let id): "no run \(id)"
        case .noSuchGoal(let id): "no goal \(id)"
        case .notRecording(let id): "run \(id) is not recording"
        }
    }
}
