import PostgresNIO

extension PostgresCloudStore {
    public func outboxStatus(nowMs: Int64) async throws -> OutboxStatus {
        let rows = try await client.query(
            """
            SELECT COUNT(*), MIN(CASE WHEN next_attempt_ms <= \(nowMs) THEN next_attempt_ms END)
            FROM outbox WHERE delivered_ms IS NULL
            """, logger: logger)
        for try await (pending, oldestDue) in rows.decode((Int64, Int64?).self) {
            return OutboxStatus(pending: Int(pending), lagMs: oldestDue.map { max(0, nowMs - $0) } ?? 0)
        }
        return OutboxStatus(pending: 0, lagMs: 0)
    }
}
