import SQLKit

/// Migration 0003: a run becomes an activity the runner manages (#33). Every existing run stays a
/// run, private, believed.
/// - `sport`: `Sport`'s raw value; records, run statistics and the plan count `run` only.
/// - `title`, `notes`: the runner's (or the imported file's) name and notes; NULL: none given.
/// - `visibility`: `RunVisibility`'s raw value; `share_sha256`: the hash of the secret of its
///   share link (the link itself is never stored), NULL when it has none.
/// - `doubt`: why the run cannot be right (samples without elapsed time, impossible splits);
///   NULL: believed. A doubted run is kept and shown, marked, and never makes a record.
/// - `identity`: what recognises one activity in several files (device serial and start, or
///   start and distance); NULL for a device's own runs, which have their run id.
/// - `run_figures.sport`: the figures' sport, so that the statistics page's one query splits
///   runs from other sports without reading `run`.
enum Activities {
    /// Never edited once shipped (`MigrationTests.shippedMigrationsAreUnchanged`).
    static let statements = [
        "ALTER TABLE run ADD COLUMN sport TEXT NOT NULL DEFAULT 'run'",
        "ALTER TABLE run ADD COLUMN title TEXT",
        "ALTER TABLE run ADD COLUMN notes TEXT",
        "ALTER TABLE run ADD COLUMN visibility TEXT NOT NULL DEFAULT 'private'",
        "ALTER TABLE run ADD COLUMN share_sha256 TEXT",
        "ALTER TABLE run ADD COLUMN doubt TEXT",
        "ALTER TABLE run ADD COLUMN identity TEXT",
        "CREATE UNIQUE INDEX run_by_share ON run (share_sha256)",
        "CREATE INDEX run_by_identity ON run (device_id, identity)",
        "ALTER TABLE run_figures ADD COLUMN sport TEXT NOT NULL DEFAULT 'run'",
    ]

    static let migration = Migration("0003-activities") { db, _ in
        for statement in statements { try await db.raw(SQLQueryString(statement)).run() }
    }
}
