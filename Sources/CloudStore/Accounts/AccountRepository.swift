import CloudModel
import SQLKit

/// Accounts, their web sessions and the single-use tokens of e-mailed links, all kept by the
/// SHA-256 of what the browser or the mailbox holds.
public struct AccountRepository: Sendable {
    let database: StoreDatabase

    /// An `account` row as stored.
    struct Row: Decodable {
        let id: String, email: String, passwordBcrypt: String, confirmed: Bool, displayName: String, timezone: String
        let createdAt: String, maxHr: Int?, units: String

        static let names = ["id", "email", "password_bcrypt", "confirmed", "display_name", "timezone", "created_at", "max_hr", "units"]
        static let columns = columns(prefix: nil)

        /// The columns, each qualified by the table's alias in a join.
        static func columns(prefix: String?) -> SQLQueryString {
            SQLQueryString(names.map { name in prefix.map { "\($0).\(name)" } ?? name }.joined(separator: ", "))
        }

        var stored: StoredAccount {
            StoredAccount(account: Account(id: id, email: email, confirmed: confirmed, displayName: displayName, timezone: timezone,
                                           createdAt: createdAt, maxHeartRate: maxHr, units: DistanceUnit(rawValue: units) ?? .km),
                          passwordHash: passwordBcrypt)
        }
    }

    private func accounts(_ query: SQLQueryString) async throws -> [StoredAccount] {
        try await database.read { try await $0.raw(query).rows(Row.self).map(\.stored) }
    }

    /// Throws `StoreError` when an account has that e-mail address already.
    public func addAccount(_ account: Account, passwordHash: String) async throws {
        let inserted = try await database.transaction { db in
            try await db.raw("""
                INSERT INTO account (id, email, password_bcrypt, confirmed, display_name, timezone, created_at, units)
                VALUES (\(bind: account.id), \(bind: account.email), \(bind: passwordHash), \(bind: account.confirmed), \(bind: account.displayName),
                        \(bind: account.timezone), \(bind: account.createdAt), \(bind: account.units.rawValue))
                ON CONFLICT DO NOTHING RETURNING id
                """).first() != nil
        }
        if !inserted { throw StoreError("an account with the address \(account.email) exists already") }
    }

    public func accounts() async throws -> [Account] {
        try await accounts("SELECT \(Row.columns) FROM account ORDER BY email").map(\.account)
    }

    public func account(email: String) async throws -> StoredAccount? {
        try await accounts("SELECT \(Row.columns) FROM account WHERE email = \(bind: email)").first
    }

    public func account(id: String) async throws -> Account? {
        try await accounts("SELECT \(Row.columns) FROM account WHERE id = \(bind: id)").first?.account
    }

    /// Marks the address confirmed; false: no such account.
    public func confirmAccount(id: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("UPDATE account SET confirmed = \(bind: true) WHERE id = \(bind: id) RETURNING id").first() != nil
        }
    }

    /// Changes the account's time zone, maximum heart rate and units.
    public func setAccountSettings(id: String, timezone: String, maxHeartRate: Int?, units: DistanceUnit = .km) async throws {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE account SET timezone = \(bind: timezone), max_hr = \(bind: maxHeartRate), units = \(bind: units.rawValue)
                WHERE id = \(bind: id)
                """).run()
        }
    }

    /// Replaces the password hash and ends every session of the account (a reset locks out whoever
    /// knew the old password); every unused e-mailed link of it dies too: an older reset link (a
    /// copy in a stolen mailbox) must not set another.
    public func setPassword(accountID: String, passwordHash: String) async throws {
        try await database.transaction { db in
            try await db.raw("UPDATE account SET password_bcrypt = \(bind: passwordHash) WHERE id = \(bind: accountID)").run()
            try await db.raw("DELETE FROM session WHERE account_id = \(bind: accountID)").run()
            try await db.raw("DELETE FROM account_token WHERE account_id = \(bind: accountID)").run()
        }
    }

    // MARK: Sessions

    public func addSession(_ session: StoredSession) async throws {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO session (id_sha256, account_id, csrf, created_ms, seen_ms)
                VALUES (\(bind: session.idHash), \(bind: session.accountID), \(bind: session.csrf), \(bind: session.createdMs), \(bind: session.seenMs))
                """).run()
        }
    }

    public func session(idHash: String) async throws -> StoredSession? {
        struct Row: Decodable { let idSha256: String, accountId: String, csrf: String, createdMs: Int64, seenMs: Int64 }
        return try await database.read { db in
            try await db.raw("SELECT id_sha256, account_id, csrf, created_ms, seen_ms FROM session WHERE id_sha256 = \(bind: idHash)")
                .row(Row.self)
                .map { StoredSession(idHash: $0.idSha256, accountID: $0.accountId, csrf: $0.csrf, createdMs: $0.createdMs, seenMs: $0.seenMs) }
        }
    }

    public func touchSession(idHash: String, seenMs: Int64) async throws {
        let greatest = database.dialect.greatest
        try await database.transaction { db in
            try await db.raw("UPDATE session SET seen_ms = \(unsafeRaw: greatest)(seen_ms, \(bind: seenMs)) WHERE id_sha256 = \(bind: idHash)").run()
        }
    }

    public func deleteSession(idHash: String) async throws {
        try await database.transaction { try await $0.raw("DELETE FROM session WHERE id_sha256 = \(bind: idHash)").run() }
    }

    /// Deletes sessions idle since before `idleBeforeMs` or created before `createdBeforeMs`.
    public func deleteExpiredSessions(idleBeforeMs: Int64, createdBeforeMs: Int64) async throws {
        try await database.transaction { db in
            try await db.raw("DELETE FROM session WHERE seen_ms < \(bind: idleBeforeMs) OR created_ms < \(bind: createdBeforeMs)").run()
        }
    }

    // MARK: E-mailed links

    /// Stores the token and queues `mail` (the link to it) in one transaction.
    public func addAccountToken(_ token: AccountToken, mail: OutboxMail) async throws {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO account_token (token_sha256, account_id, purpose, expires_ms)
                VALUES (\(bind: token.hash), \(bind: token.accountID), \(bind: token.purpose), \(bind: token.expiresMs))
                """).run()
            try await OutboxRepository.queue(mail, in: db)
        }
    }

    /// Deletes the token and returns its account when it has that purpose and has not expired at
    /// `nowMs`; a token can be taken once (DELETE ... RETURNING: of two instances taking one
    /// token at once, one gets the row).
    public func takeAccountToken(hash: String, purpose: String, nowMs: Int64) async throws -> String? {
        struct Row: Decodable { let accountId: String, purpose: String, expiresMs: Int64 }
        return try await database.transaction { db in
            // Links nobody followed in time go here, at the rate links are followed.
            try await db.raw("DELETE FROM account_token WHERE expires_ms <= \(bind: nowMs) AND token_sha256 <> \(bind: hash)").run()
            guard let row = try await db.raw("DELETE FROM account_token WHERE token_sha256 = \(bind: hash) RETURNING account_id, purpose, expires_ms")
                .row(Row.self) else { return nil }
            return row.purpose == purpose && row.expiresMs > nowMs ? row.accountId : nil
        }
    }
}
