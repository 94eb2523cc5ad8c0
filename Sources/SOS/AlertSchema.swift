import SQLite

/// The SOS lane's own SQLite file (`sos.db` beside the run store). A file of its own has its own
/// writer lock: an alert is never recorded behind a run's batch commit holding the store's.
enum AlertSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE alert (
                    id INTEGER PRIMARY KEY,
                    uuid TEXT NOT NULL UNIQUE,            -- the id contacts and the cloud see
                    kind TEXT NOT NULL,                   -- hr_high, hr_low, no_signal_no_motion, manual, test
                    test INTEGER NOT NULL DEFAULT 0,
                    state TEXT NOT NULL CHECK (state IN ('open', 'resolved', 'cancelled', 'closed')),
                    first_out_of_range_ms INTEGER,        -- wall clock, ms since the Unix epoch
                    raised_ms INTEGER NOT NULL,
                    heart_rate INTEGER,
                    latitude REAL,
                    longitude REAL,
                    run_uuid TEXT
                );
                -- What goes out: the alert itself (sequence 0), follow-ups, the all clear, a cancel.
                CREATE TABLE message (
                    id INTEGER PRIMARY KEY,
                    alert_id INTEGER NOT NULL REFERENCES alert(id) ON DELETE CASCADE,
                    sequence INTEGER NOT NULL,
                    type TEXT NOT NULL CHECK (type IN ('alert', 'follow_up', 'resolved', 'cancelled')),
                    created_ms INTEGER NOT NULL,
                    sms TEXT NOT NULL,
                    body TEXT NOT NULL,                   -- the JSON POSTed to /v1/alerts and given to the hook
                    UNIQUE (alert_id, sequence)
                );
                -- One row per message, channel and target (each contact's phone, the URL, the hook).
                -- Retried until acknowledged, across restarts.
                CREATE TABLE delivery (
                    message_id INTEGER NOT NULL REFERENCES message(id) ON DELETE CASCADE,
                    channel TEXT NOT NULL CHECK (channel IN ('sms', 'https', 'hook')),
                    target TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    last_attempt_ms INTEGER,
                    last_error TEXT,
                    acknowledged_ms INTEGER,
                    PRIMARY KEY (message_id, channel, target)
                ) WITHOUT ROWID;
                CREATE INDEX delivery_pending ON delivery(acknowledged_ms) WHERE acknowledged_ms IS NULL;
                """)
        }
        migrator.registerMigration("v2 replaced follow-ups") { db in
            // Set when a newer follow-up for the same alert and target replaced this one unsent:
            // no longer owed, and never sent after a restart.
            try db.execute(sql: "ALTER TABLE delivery ADD COLUMN replaced_ms INTEGER")
        }
        migrator.registerMigration("v3 voice call") { db in
            // `[sos] call`: when the alert's one call was placed (set before CreateCall, so that a
            // crash can never lead to a second call) and its newest state ("active", "terminated",
            // "failed: …"). A restarted lane reads them and never calls again.
            try db.execute(sql: """
                ALTER TABLE alert ADD COLUMN call_placed_ms INTEGER;
                ALTER TABLE alert ADD COLUMN call_state TEXT;
                """)
        }
        migrator.registerMigration("v4 sms delivery reports") { db in
            // An SMS asks for a status report: its MMSmsDeliveryState (0 completed-received, 0x40…
            // permanent errors…) and when it came. Only shown: a text is never sent again, nor
            // held back, for want of a report.
            try db.execute(sql: """
                ALTER TABLE delivery ADD COLUMN report_state INTEGER;
                ALTER TABLE delivery ADD COLUMN reported_ms INTEGER;
                """)
        }
        return migrator
    }
}
