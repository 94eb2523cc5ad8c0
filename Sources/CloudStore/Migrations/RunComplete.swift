import SQLKit

/// Migration 0002: whether a run is complete (its summary, and every chunk below the count it
/// names) is kept in the run's row, set as each chunk and summary is written, instead of counted
/// again by every list: PostgreSQL counted the chunks of each of an account's runs for every
/// runs, statistics and heart-rate page (15–20 ms a page at a thousand runs).
enum RunComplete {
    /// Never edited once shipped (`MigrationTests.shippedMigrationsAreUnchanged`).
    static let statements = [
        "ALTER TABLE run ADD COLUMN complete BOOLEAN NOT NULL DEFAULT FALSE",
        """
        UPDATE run SET complete = (chunks = (SELECT COUNT(*) FROM chunk c WHERE c.device_id = run.device_id AND c.run_id = run.run_id
                                                                             AND c.seq < run.chunks))
        """,
    ]

    static let migration = Migration("0002-run-complete") { db, _ in
        for statement in statements { try await db.raw(SQLQueryString(statement)).run() }
    }
}
