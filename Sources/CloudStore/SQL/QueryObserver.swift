import Synchronization

/// What keeps the time of the store's reads and transactions (pacer-cloud's metrics).
public protocol QueryTimeRecorder: Sendable {
    func databaseUsed(store: String, duration: Duration)
}

/// Where the store reports the time of each read and transaction (`StoreDatabase`), on SQLite
/// and PostgreSQL alike. Nothing is kept until an application attaches its metrics
/// (`CloudApplication.make`). The forwarder's probe times the database too (`CloudMetrics.databaseProbe`).
public final class QueryObserver: Sendable {
    private let recorder = Mutex<(any QueryTimeRecorder)?>(nil)

    public init() {}

    public func attach(_ recorder: any QueryTimeRecorder) { self.recorder.withLock { $0 = recorder } }

    func record(store: String, duration: Duration) {
        recorder.withLock { $0 }?.databaseUsed(store: store, duration: duration)
    }
}
