import CloudModel
import Foundation
import PacerContract
import SQLKit

/// The first named migration: the schema as it was at version 8, the last one numbered by hand.
/// A new database gets it whole; a database of an older version is upgraded as pacer-cloud
/// upgraded it before (the columns added since, the chunks' samples counted, account addresses
/// normalised), and one at version 8 keeps every row. `schema_version` is then set to 9, so that a
/// pacer-cloud from before named migrations refuses the database instead of writing to a schema
/// it does not know.
enum Schema8 {
    static let migration = Migration("0001-schema-8") { db, dialect in
        for statement in Schema.statements(postgres: dialect == .postgres) {
            try await db.raw(SQLQueryString(statement)).run()
        }
        let version = try await db.raw("SELECT MAX(version) AS version FROM schema_version").first()?.decode(column: "version", as: Int?.self)
        if let version, version > Schema.version {
            throw StoreError("the database has schema version \(version); this pacer-cloud knows up to \(Schema.version)")
        }
        switch dialect {
        case .postgres:
            for statement in Schema.postgresUpgrades { try await db.raw(SQLQueryString(statement)).run() }
        case .sqlite:
            try await addMissingSQLiteColumns(db)
        }
        try await countChunkSamples(db)
        try await normalizeAccountEmails(db)
        try await db.raw("DELETE FROM schema_version").run()
        try await db.raw("INSERT INTO schema_version (version) VALUES (9)").run()
    }

    /// The columns added to SQLite tables since version 1 that `db` lacks (SQLite has no ADD
    /// COLUMN IF NOT EXISTS).
    static func addMissingSQLiteColumns(_ db: any SQLDatabase) async throws {
        for (table, column, type) in Schema.sqliteAddedColumns {
            let columns = try await db.raw("SELECT name FROM pragma_table_info(\(bind: table))").all()
                .map { try $0.decode(column: "name", as: String.self) }
            if !columns.contains(column) {
                try await db.raw("ALTER TABLE \(ident: table) ADD COLUMN \(ident: column) \(unsafeRaw: type)").run()
            }
        }
    }

    /// Chunks stored before version 2 had no sample count (a run's cap is checked without reading
    /// bodies): counted from their bodies, a batch at a time.
    private static func countChunkSamples(_ db: any SQLDatabase) async throws {
        struct Uncounted: Decodable {
            let deviceId: String, runId: String, seq: Int, body: Data, contentEncoding: String?
        }
        while true {
            let rows = try await db.raw("""
                SELECT device_id, run_id, seq, body, content_encoding FROM chunk WHERE samples IS NULL LIMIT \(literal: Schema.backfillBatch)
                """).rows(Uncounted.self)
            for row in rows {
                let samples = TrackChunkFormat.countSamples(Array(row.body), gzip: row.contentEncoding == "gzip") ?? Int(Int32.max)
                try await db.raw("""
                    UPDATE chunk SET samples = \(bind: samples) WHERE device_id = \(bind: row.deviceId) AND run_id = \(bind: row.runId) AND seq = \(bind: row.seq)
                    """).run()
            }
            if rows.count < Schema.backfillBatch { return }
        }
    }

    /// Addresses stored before they were normalised (NFKC, lower case): normalised unless another
    /// account has the normalised form already.
    private static func normalizeAccountEmails(_ db: any SQLDatabase) async throws {
        struct Address: Decodable { let id: String, email: String }
        for account in try await db.raw("SELECT id, email FROM account").all(decoding: Address.self) {
            guard let normalized = EmailAddress.migrated(account.email), normalized != account.email else { continue }
            if try await db.raw("SELECT 1 AS taken FROM account WHERE email = \(bind: normalized)").first() != nil { continue }
            try await db.raw("UPDATE account SET email = \(bind: normalized) WHERE id = \(bind: account.id)").run()
        }
    }
}
