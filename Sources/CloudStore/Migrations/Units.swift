import SQLKit

/// Migration 0005: kilometres or miles per account (#33). Existing accounts keep kilometres,
/// what their pages showed so far.
enum Units {
    /// Never edited once shipped (`MigrationTests.shippedMigrationsAreUnchanged`).
    static let statements = [
        "ALTER TABLE account ADD COLUMN units TEXT NOT NULL DEFAULT 'km'",
    ]

    static let migration = Migration("0005-units") { db, _ in
        for statement in statements { try await db.raw(SQLQueryString(statement)).run() }
    }
}
