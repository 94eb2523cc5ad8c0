/// The schema at version 8, the last one numbered by hand, spelled for each database (PostgreSQL
/// wants BYTEA, BIGSERIAL and real booleans where SQLite takes BLOB, an INTEGER PRIMARY KEY and
/// 0/1): what the first named migration (`Schema8`) makes. Frozen: never edited (a change is a
/// new migration; `MigrationTests.shippedMigrationsAreUnchanged`).
enum Schema {
    /// Bumped with every change; a store refuses a database newer than it knows.
    /// 2: alert sequences 64-bit in PostgreSQL too; chunk.samples (the run's cap is checked
    /// without reading bodies). 3: device.webhook_secret (webhooks are signed with it) and
    /// outbox.device_id (whose secret signs an item). 4: accounts, and device.account_id (the
    /// account a device, and so its runs and alerts, belongs to). 5: web sessions and the
    /// single-use account tokens of e-mailed links, both kept only as SHA-256. 6: device link codes
    /// (by SHA-256, kept until a day past expiry so a reused code is told apart from a wrong one),
    /// device.last_seen_ms (the "My devices" page), the sync channel's notices and each device's
    /// latest state (heartbeat); monitoring: invitations (by SHA-256), consents runner → monitor,
    /// monitors' answers to alerts, and the trail of live positions of the current run; run_view
    /// (what a run's page shows, computed once from its track), goal, and account.max_hr. 7: the
    /// training plan (plan_session, and plan_done: an occurrence done by a run or by hand). 8: what
    /// each run adds to the statistics and health pages (run_figures, run_best_effort), computed
    /// once per run; hr_daily, the heartbeat's daily heart rate outside runs.
    static let version = 8

