import CloudModel
import SQLKit

/// Alerts as devices send their messages (each kept, in order of sequence), the forwards each
/// queues, and the device's live position.
public struct AlertRepository: Sendable {
    let database: StoreDatabase

    struct Row: Decodable {
        let alertId: String, deviceId: String, secret: String, state: String, kind: String, test: Bool, createdMs: Int64
        let latestSequence: Int, latestBody: String
        static let columns: SQLQueryString = "alert_id, device_id, secret, state, kind, test, created_ms, latest_sequence, latest_body"
        var alert: StoredAlert {
            StoredAlert(alertID: alertId, device: deviceId, secret: secret, state: AlertState(rawValue: state) ?? .open, kind: kind, test: test,
                        createdMs: createdMs, latestSequence: latestSequence, latestJSON: latestBody)
        }
    }

    static func alerts(_ db: any SQLDatabase, _ query: SQLQueryString) async throws -> [StoredAlert] {
        try await db.raw(query).rows(Row.self).map(\.alert)
    }

    /// Stores the message (a new alert with its first), moves the alert to the newest message's
    /// state, and queues its forwards, in one transaction.
    public func recordAlertMessage(_ message: AlertMessageInput) async throws -> AlertRecordResult {
        struct Latest: Decodable { let secret: String, latestSequence: Int }
        let lock = database.dialect.forUpdate
        return try await database.transaction { db in
            let state = (AlertState(messageType: message.type) ?? .open).rawValue
            try await db.raw("""
                INSERT INTO alert (device_id, alert_id, secret, state, kind, test, created_ms, latest_sequence, latest_body)
                VALUES (\(bind: message.device), \(bind: message.alertID), \(bind: message.newSecret), \(bind: state), \(bind: message.kind),
                        \(bind: message.test), \(bind: message.receivedMs), \(bind: message.sequence), \(bind: message.json))
                ON CONFLICT DO NOTHING
                """).run()
            // Locked: two instances recording messages of one alert take turns from here.
            guard let latest = try await db.raw("""
                SELECT secret, latest_sequence FROM alert WHERE device_id = \(bind: message.device) AND alert_id = \(bind: message.alertID)\(unsafeRaw: lock)
                """).row(Latest.self)
            else { throw StoreError("alert \(message.alertID) vanished while being recorded") }
            let inserted = try await db.raw("""
                INSERT INTO alert_message (device_id, alert_id, sequence, type, body, received_ms)
                VALUES (\(bind: message.device), \(bind: message.alertID), \(bind: message.sequence), \(bind: message.type), \(bind: message.json),
                        \(bind: message.receivedMs))
                ON CONFLICT DO NOTHING RETURNING sequence
                """).first()
            guard inserted != nil else {
                let stored = try await db.raw("""
                    SELECT body FROM alert_message
                    WHERE device_id = \(bind: message.device) AND alert_id = \(bind: message.alertID) AND sequence = \(bind: message.sequence)
                    """).first()?.decode(column: "body", as: String.self)
                return stored == message.json ? .repeated(secret: latest.secret) : .conflict(secret: latest.secret)
            }
            if message.sequence > latest.latestSequence {
                try await db.raw("""
                    UPDATE alert SET state = \(bind: state), latest_sequence = \(bind: message.sequence), latest_body = \(bind: message.json)
                    WHERE device_id = \(bind: message.device) AND alert_id = \(bind: message.alertID)
                    """).run()
            }
            for target in message.forward {
                try await db.raw("""
                    INSERT INTO outbox (channel, target, payload, next_attempt_ms, device_id)
                    VALUES (\(bind: target.channel), \(bind: target.target), \(bind: target.payload(latest.secret)), \(bind: message.receivedMs),
                            \(bind: message.device))
                    """).run()
            }
            return .created(secret: latest.secret)
        }
    }

    /// The device's alerts (in `state`, when given), newest first, from after `before` (a page's
    /// `AlertCursor`), at most `limit`: every read of alerts is bounded (issue 31).
    public func alerts(device: String, state: AlertState?, before: AlertCursor?, limit: Int) async throws -> [StoredAlert] {
        var query: SQLQueryString = "SELECT \(Row.columns) FROM alert WHERE device_id = \(bind: device)"
        if let state { query += " AND state = \(bind: state.rawValue)" }
        if let before {
            query += " AND (created_ms < \(bind: before.createdMs) OR (created_ms = \(bind: before.createdMs) AND alert_id > \(bind: before.alertID)))"
        }
        query += " ORDER BY created_ms DESC, alert_id LIMIT \(bind: max(0, limit))"
        let finished = query
        return try await database.read { try await Self.alerts($0, finished) }
    }

    /// One alert of the device by its id.
    public func alert(device: String, alertID: String) async throws -> StoredAlert? {
        // A path parameter may hold a NUL (%00), which PostgreSQL text cannot: no alert has one.
        guard !alertID.utf8.contains(0) else { return nil }
        return try await database.read {
            try await Self.alerts($0, "SELECT \(Row.columns) FROM alert WHERE device_id = \(bind: device) AND alert_id = \(bind: alertID)").first
        }
    }

    /// The alert the page secret names with at most `limit` of its messages (the first, then the
    /// newest; oldest first) and how many it has in all.
    public func alert(secret: String, messages limit: Int) async throws -> AlertMessages? {
        try await database.read { db in
            guard let alert = try await Self.alerts(db, "SELECT \(Row.columns) FROM alert WHERE secret = \(bind: secret)").first else { return nil }
            let count = try await db.raw("""
                SELECT COUNT(*) AS n FROM alert_message WHERE device_id = \(bind: alert.device) AND alert_id = \(bind: alert.alertID)
                """).first()?.decode(column: "n", as: Int.self) ?? 0
            // The first message (where and when it was raised) and the newest others.
            let messages = try await db.raw("""
                SELECT sequence, body FROM (SELECT sequence, body FROM alert_message WHERE device_id = \(bind: alert.device)
                                            AND alert_id = \(bind: alert.alertID) ORDER BY sequence LIMIT 1) AS first
                UNION
                SELECT sequence, body FROM (SELECT sequence, body FROM alert_message WHERE device_id = \(bind: alert.device)
                                            AND alert_id = \(bind: alert.alertID) ORDER BY sequence DESC LIMIT \(bind: max(0, limit - 1))) AS newest
                ORDER BY sequence
                """).all().map { try $0.decode(column: "body", as: String.self) }
            return AlertMessages(alert: alert, messages: messages, count: count)
        }
    }

    // MARK: Live position

    /// Stores it unless one with a later `timeMs` is stored; true when stored.
    public func putPosition(device: String, timeMs: Int64, json: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO position (device_id, time_ms, body) VALUES (\(bind: device), \(bind: timeMs), \(bind: json))
                ON CONFLICT (device_id) DO UPDATE SET time_ms = excluded.time_ms, body = excluded.body
                WHERE excluded.time_ms >= position.time_ms
                RETURNING device_id
                """).first() != nil
        }
    }

    public func position(device: String) async throws -> String? {
        try await database.read { db in
            try await db.raw("SELECT body FROM position WHERE device_id = \(bind: device)").first()?.decode(column: "body", as: String.self)
        }
    }
}
