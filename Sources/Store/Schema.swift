import SQLite

/// The store's schema. "A good migration is a migration that is never modified once it has
/// shipped" (GRDB): add a new one instead of editing these.
///
/// Write budget: a run's 1 Hz GPS, 1 Hz heart rate and raw gpsd lines go into ONE row per batch
/// (`track_chunk`), committed every few seconds. In WAL mode each commit writes every page it
/// touches; one row in one table without a secondary index touches about one 4 KB page, where a
/// row per sample in separate indexed tables touches four or five.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE run (
                    id INTEGER PRIMARY KEY,            -- "run 12": the number people use
                    uuid TEXT NOT NULL UNIQUE,         -- identity for sync with the cloud
                    state TEXT NOT NULL CHECK (state IN ('recording', 'finished', 'interrupted')),
                    start_ms INTEGER NOT NULL,         -- GPS time, ms since the Unix epoch
                    end_ms INTEGER,
                    distance_m REAL NOT NULL DEFAULT 0,
                    moving_s REAL NOT NULL DEFAULT 0,
                    elapsed_s REAL NOT NULL DEFAULT 0,
                    max_speed_mps REAL NOT NULL DEFAULT 0,
                    hr_avg REAL,
                    hr_max INTEGER,
                    first_chunk_id INTEGER,            -- the run's chunks are ids >= this (see RunStore)
                    upload_state TEXT NOT NULL DEFAULT 'pending'
                        CHECK (upload_state IN ('pending', 'uploading', 'uploaded')),
                    uploaded_ms INTEGER,
                    raw_pruned INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX run_by_start ON run(start_ms);

                -- One row per durable batch of a run: packed samples and heart rate (TrackCodec)
                -- and the gpsd JSON lines as received. Rowids grow with time and only one run
                -- records at a time, so a run's chunks are the rowid range from its first_chunk_id
                -- to the next run's: no index to write on every batch.
                CREATE TABLE track_chunk (
                    id INTEGER PRIMARY KEY,
                    run_id INTEGER NOT NULL,
                    first_ms INTEGER NOT NULL,         -- run time (ms since the run's start) of its first item
                    last_ms INTEGER NOT NULL,
                    samples BLOB,
                    heart BLOB,
                    raw TEXT                           -- '\\n'-joined; NULL once pruned by retention
                );

                CREATE TABLE split (
                    run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                    kind TEXT NOT NULL CHECK (kind IN ('split', 'lap')),
                    idx INTEGER NOT NULL,
                    distance_m REAL NOT NULL,
                    time_s REAL NOT NULL,
                    end_ms INTEGER NOT NULL,
                    PRIMARY KEY (run_id, kind, idx)
                ) WITHOUT ROWID;

                -- Each run's fastest 1 km, 5 km, ... (sliding window over its samples), written
                -- when the run ends or is recovered; personal records are folded from these rows.
                CREATE TABLE best_effort (
                    run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
                    distance_m REAL NOT NULL,
                    duration_s REAL NOT NULL,
                    start_ms INTEGER NOT NULL,
                    end_ms INTEGER NOT NULL,
                    moving_s REAL NOT NULL,
                    PRIMARY KEY (run_id, distance_m)
                ) WITHOUT ROWID;

                CREATE TABLE cue (
                    id INTEGER PRIMARY KEY,
                    run_id INTEGER REFERENCES run(id) ON DELETE CASCADE,
                    time_ms INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    text TEXT NOT NULL
                );
                CREATE INDEX cue_by_run ON cue(run_id);

                -- SOS alerts (severity 'alert') and sensor warnings (severity 'warning'). Alerts
                -- outlive a deleted run: they are what happened to a person.
                CREATE TABLE alert (
                    id INTEGER PRIMARY KEY,
                    uuid TEXT NOT NULL UNIQUE,
                    run_id INTEGER REFERENCES run(id) ON DELETE SET NULL,
                    severity TEXT NOT NULL CHECK (severity IN ('alert', 'warning')),
                    kind TEXT NOT NULL,
                    first_out_of_range_ms INTEGER,
                    raised_ms INTEGER NOT NULL,
                    latitude REAL,
                    longitude REAL,
                    heart_rate INTEGER,
                    details TEXT NOT NULL DEFAULT '{}',
                    resolved_ms INTEGER
                );
                CREATE TABLE alert_dispatch (
                    alert_id INTEGER NOT NULL REFERENCES alert(id) ON DELETE CASCADE,
                    channel TEXT NOT NULL,             -- sms, https, hook
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'acknowledged', 'failed')),
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_attempt_ms INTEGER,
                    next_attempt_ms INTEGER,
                    last_error TEXT,
                    PRIMARY KEY (alert_id, channel)
                ) WITHOUT ROWID;

                -- Uploads waiting for the network: run chunks (idempotent by run uuid and
                -- sequence) and live positions.
                CREATE TABLE outbox (
                    id INTEGER PRIMARY KEY,
                    kind TEXT NOT NULL CHECK (kind IN ('run', 'position')),
                    run_id INTEGER REFERENCES run(id) ON DELETE CASCADE,
                    sequence INTEGER NOT NULL DEFAULT 0,
                    payload BLOB NOT NULL,
                    created_ms INTEGER NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_ms INTEGER,
                    last_error TEXT,
                    UNIQUE (kind, run_id, sequence)
                );

                CREATE TABLE goal (
                    id INTEGER PRIMARY KEY,
                    period TEXT NOT NULL CHECK (period IN ('week', 'month', 'year')),
                    distance_m REAL NOT NULL CHECK (distance_m > 0),
                    created_ms INTEGER NOT NULL
                );
                """)
        }
        // Alerts moved to the SOS lane's own file (sos.db: its own writer lock); these tables
        // were never written. A run's outbox summary row has sequence -1.
        migrator.registerMigration("v2-alerts-to-sos-db") { db in
            try db.execute(sql: "DROP TABLE alert_dispatch; DROP TABLE alert;")
        }
        // An outbox item the server refused for good (a permanent 4xx) is set aside, not
        // deleted: it stays for `pacerctl status` and is never sent again, so the items after it go.
        migrator.registerMigration("v3-outbox-refused") { db in
            try db.execute(sql: "ALTER TABLE outbox ADD COLUMN refused_ms INTEGER")
        }
        // The workout a run followed (its name) and, for a session of the cloud's training plan,
        // the session's id: the uploaded summary carries both, and the cloud marks the session done.
        migrator.registerMigration("v4-run-followed-workout") { db in
            try db.execute(sql: """
                ALTER TABLE run ADD COLUMN workout_name TEXT;
                ALTER TABLE run ADD COLUMN planned_session_id TEXT;
                """)
        }
        // Each sample's altitude (`TrackCodec.encodeAltitudes`) beside its chunk's samples, for
        // the elevation the cloud shows; NULL in runs recorded before, and without a 3D fix.
        migrator.registerMigration("v5-track-altitude") { db in
            try db.execute(sql: "ALTER TABLE track_chunk ADD COLUMN altitude BLOB")
        }
        // Race mode (#34): each position taken for a race, kept until the cloud acknowledged it
        // (a dead network, a restart), or set aside (`refused_ms`) when the cloud refuses the
        // race for good. The crossings known when it was taken go with it.
        migrator.registerMigration("v6-race-positions") { db in
            try db.execute(sql: """
                CREATE TABLE race_position (
                    id INTEGER PRIMARY KEY,
                    race_id TEXT NOT NULL,
                    time_ms INTEGER NOT NULL,          -- GPS time of the fix
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    progress_m REAL NOT NULL,
                    started_ms INTEGER,                -- the runner's start-line crossing, once known
                    finished_ms INTEGER,               -- the finish, once known
                    refused_ms INTEGER,
                    error TEXT
                );
                CREATE INDEX race_position_by_time ON race_position(refused_ms, time_ms);
                """)
        }
        return migrator
    }
}
