import Synchronization

/// Where the store reports the time of each read and transaction (`StoreDatabase`), on SQLite
/// and PostgreSQL alike. Nothing is kept until an application attaches its metrics
/// (`CloudApplication.make`). The forwarder's probe times the database too (`CloudMetrics.databaseProbe`).
public final class QueryObserver: Sendable {
    private let metrics = Mutex<CloudMetrics?>(nil)

    public init() {}

    public func attach(_ metrics: CloudMetrics) { self.metrics.withLock { $0 = metrics } }

    func record(store: String, duration: Duration) {
        metrics.withLock { $0 }?.databaseUsed(store: store, duration: duration)
    }
}
