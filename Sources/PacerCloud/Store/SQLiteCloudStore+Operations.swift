import Foundation
import GRDB

extension SQLiteCloudStore {
    public func outboxStatus(nowMs: Int64) async throws -> OutboxStatus {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS pending, MIN(CASE WHEN next_attempt_ms <= ? THEN next_attempt_ms END) AS oldest_due
                FROM outbox WHERE delivered_ms IS NULL
                """, arguments: [nowMs])
            let pending: Int = row?["pending"] ?? 0
            let oldestDue: Int64? = row?["oldest_due"]
            return OutboxStatus(pending: pending, lagMs: oldestDue.map { max(0, nowMs - $0) } ?? 0)
        }
    }

    /// Reports each statement's time to `observer` (`Configuration.prepareDatabase`: every connection the pool opens).
    static func observe(_ configuration: inout Configuration, _ observer: QueryObserver) {
        configuration.prepareDatabase { db in
            db.trace(options: .profile) { event in
                if case .profile(_, let seconds) = event { observer.record(store: "sqlite", duration: .seconds(seconds)) }
            }
        }
    }
}

/// The outbox for /metrics.
public struct OutboxStatus: Sendable, Equatable {
    /// Items not yet delivered (due, leased or waiting for a retry).
    public var pending: Int
    /// How long the most overdue due item has waited past its time; 0 when none is due.
    public var lagMs: Int64

    public init(pending: Int, lagMs: Int64) {
        self.pending = pending
        self.lagMs = lagMs
    }
}
