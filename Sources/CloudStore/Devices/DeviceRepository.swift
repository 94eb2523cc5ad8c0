import CloudModel
import SQLKit

/// Devices, their tokens (kept only as SHA-256) and the one-time codes that link them to accounts.
public struct DeviceRepository: Sendable {
    let database: StoreDatabase

    /// A `device` row as stored, read by column name.
    struct Row: Decodable {
        let id: String, name: String, email: String?, webhook: String?, createdAt: String
        let tokenSha256: String, accountId: String?, lastSeenMs: Int64?

        static let columns: SQLQueryString = "id, name, email, webhook, created_at, token_sha256, account_id, last_seen_ms"

        var device: Device {
            var device = Device(id: id, name: name, email: email, webhook: webhook, createdAt: createdAt)
            device.revoked = tokenSha256.hasPrefix(Device.revokedTokenMark)
            device.accountID = accountId
            device.lastSeenMs = lastSeenMs
            return device
        }
    }

    static func devices(_ db: any SQLDatabase, _ query: SQLQueryString) async throws -> [Device] {
        try await db.raw(query).rows(Row.self).map(\.device)
    }

    /// `webhookSecret` signs the device's webhooks (nil: it has none). Throws `StoreError` when a
    /// device has the name (or, in theory, the token) already.
    public func addDevice(_ device: Device, tokenHash: String, webhookSecret: String?) async throws {
        let inserted = try await database.transaction { db in
            try await db.raw("""
                INSERT INTO device (id, name, token_sha256, email, webhook, created_at, webhook_secret)
                VALUES (\(bind: device.id), \(bind: device.name), \(bind: tokenHash), \(bind: device.email), \(bind: device.webhook),
                        \(bind: device.createdAt), \(bind: webhookSecret))
                ON CONFLICT DO NOTHING RETURNING id
                """).first() != nil
        }
        if !inserted { throw StoreError("a device named \(device.name) exists already") }
    }

    public func devices() async throws -> [Device] {
        try await database.read { try await Self.devices($0, "SELECT \(Row.columns) FROM device ORDER BY name") }
    }

    /// An account's devices, by name (its import device too).
    public func devices(accountID: String) async throws -> [Device] {
        try await database.read {
            try await Self.devices($0, "SELECT \(Row.columns) FROM device WHERE account_id = \(bind: accountID) ORDER BY name")
        }
    }

    public func device(tokenHash: String) async throws -> Device? {
        try await database.read {
            try await Self.devices($0, "SELECT \(Row.columns) FROM device WHERE token_sha256 = \(bind: tokenHash)").first
        }
    }

    /// One device by its id (a monitor's view of a runner's device).
    public func device(id: String) async throws -> Device? {
        try await database.read { try await Self.devices($0, "SELECT \(Row.columns) FROM device WHERE id = \(bind: id)").first }
    }

    /// Replaces the device's token hash with one no token has: its next request is 401 on every
    /// instance, since none caches tokens. False: no such device.
    public func revokeDevice(name: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE device SET token_sha256 = \(bind: Device.revokedTokenMark) || id WHERE name = \(bind: name) RETURNING id
                """).first() != nil
        }
    }

    /// Gives the device to the account (or takes it from any with nil). False: no such device.
    public func assignDevice(name: String, accountID: String?) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("UPDATE device SET account_id = \(bind: accountID) WHERE name = \(bind: name) RETURNING id").first() != nil
        }
    }

    /// Records that the device authenticated at `seenMs` (never moves it back).
    public func touchDevice(id: String, seenMs: Int64) async throws {
        let greatest = database.dialect.greatest
        try await database.transaction { db in
            try await db.raw("""
                UPDATE device SET last_seen_ms = \(unsafeRaw: greatest)(COALESCE(last_seen_ms, 0), \(bind: seenMs)) WHERE id = \(bind: id)
                """).run()
        }
    }

    /// Revokes the token of the account's device with that id; its runs stay the account's.
    /// False: the account has no such device.
    public func unlinkDevice(id: String, accountID: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE device SET token_sha256 = \(bind: Device.revokedTokenMark) || id
                WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING id
                """).first() != nil
        }
    }

    /// Stores a code for the account in place of any unused one it had (one live code per
    /// account), and purges codes that expired a day before `nowMs`.
    public func addLinkCode(hash: String, accountID: String, expiresMs: Int64, nowMs: Int64) async throws {
        try await database.transaction { db in
            try await db.raw("""
                DELETE FROM link_code WHERE (account_id = \(bind: accountID) AND used_ms IS NULL)
                OR expires_ms < \(bind: nowMs - LinkCodes.keptAfterExpiryMs)
                """).run()
            try await db.raw("""
                INSERT INTO link_code (code_sha256, account_id, expires_ms) VALUES (\(bind: hash), \(bind: accountID), \(bind: expiresMs))
                """).run()
        }
    }

    /// Takes the code and, in the same transaction, gives its account `device` with the token of
    /// `tokenHash`: a new device, or the account's own device of that name with a new token. The
    /// code is used only when the device is linked.
    public func linkDevice(codeHash: String, nowMs: Int64, device: Device, tokenHash: String) async throws -> LinkOutcome {
        struct Code: Decodable { let accountId: String, expiresMs: Int64, usedMs: Int64? }
        let lock = database.dialect.forUpdate
        return try await database.transaction { db -> LinkOutcome in
            // Locked: of two instances taking one code at once, the second waits and sees it used.
            guard let code = try await db.raw("""
                SELECT account_id, expires_ms, used_ms FROM link_code WHERE code_sha256 = \(bind: codeHash)\(unsafeRaw: lock)
                """).row(Code.self) else { return .unknownCode }
            if code.usedMs != nil { return .usedCode }
            if code.expiresMs <= nowMs { return .expiredCode }
            var linked = device
            linked.accountID = code.accountId
            linked.lastSeenMs = nowMs
            var relinked = false
            if let existing = try await Self.devices(db, "SELECT \(Row.columns) FROM device WHERE name = \(bind: device.name)\(unsafeRaw: lock)").first {
                guard existing.accountID == code.accountId else { return .nameTaken }
                try await db.raw("UPDATE device SET token_sha256 = \(bind: tokenHash), last_seen_ms = \(bind: nowMs) WHERE id = \(bind: existing.id)").run()
                linked = existing
                linked.revoked = false
                linked.lastSeenMs = nowMs
                relinked = true
            } else {
                let inserted = try await db.raw("""
                    INSERT INTO device (id, name, token_sha256, created_at, account_id, last_seen_ms)
                    VALUES (\(bind: device.id), \(bind: device.name), \(bind: tokenHash), \(bind: device.createdAt), \(bind: code.accountId), \(bind: nowMs))
                    ON CONFLICT DO NOTHING RETURNING id
                    """).first()
                // Another instance made a device of that name a moment ago.
                if inserted == nil { return .nameTaken }
            }
            try await db.raw("UPDATE link_code SET used_ms = \(bind: nowMs) WHERE code_sha256 = \(bind: codeHash)").run()
            return .linked(linked, relinked: relinked)
        }
    }
}
