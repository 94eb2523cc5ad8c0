import CloudModel
import SQLKit

/// The forwarding outbox: alert forwards (webhooks, e-mails) and account e-mails, kept until
/// delivered so that a restart continues, leased so that instances sharing the database do not
/// send one item twice.
public struct OutboxRepository: Sendable {
    let database: StoreDatabase

    /// An item with the webhook secret of its device (gone with the device: unsigned).
    struct Row: Decodable {
        let id: Int64, channel: String, target: String, payload: String, attempts: Int, deliveredMs: Int64?, lastError: String?
        let signingSecret: String?

        static let columns: SQLQueryString = """
            id, channel, target, payload, attempts, delivered_ms, last_error,
            (SELECT webhook_secret FROM device WHERE device.id = outbox.device_id) AS signing_secret
            """

        var item: OutboxItem {
            OutboxItem(id: id, channel: channel, target: target, payload: payload, attempts: attempts, deliveredMs: deliveredMs,
                       lastError: lastError, signingSecret: signingSecret)
        }
    }

    static func items(_ db: any SQLDatabase, _ query: SQLQueryString) async throws -> [OutboxItem] {
        try await db.raw(query).rows(Row.self).map(\.item)
    }

    /// Queues an e-mail that carries no link (a notice to an account's address).
    public func queueMail(_ mail: OutboxMail) async throws {
        try await database.transaction { try await Self.queue(mail, in: $0) }
    }

    static func queue(_ mail: OutboxMail, in db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO outbox (channel, target, payload, next_attempt_ms) VALUES ('email', \(bind: mail.to), \(bind: mail.payload), 0)
            """).run()
    }

    /// Takes up to `limit` due items and leases them until `leaseUntilMs`, oldest first.
    public func claimOutbox(nowMs: Int64, leaseUntilMs: Int64, limit: Int) async throws -> [OutboxItem] {
        // Skipping locked rows: instances polling at once each take different items.
        let skipLocked = database.dialect.forUpdateSkipLocked
        return try await database.transaction { db in
            try await Self.items(db, """
                UPDATE outbox SET next_attempt_ms = \(bind: leaseUntilMs) WHERE id IN (
                    SELECT id FROM outbox WHERE delivered_ms IS NULL AND next_attempt_ms <= \(bind: nowMs)
                    ORDER BY id LIMIT \(bind: limit)\(unsafeRaw: skipLocked))
                RETURNING \(Row.columns)
                """).sorted { $0.id < $1.id }
        }
    }

    public func outboxDelivered(id: Int64, nowMs: Int64) async throws {
        try await database.transaction { db in
            // An account's e-mail held a single-use link: once sent, only that it was sent stays.
            try await db.raw("""
                UPDATE outbox SET attempts = attempts + 1, delivered_ms = \(bind: nowMs), last_error = NULL,
                    payload = CASE WHEN device_id IS NULL THEN '' ELSE payload END WHERE id = \(bind: id)
                """).run()
        }
    }

    public func outboxFailed(id: Int64, error: String, nextAttemptMs: Int64) async throws {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE outbox SET attempts = attempts + 1, last_error = \(bind: error), next_attempt_ms = \(bind: nextAttemptMs) WHERE id = \(bind: id)
                """).run()
        }
    }

    public func outbox() async throws -> [OutboxItem] {
        try await database.read { try await Self.items($0, "SELECT \(Row.columns) FROM outbox ORDER BY id") }
    }

    /// Items not yet delivered, and how long the most overdue due one has waited past its time (for /metrics).
    public func outboxStatus(nowMs: Int64) async throws -> OutboxStatus {
        struct Row: Decodable { let pending: Int, oldestDue: Int64? }
        let row = try await database.read { db in
            try await db.raw("""
                SELECT COUNT(*) AS pending, MIN(CASE WHEN next_attempt_ms <= \(bind: nowMs) THEN next_attempt_ms END) AS oldest_due
                FROM outbox WHERE delivered_ms IS NULL
                """).row(Row.self)
        }
        return OutboxStatus(pending: row?.pending ?? 0, lagMs: row?.oldestDue.map { max(0, nowMs - $0) } ?? 0)
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
