import SQLKit

/// Migration 0004: the runner's shoes (#33), each with the distance it had when added, the
/// distance to be reminded at, and whether it is retired; a run names the shoe it was run in.
/// (DOUBLE PRECISION is REAL to SQLite: one text for both.)
enum Shoes {
    /// Never edited once shipped (`MigrationTests.shippedMigrationsAreUnchanged`).
    static let statements = [
        """
        CREATE TABLE shoe (
            id TEXT PRIMARY KEY, account_id TEXT NOT NULL, name TEXT NOT NULL, start_m DOUBLE PRECISION NOT NULL,
            remind_m DOUBLE PRECISION, retired BOOLEAN NOT NULL DEFAULT FALSE, created_ms BIGINT NOT NULL)
        """,
        "CREATE INDEX shoe_by_account ON shoe (account_id)",
        "ALTER TABLE run ADD COLUMN shoe_id TEXT",
    ]

    static let migration = Migration("0004-shoes") { db, _ in
        for statement in statements { try await db.raw(SQLQueryString(statement)).run() }
    }
}
