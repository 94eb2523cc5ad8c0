import SQLKit

/// Migration 0006: races (#34). A race with its course (JSON arrays of [lat, lon]), its
/// organisers, its runners' entries (bib, status, and the newest position, so a leaderboard is
/// one read), their positions (a backlog arrives out of order: the key makes a resend a no-op),
/// those who observe it, and the newest frame spectators are sent. Every change of what a frame
/// shows counts `dirty_seq` up; an instance claims the next frame when it is ahead of
/// `frame_dirty_seq` and the last frame (`frame_ms`) is a period old, so each race gets at most one
/// frame per period whichever instance makes it.
enum Races {
    /// Never edited once shipped (`MigrationTests.shippedMigrationsAreUnchanged`).
    static let statements = [
        """
        CREATE TABLE race (
            id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, name TEXT NOT NULL, timezone TEXT NOT NULL, starts_ms BIGINT NOT NULL, closes_ms BIGINT NOT NULL,
            access TEXT NOT NULL, invite_code TEXT NOT NULL, route_plan TEXT NOT NULL, waypoints TEXT NOT NULL, path TEXT NOT NULL,
            length_m DOUBLE PRECISION NOT NULL, start_lat DOUBLE PRECISION NOT NULL, start_lon DOUBLE PRECISION NOT NULL,
            created_ms BIGINT NOT NULL, postponed_from_ms BIGINT,
            frame_ms BIGINT NOT NULL DEFAULT 0, frame_seq BIGINT NOT NULL DEFAULT 0, frame TEXT,
            dirty_seq BIGINT NOT NULL DEFAULT 0, frame_dirty_seq BIGINT NOT NULL DEFAULT 0)
        """,
        "CREATE INDEX race_by_start ON race (starts_ms)",
        "CREATE INDEX race_by_place ON race (start_lat, start_lon)",
        "CREATE UNIQUE INDEX race_by_invite ON race (invite_code)",
        "CREATE TABLE race_organiser (race_id TEXT NOT NULL, account_id TEXT NOT NULL, PRIMARY KEY (race_id, account_id))",
        "CREATE INDEX race_organiser_by_account ON race_organiser (account_id)",
        """
        CREATE TABLE race_entry (
            race_id TEXT NOT NULL, account_id TEXT NOT NULL, bib INTEGER NOT NULL, status TEXT NOT NULL, enrolled_ms BIGINT NOT NULL,
            last_ms BIGINT, last_lat DOUBLE PRECISION, last_lon DOUBLE PRECISION, progress_m DOUBLE PRECISION, pace_s_km DOUBLE PRECISION,
            start_cross_ms BIGINT, finish_ms BIGINT, corrected_gun_ms BIGINT,
            PRIMARY KEY (race_id, account_id), UNIQUE (race_id, bib))
        """,
        "CREATE INDEX race_entry_by_account ON race_entry (account_id)",
        """
        CREATE TABLE race_position (
            race_id TEXT NOT NULL, account_id TEXT NOT NULL, t_ms BIGINT NOT NULL, lat DOUBLE PRECISION NOT NULL, lon DOUBLE PRECISION NOT NULL,
            progress_m DOUBLE PRECISION NOT NULL, PRIMARY KEY (race_id, account_id, t_ms))
        """,
        "CREATE TABLE race_observer (race_id TEXT NOT NULL, account_id TEXT NOT NULL, PRIMARY KEY (race_id, account_id))",
        "CREATE INDEX race_observer_by_account ON race_observer (account_id)",
    ]

    static let migration = Migration("0006-races") { db, _ in
        for statement in statements { try await db.raw(SQLQueryString(statement)).run() }
    }
}
