import CloudModel
import SQLKit

/// What the sync channel keeps for devices: notices to say, and each device's latest state.
public struct SyncRepository: Sendable {
    let database: StoreDatabase

    struct NoticeRow: Decodable {
        let id: String, deviceId: String, text: String, createdMs: Int64, deliveredMs: Int64?
        static let columns: SQLQueryString = "id, device_id, text, created_ms, delivered_ms"
        var notice: StoredNotice { StoredNotice(id: id, device: deviceId, text: text, createdMs: createdMs, deliveredMs: deliveredMs) }
    }

    private func notices(_ query: SQLQueryString) async throws -> [StoredNotice] {
        try await database.read { try await $0.raw(query).rows(NoticeRow.self).map(\.notice) }
    }

    public func addNotice(_ notice: StoredNotice) async throws {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO notice (id, device_id, text, created_ms, delivered_ms)
                VALUES (\(bind: notice.id), \(bind: notice.device), \(bind: notice.text), \(bind: notice.createdMs), \(bind: notice.deliveredMs))
                """).run()
        }
    }

    /// The device's notices not yet delivered, oldest first, at most `limit`.
    public func pendingNotices(device: String, limit: Int) async throws -> [StoredNotice] {
        try await notices("""
            SELECT \(NoticeRow.columns) FROM notice WHERE device_id = \(bind: device) AND delivered_ms IS NULL
            ORDER BY created_ms, id LIMIT \(bind: limit)
            """)
    }

    /// Every notice of the device, delivered or not, oldest first (operators, tests).
    public func notices(device: String) async throws -> [StoredNotice] {
        try await notices("SELECT \(NoticeRow.columns) FROM notice WHERE device_id = \(bind: device) ORDER BY created_ms, id")
    }

    /// Marks the device's notices `ids` delivered at `nowMs` (those delivered already keep their
    /// time), all or none: the ids that are not the device's notices, when any, and nothing marked.
    public func acknowledgeNotices(device: String, ids: [String], nowMs: Int64) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let lock = database.dialect.forUpdate
        return try await database.transaction { db in
            let known = Set(try await db.raw("SELECT id FROM notice WHERE device_id = \(bind: device) AND id IN (\(binds: ids))\(unsafeRaw: lock)")
                .all().map { try $0.decode(column: "id", as: String.self) })
            let unknown = ids.filter { !known.contains($0) }
            guard unknown.isEmpty else { return unknown }
            try await db.raw("""
                UPDATE notice SET delivered_ms = \(bind: nowMs) WHERE device_id = \(bind: device) AND id IN (\(binds: ids)) AND delivered_ms IS NULL
                """).run()
            return []
        }
    }

    public func deviceState(device: String) async throws -> StoredDeviceState? {
        struct Row: Decodable { let receivedMs: Int64, body: String }
        return try await database.read { db in
            try await db.raw("SELECT received_ms, body FROM device_state WHERE device_id = \(bind: device)")
                .row(Row.self)
                .map { StoredDeviceState(receivedMs: $0.receivedMs, json: $0.body) }
        }
    }
}
