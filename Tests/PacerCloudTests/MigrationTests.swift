import CloudModel
@testable import CloudStore
import Foundation
import PacerContract
import PacerTestSupport
import SQLKit
import Testing
@testable import PacerCloud

/// Named migrations (issue 32): a database at schema version 8, made with the statements of
/// pacer-cloud 8, with a row in every table, is upgraded in place on both backends with every row
/// kept; migrating again does nothing; several instances migrating at once run each migration
/// once; the upgraded database says version 9, which a pacer-cloud from before named migrations
/// refuses (it refused any version above the 8 it knew).
@Suite(.timeLimit(.minutes(10))) struct MigrationTests {
    /// Every table of schema 8, with the rows `fill` writes into it.
    static let tables = [
        "device", "chunk", "run", "position", "alert", "alert_message", "outbox", "account", "session", "account_token",
        "link_code", "notice", "device_state", "monitor_invite", "monitor_consent", "alert_answer", "position_trail",
        "run_view", "goal", "plan_session", "plan_done", "run_figures", "run_best_effort", "hr_daily",
    ]

    /// A chunk body of three samples, stored before samples were counted (samples NULL).
    static let uncountedChunk: [UInt8] = Array((0..<3).map { second in
        TrackChunkFormat.line(ChunkSample(timeMs: 1_700_000_000_000 + Int64(second) * 1000, lat: 45.5, lon: 9.2, speedMps: 3,
                                          distanceM: Double(second) * 3, moving: true, heartRate: 140)) + "\n"
    }.joined().utf8)

    static func fill(_ db: any SQLDatabase) async throws {
        let body = Data(uncountedChunk)
        let statements: [SQLQueryString] = [
            "INSERT INTO device (id, name, token_sha256, email, webhook, created_at, webhook_secret, account_id, last_seen_ms) VALUES ('d1', 'ann-pacer', 'tok', 'ann@example.org', 'https://hook.example.org', '2026-01-01T00:00:00Z', 'whs', 'a1', 5)",
            "INSERT INTO chunk (device_id, run_id, seq, body, content_encoding, digest, samples) VALUES ('d1', 'r1', 0, \(bind: body), NULL, 'sha', NULL)",
            "INSERT INTO run (device_id, run_id, summary, chunks, start_ms) VALUES ('d1', 'r1', '{}', 1, 1700000000000)",
            "INSERT INTO position (device_id, time_ms, body) VALUES ('d1', 7, '{}')",
            "INSERT INTO alert (device_id, alert_id, secret, state, kind, test, created_ms, latest_sequence, latest_body) VALUES ('d1', 'al1', 'sec', 'open', 'hr_high', FALSE, 8, 9000000000, '{}')",
            "INSERT INTO alert_message (device_id, alert_id, sequence, type, body, received_ms) VALUES ('d1', 'al1', 9000000000, 'raised', '{}', 9)",
            "INSERT INTO outbox (channel, target, payload, attempts, next_attempt_ms, delivered_ms, last_error, device_id) VALUES ('email', 'x@example.org', 'p', 1, 10, NULL, 'e', 'd1')",
            "INSERT INTO account (id, email, password_bcrypt, confirmed, display_name, timezone, created_at, max_hr) VALUES ('a1', 'Ann@Example.ORG', 'hash', TRUE, 'Ann', 'Europe/Rome', '2026-01-01', 190)",
            "INSERT INTO session (id_sha256, account_id, csrf, created_ms, seen_ms) VALUES ('s1', 'a1', 'c', 11, 12)",
            "INSERT INTO account_token (token_sha256, account_id, purpose, expires_ms) VALUES ('t1', 'a1', 'reset', 13)",
            "INSERT INTO link_code (code_sha256, account_id, expires_ms, used_ms) VALUES ('l1', 'a1', 14, NULL)",
            "INSERT INTO notice (id, device_id, text, created_ms, delivered_ms) VALUES ('n1', 'd1', 'hello', 15, NULL)",
            "INSERT INTO device_state (device_id, received_ms, body) VALUES ('d1', 16, '{}')",
            "INSERT INTO monitor_invite (token_sha256, runner_id, email, created_ms, expires_ms) VALUES ('i1', 'a1', 'bob@example.org', 17, 18)",
            "INSERT INTO monitor_consent (runner_id, monitor_id, created_ms) VALUES ('a1', 'a2', 19)",
            "INSERT INTO alert_answer (device_id, alert_id, monitor_id, monitor_name, kind, text, created_ms) VALUES ('d1', 'al1', 'a2', 'Bob', 'coming', NULL, 20)",
            "INSERT INTO position_trail (device_id, run_id, time_ms, lat, lon) VALUES ('d1', 'r1', 21, 45.5, 9.2)",
            "INSERT INTO run_view (device_id, run_id, source, body, records) VALUES ('d1', 'r1', 'v1', '{}', '{}')",
            "INSERT INTO goal (id, account_id, period, distance_m) VALUES ('g1', 'a1', 'week', 20000.5)",
            "INSERT INTO plan_session (id, account_id, name, steps, start_date, weekdays, weeks, end_date) VALUES ('p1', 'a1', 'Easy', '[]', '2026-01-05', 5, 4, '2026-02-01')",
            "INSERT INTO plan_done (session_id, date, account_id, occurrence_id, run_device_id, run_id, done_ms) VALUES ('p1', '2026-01-05', 'a1', 'o1', 'd1', 'r1', 22)",
            "INSERT INTO run_figures (device_id, run_id, version, start_ms, distance_m, moving_s, hr_avg, hr_max, hr_seconds) VALUES ('d1', 'r1', 1, 1700000000000, 9.0, 2.0, 140.0, 150, '[]')",
            "INSERT INTO run_best_effort (device_id, run_id, name, seconds, start_ms) VALUES ('d1', 'r1', '1k', 240.5, 1700000000000)",
            "INSERT INTO hr_daily (device_id, date, count, min_bpm, resting_bpm, received_ms) VALUES ('d1', '2026-01-05', 10, 50, 55, 23)",
        ]
        for statement in statements { try await db.raw(statement).run() }
    }

    static func counts(_ database: StoreDatabase) async throws -> [String: Int] {
        try await database.read { db in
            var counts: [String: Int] = [:]
            for table in tables {
                counts[table] = try await db.raw("SELECT COUNT(*) AS n FROM \(ident: table)").first()?.decode(column: "n", as: Int.self)
            }
            return counts
        }
    }

    /// The version-8 database, filled, upgraded; what every backend must show after.
    static func upgradeFromVersion8(_ database: StoreDatabase) async throws {
        try await database.transaction { try await fill($0) }
        let before = try await counts(database)
        #expect(before.values.allSatisfy { $0 == 1 }, "\(before)")

        let ran = try await Migrator.migrate(database, nowMs: 1_800_000_000_000)
        #expect(ran == Migrations.all.map(\.name))
        #expect(try await counts(database) == before)
        try await database.read { db in
            let version = try await db.raw("SELECT MAX(version) AS v FROM schema_version").first()?.decode(column: "v", as: Int.self)
            #expect(version == 9)
            let names = try await db.raw("SELECT name, applied_ms FROM pacer_migration").all()
            #expect(try Set(names.map { try $0.decode(column: "name", as: String.self) }) == Set(Migrations.all.map(\.name)))
            #expect(try names.first?.decode(column: "applied_ms", as: Int64.self) == 1_800_000_000_000)
            // The rows' values, not only their number: the 64-bit sequence, the blob, the flags.
            let chunk = try #require(try await db.raw("SELECT body, samples FROM chunk").first())
            #expect(try chunk.decode(column: "body", as: Data.self) == Data(uncountedChunk))
            #expect(try chunk.decode(column: "samples", as: Int.self) == 3, "the chunk stored before samples were counted is counted")
            let alert = try #require(try await db.raw("SELECT latest_sequence, test FROM alert").first())
            #expect(try alert.decode(column: "latest_sequence", as: Int64.self) == 9_000_000_000)
            #expect(try alert.decode(column: "test", as: Bool.self) == false)
            let account = try #require(try await db.raw("SELECT email, max_hr, confirmed FROM account").first())
            #expect(try account.decode(column: "email", as: String.self) == "ann@example.org", "the address is normalised")
            #expect(try account.decode(column: "max_hr", as: Int?.self) == 190)
            #expect(try account.decode(column: "confirmed", as: Bool.self))
            let device = try #require(try await db.raw("SELECT token_sha256, account_id, last_seen_ms, webhook_secret FROM device").first())
            #expect(try device.decode(column: "token_sha256", as: String.self) == "tok")
            #expect(try device.decode(column: "webhook_secret", as: String?.self) == "whs")
            #expect(try device.decode(column: "last_seen_ms", as: Int64?.self) == 5)
            let goal = try #require(try await db.raw("SELECT distance_m FROM goal").first())
            #expect(try goal.decode(column: "distance_m", as: Double.self) == 20000.5)
            let run = try #require(try await db.raw("SELECT complete FROM run").first())
            #expect(try run.decode(column: "complete", as: Bool.self), "the run with its one chunk is complete (0002-run-complete)")
            // 0003-activities: a run from before is a private, believed run.
            let activity = try #require(try await db.raw("SELECT sport, visibility, doubt, title, share_sha256 FROM run").first())
            #expect(try activity.decode(column: "sport", as: String.self) == Sport.run.rawValue)
            #expect(try activity.decode(column: "visibility", as: String.self) == RunVisibility.private.rawValue)
            #expect(try activity.decode(column: "doubt", as: String?.self) == nil && activity.decode(column: "title", as: String?.self) == nil)
            #expect(try activity.decode(column: "share_sha256", as: String?.self) == nil)
        }
        // Once is enough: a second start runs nothing.
        #expect(try await Migrator.migrate(database, nowMs: 1_800_000_000_001).isEmpty)
    }

    /// A database at schema version 8 as pacer-cloud 8 left it: its statements (frozen in
    /// `Schema`, which migration 0001 runs too), the columns it added to older tables, version 8.
    static func makeVersion8(_ database: StoreDatabase) async throws {
        let dialect = database.dialect
        try await database.transaction { db in
            for statement in Schema.statements(postgres: dialect == .postgres) { try await db.raw(SQLQueryString(statement)).run() }
            switch dialect {
            case .postgres:
                for statement in Schema.postgresUpgrades { try await db.raw(SQLQueryString(statement)).run() }
            case .sqlite:
                // As pacer-cloud 8 did: the columns its CREATE TABLEs lack, added.
                try await Schema8.addMissingSQLiteColumns(db)
            }
            try await db.raw("INSERT INTO schema_version (version) VALUES (8)").run()
        }
    }

    @Test("a version-8 SQLite file is upgraded in place, every row kept")
    func sqliteFromVersion8() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StoreDatabase.sqlite(path: directory.file("cloud.db"))
        try await Self.makeVersion8(database)
        try await Self.upgradeFromVersion8(database)
        await database.close()
    }

    @Test("a version-8 PostgreSQL database is upgraded in place, every row kept")
    func postgresFromVersion8() async throws {
        let database = try await DatabaseURL(try await Cloud.freshPostgresDatabase()).openDatabase()
        try await database.withRunning {
            try await Self.makeVersion8(database)
            try await Self.upgradeFromVersion8(database)
        }
    }

    @Test("instances starting together on one PostgreSQL database run each migration once")
    func concurrentMigrationsRunOnce() async throws {
        let url = try await Cloud.freshPostgresDatabase()
        var databases: [StoreDatabase] = []
        for _ in 0..<4 { databases.append(try await DatabaseURL(url).openDatabase()) }
        let instances = databases
        // Four instances, each with its pool running, migrate at once.
        let ran = try await withThrowingTaskGroup(of: [String].self) { group in
            for database in instances {
                group.addTask { try await database.withRunning { try await Migrator.migrate(database, nowMs: 1) } }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ran == Migrations.all.map(\.name), "\(ran)")
    }

    @Test("a new SQLite file gets every migration; a migration this binary does not know is refused", arguments: [false, true])
    func newDatabaseAndUnknownMigration(_ unknown: Bool) async throws {
        let directory = try TemporaryDirectory()
        let database = try await StoreDatabase.sqlite(path: directory.file("cloud.db"))
        #expect(try await Migrator.migrate(database, nowMs: 1) == Migrations.all.map(\.name))
        #expect(try await Self.counts(database).values.allSatisfy { $0 == 0 })
        if unknown {
            try await database.transaction { db in
                try await db.raw("INSERT INTO pacer_migration (name, applied_ms) VALUES ('9999-from-the-future', 2)").run()
            }
            let error = await #expect(throws: StoreError.self) { try await Migrator.migrate(database, nowMs: 3) }
            #expect(error?.message.contains("9999-from-the-future") == true)
        }
        await database.close()
    }

    /// What each shipped migration runs, fingerprinted: a migration is never edited once shipped
    /// (databases that ran it would differ from new ones); a change is a new migration.
    @Test("shipped migrations are unchanged")
    func shippedMigrationsAreUnchanged() {
        func fingerprint(_ text: String) -> String {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return String(hash, radix: 16)
        }
        let schema8 = [Schema.statements(postgres: false), Schema.statements(postgres: true), Schema.postgresUpgrades,
                       Schema.sqliteAddedColumns.map { "\($0.0) \($0.1) \($0.2)" }, [String(Schema.version), String(Schema.backfillBatch)]]
            .flatMap { $0 }.joined(separator: "\n")
        #expect(Migrations.all.map(\.name) == ["0001-schema-8", "0002-run-complete", "0003-activities", "0004-shoes", "0005-units", "0006-races"])
        #expect(fingerprint(schema8) == "4a48e6bc7c037e6b", "0001-schema-8's statements changed")
        #expect(fingerprint(RunComplete.statements.joined(separator: "\n")) == "ba2f7ecd160bac8b", "0002-run-complete's statements changed")
        #expect(fingerprint(Activities.statements.joined(separator: "\n")) == "b54cb08f5cd0bac4", "0003-activities' statements changed")
        #expect(fingerprint(Shoes.statements.joined(separator: "\n")) == "6ac27663b50fb2b1", "0004-shoes' statements changed")
        #expect(fingerprint(Units.statements.joined(separator: "\n")) == "4f70603547b8e97c", "0005-units' statements changed")
        #expect(fingerprint(Races.statements.joined(separator: "\n")) == "d31cede2843a5a41", "0006-races' statements changed")
    }

    /// A failed migration leaves nothing behind: neither its changes nor its name.
    @Test("a migration that fails is rolled back whole")
    func failedMigrationRollsBack() async throws {
        let directory = try TemporaryDirectory()
        let database = try await StoreDatabase.sqlite(path: directory.file("cloud.db"))
        let failing = Migration("0002-fails") { db, _ in
            try await db.raw("CREATE TABLE half_done (x INTEGER)").run()
            try await db.raw("SELECT * FROM no_such_table").run()
        }
        await #expect(throws: StoreError.self) { try await Migrator.migrate(database, migrations: Migrations.all + [failing], nowMs: 1) }
        let left = try await database.read { db in
            try await db.raw("SELECT name FROM sqlite_master WHERE name IN ('half_done', 'pacer_migration', 'device')").all().count
        }
        #expect(left == 0, "the failed migration left tables behind")
        await database.close()
    }
}
