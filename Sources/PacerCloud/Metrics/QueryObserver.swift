import Synchronization

/// Where the SQLite store reports each statement's time (GRDB's profile trace, on every
/// connection of its pool). Nothing is kept until an application attaches its metrics
/// (`CloudApplication.make`). PostgresNIO's client reports nothing per query or lease (its
/// pool's observability delegate is internal and logs only connects and closes), so the
/// PostgreSQL store is timed by the forwarder's probe instead (`CloudMetrics.databaseProbe`).
public final class QueryObserver: Sendable {
    private let metrics = Mutex<CloudMetrics?>(nil)

    public init() {}

    public func attach(_ metrics: CloudMetrics) { self.metrics.withLock { $0 = metrics } }

    func record(store: String, duration: Duration) {
        metrics.withLock { $0 }?.databaseUsed(store: store, duration: duration)
    }
}