    static func statements(postgres: Bool) -> [String] {
        let blob = postgres ? "BYTEA" : "BLOB"
        let serial = postgres ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
        let real = postgres ? "DOUBLE PRECISION" : "REAL"
        return [
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS device (
                id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL UNIQUE,
                email TEXT, webhook TEXT, created_at TEXT NOT NULL, webhook_secret TEXT)
            """,
            """
            CREATE TABLE IF NOT EXISTS chunk (
                device_id TEXT NOT NULL, run_id TEXT NOT NULL, seq INTEGER NOT NULL, body \(blob) NOT NULL,
                content_encoding TEXT, digest TEXT NOT NULL, samples BIGINT, PRIMARY KEY (device_id, run_id, seq))
            """,
            """
            CREATE TABLE IF NOT EXISTS run (
                device_id TEXT NOT NULL, run_id TEXT NOT NULL, summary TEXT NOT NULL, chunks INTEGER NOT NULL,
                start_ms BIGINT NOT NULL, PRIMARY KEY (device_id, run_id))
            """,
            "CREATE INDEX IF NOT EXISTS run_by_start ON run (device_id, start_ms)",
            "CREATE TABLE IF NOT EXISTS position (device_id TEXT PRIMARY KEY, time_ms BIGINT NOT NULL, body TEXT NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS alert (
                device_id TEXT NOT NULL, alert_id TEXT NOT NULL, secret TEXT NOT NULL UNIQUE, state TEXT NOT NULL,
                kind TEXT NOT NULL, test BOOLEAN NOT NULL, created_ms BIGINT NOT NULL, latest_sequence BIGINT NOT NULL,
                latest_body TEXT NOT NULL, PRIMARY KEY (device_id, alert_id))
            """,
            """
            CREATE TABLE IF NOT EXISTS alert_message (
                device_id TEXT NOT NULL, alert_id TEXT NOT NULL, sequence BIGINT NOT NULL, type TEXT NOT NULL,
                body TEXT NOT NULL, received_ms BIGINT NOT NULL, PRIMARY KEY (device_id, alert_id, sequence))
            """,
            """
            CREATE TABLE IF NOT EXISTS outbox (
                id \(serial), channel TEXT NOT NULL, target TEXT NOT NULL, payload TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0, next_attempt_ms BIGINT NOT NULL, delivered_ms BIGINT, last_error TEXT,
                device_id TEXT)
            """,
            "CREATE INDEX IF NOT EXISTS outbox_due ON outbox (next_attempt_ms) WHERE delivered_ms IS NULL",
            """
            CREATE TABLE IF NOT EXISTS account (
                id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, password_bcrypt TEXT NOT NULL, confirmed BOOLEAN NOT NULL,
                display_name TEXT NOT NULL, timezone TEXT NOT NULL, created_at TEXT NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS session (
                id_sha256 TEXT PRIMARY KEY, account_id TEXT NOT NULL, csrf TEXT NOT NULL, created_ms BIGINT NOT NULL,
                seen_ms BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS session_by_account ON session (account_id)",
            """
            CREATE TABLE IF NOT EXISTS account_token (
                token_sha256 TEXT PRIMARY KEY, account_id TEXT NOT NULL, purpose TEXT NOT NULL, expires_ms BIGINT NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS link_code (
                code_sha256 TEXT PRIMARY KEY, account_id TEXT NOT NULL, expires_ms BIGINT NOT NULL, used_ms BIGINT)
            """,
            "CREATE INDEX IF NOT EXISTS link_code_by_account ON link_code (account_id)",
            """
            CREATE TABLE IF NOT EXISTS notice (
                id TEXT PRIMARY KEY, device_id TEXT NOT NULL, text TEXT NOT NULL, created_ms BIGINT NOT NULL, delivered_ms BIGINT)
            """,
            "CREATE INDEX IF NOT EXISTS notice_pending ON notice (device_id, created_ms) WHERE delivered_ms IS NULL",
            "CREATE TABLE IF NOT EXISTS device_state (device_id TEXT PRIMARY KEY, received_ms BIGINT NOT NULL, body TEXT NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS monitor_invite (
                token_sha256 TEXT PRIMARY KEY, runner_id TEXT NOT NULL, email TEXT NOT NULL, created_ms BIGINT NOT NULL,
                expires_ms BIGINT NOT NULL)
            """,
            """
            CREATE TABLE IF NOT EXISTS monitor_consent (
                runner_id TEXT NOT NULL, monitor_id TEXT NOT NULL, created_ms BIGINT NOT NULL, PRIMARY KEY (runner_id, monitor_id))
            """,
            "CREATE INDEX IF NOT EXISTS consent_by_monitor ON monitor_consent (monitor_id)",
            """
            CREATE TABLE IF NOT EXISTS alert_answer (
                id \(serial), device_id TEXT NOT NULL, alert_id TEXT NOT NULL, monitor_id TEXT NOT NULL, monitor_name TEXT NOT NULL,
                kind TEXT NOT NULL, text TEXT, created_ms BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS answer_by_device ON alert_answer (device_id, id)",
            """
            CREATE TABLE IF NOT EXISTS position_trail (
                device_id TEXT NOT NULL, run_id TEXT NOT NULL, time_ms BIGINT NOT NULL, lat DOUBLE PRECISION NOT NULL,
                lon DOUBLE PRECISION NOT NULL, PRIMARY KEY (device_id, run_id, time_ms))
            """,
            // `source`: what the view was computed from (`RunView.source`); another is stale.
            """
            CREATE TABLE IF NOT EXISTS run_view (
                device_id TEXT NOT NULL, run_id TEXT NOT NULL, source TEXT NOT NULL, body TEXT NOT NULL, records TEXT NOT NULL,
                PRIMARY KEY (device_id, run_id))
            """,
            """
            CREATE TABLE IF NOT EXISTS goal (
                id TEXT PRIMARY KEY, account_id TEXT NOT NULL, period TEXT NOT NULL, distance_m \(postgres ? "DOUBLE PRECISION" : "REAL") NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS goal_by_account ON goal (account_id)",
            // weekdays: bit 0 Monday … bit 6 Sunday, 0 a single date; end_date: the last date it can fall on.
            """
            CREATE TABLE IF NOT EXISTS plan_session (
                id TEXT PRIMARY KEY, account_id TEXT NOT NULL, name TEXT NOT NULL, steps TEXT NOT NULL, start_date TEXT NOT NULL,
                weekdays INTEGER NOT NULL, weeks INTEGER NOT NULL, end_date TEXT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS plan_session_by_account ON plan_session (account_id, start_date)",
            """
            CREATE TABLE IF NOT EXISTS plan_done (
                session_id TEXT NOT NULL, date TEXT NOT NULL, account_id TEXT NOT NULL, occurrence_id TEXT NOT NULL,
                run_device_id TEXT, run_id TEXT, done_ms BIGINT NOT NULL, PRIMARY KEY (session_id, date))
            """,
            "CREATE INDEX IF NOT EXISTS plan_done_by_account ON plan_done (account_id, date)",
            // What a run adds to the statistics and health pages (`RunFigures`), for the summary
            // in `run` (a new summary deletes them); distance_m NULL: the summary is not
            // understood, the run counts nowhere (as before figures were stored).
            """
            CREATE TABLE IF NOT EXISTS run_figures (
                device_id TEXT NOT NULL, run_id TEXT NOT NULL, version INTEGER NOT NULL, start_ms BIGINT NOT NULL,
                distance_m \(real), moving_s \(real), hr_avg \(real), hr_max INTEGER, hr_seconds TEXT NOT NULL,
                PRIMARY KEY (device_id, run_id))
            """,
            "CREATE INDEX IF NOT EXISTS run_figures_by_start ON run_figures (device_id, start_ms)",
            """
            CREATE TABLE IF NOT EXISTS run_best_effort (
                device_id TEXT NOT NULL, run_id TEXT NOT NULL, name TEXT NOT NULL, seconds \(real) NOT NULL, start_ms BIGINT NOT NULL,
                PRIMARY KEY (device_id, run_id, name))
            """,
            """
            CREATE TABLE IF NOT EXISTS hr_daily (
                device_id TEXT NOT NULL, date TEXT NOT NULL, count INTEGER NOT NULL, min_bpm INTEGER, resting_bpm INTEGER,
                received_ms BIGINT NOT NULL, PRIMARY KEY (device_id, date))
            """,
        ]
    }

    /// What takes an older database to the current version in PostgreSQL (in the migration's
    /// transaction, so it is all or nothing). Harmless on a new database. SQLite's INTEGER is
    /// 64-bit already; its new columns are `sqliteAddedColumns`.
    static let postgresUpgrades = [
        "ALTER TABLE alert ALTER COLUMN latest_sequence TYPE BIGINT",
        "ALTER TABLE alert_message ALTER COLUMN sequence TYPE BIGINT",
        "ALTER TABLE chunk ADD COLUMN IF NOT EXISTS samples BIGINT",
        "ALTER TABLE device ADD COLUMN IF NOT EXISTS webhook_secret TEXT",
        "ALTER TABLE outbox ADD COLUMN IF NOT EXISTS device_id TEXT",
        "ALTER TABLE device ADD COLUMN IF NOT EXISTS account_id TEXT",
        "ALTER TABLE device ADD COLUMN IF NOT EXISTS last_seen_ms BIGINT",
        "ALTER TABLE account ADD COLUMN IF NOT EXISTS max_hr INTEGER",
    ]

    /// Columns SQLite adds to older databases (table, column, type): it has no ADD COLUMN IF
    /// NOT EXISTS, so the store checks each first.
    static let sqliteAddedColumns = [
        ("chunk", "samples", "INTEGER"), ("device", "webhook_secret", "TEXT"), ("outbox", "device_id", "TEXT"),
        ("device", "account_id", "TEXT"), ("device", "last_seen_ms", "INTEGER"), ("account", "max_hr", "INTEGER"),
    ]

    /// Chunks counted in a migration at a time (their bodies are read to count the samples).
    static let backfillBatch = 50
}
