import Foundation
import SQLite
import Testing

/// The device's SQLite layer on real files: transactions, values, migrations as GRDB left them.
@Suite(.timeLimit(.minutes(10))) struct SQLiteTests {
    let directory = NSTemporaryDirectory() + "pacer-sqlite-\(UUID().uuidString)"
    var path: String { directory + "/test.db" }

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    @Test func aWriteThatThrowsLeavesNothingBehind() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)") }
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: ["kept?"])
                throw Stop()
            }
        }
        // A constraint failure mid-transaction rolls back the rows before it too.
        #expect(throws: DatabaseError.self) {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: ["first"])
                try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: [nil as String?])
            }
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 0)
        let id = try queue.write { db in
            try db.execute(sql: "INSERT INTO t (v) VALUES (?)", arguments: ["committed"])
            return db.lastInsertedRowID
        }
        #expect(try queue.read { db in try String.fetchOne(db, sql: "SELECT v FROM t WHERE id = ?", arguments: [id]) } == "committed")
    }

    @Test func readsCannotWrite() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        let error = #expect(throws: DatabaseError.self) {
            try queue.read { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        }
        #expect(error?.message?.contains("readonly") == true)
        // The connection writes again afterwards.
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(try queue.read { db in try Int.fetchAll(db, sql: "SELECT v FROM t") } == [2])
    }

    @Test func valuesRoundTrip() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try DatabaseQueue(path: path)
        let blob = Data([0, 1, 2, 255])
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, e BLOB, n TEXT)")
            try db.cachedStatement(sql: "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)")
                .execute(arguments: [Int64.max, 2.5, "päce ✓", blob, Data(), nil as String?])
        }
        let row = try #require(try queue.read { db in try Row.fetchOne(db, sql: "SELECT * FROM t") })
        #expect(row["i"] as Int64 == .max)
        #expect(row["r"] as Double == 2.5)
        #expect(row["s"] as String == "päce ✓")
        #expect(row["b"] as Data == blob)
        #expect(row["e"] as Data? == Data(), "an empty blob is not NULL")
        #expect(row["n"] as String? == nil)
        #expect(row["I"] as Int64 == .max, "column names are case-insensitive, as in SQL")
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT n FROM t") } == nil)
    }

    @Test func aCursorReadsRowByRow() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (v INTEGER)")
            for v in 0..<300 { try db.cachedStatement(sql: "INSERT INTO t VALUES (?)").execute(arguments: [v]) }
        }
        let sum = try queue.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT v FROM t WHERE v >= ? ORDER BY v", arguments: [100])
            var sum = 0
            while let row = try rows.next() { sum += row["v"] as Int }
            return sum
        }
        #expect(sum == (100..<300).reduce(0, +))
    }

    @Test func foreignKeysCascade() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (parent_id INTEGER NOT NULL REFERENCES parent(id) ON DELETE CASCADE);
                INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1); INSERT INTO child VALUES (1);
                """)
            try db.execute(sql: "DELETE FROM parent WHERE id = ?", arguments: [1])
            #expect(db.changesCount == 1)
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM child") } == 0)
    }

    /// Stores written by GRDB's migrator name their applied migrations in grdb_migrations: only
    /// the ones after those run, each once.
    @Test func migrationsContinueWhereTheFileStands() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: "CREATE TABLE t (a INTEGER)") }
        migrator.registerMigration("v2") { db in try db.execute(sql: "ALTER TABLE t ADD COLUMN b INTEGER") }
        do {
            let queue = try DatabaseQueue(path: path)
            try migrator.migrate(queue, upTo: "v1")
            try queue.write { db in try db.execute(sql: "INSERT INTO t (a) VALUES (7)") }
        }
        let queue = try DatabaseQueue(path: path)
        try migrator.migrate(queue)
        try migrator.migrate(queue)  // nothing left to do: ALTER TABLE would fail if run twice
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier") } == ["v1", "v2"])
        #expect(try queue.read { db in try Row.fetchOne(db, sql: "SELECT a, b FROM t") }.map { [$0["a"] as Int?, $0["b"] as Int?] } == [7, nil])
    }

    @Test func aMigrationThatFailsIsNotRecorded() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "CREATE TABLE t (a INTEGER)")
            try db.execute(sql: "INSERT INTO nowhere VALUES (1)")
        }
        let queue = try DatabaseQueue(path: path)
        #expect(throws: DatabaseError.self) { try migrator.migrate(queue) }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE name = 't'") } == 0)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM grdb_migrations") } == 0)
    }

    @Test func aSecondWriterWaitsForTheLock() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
        let first = try DatabaseQueue(path: path, configuration: configuration)
        let second = try DatabaseQueue(path: path, configuration: configuration)
        try first.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        // The first holds the write lock for 0.3 s; the second's write waits instead of failing.
        let holding = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            try? first.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                holding.signal()
                Thread.sleep(forTimeInterval: 0.3)
            }
            done.signal()
        }.start()
        holding.wait()
        let start = Date()
        try second.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(Date().timeIntervalSince(start) > 0.1, "it waited for the first writer's commit")
        done.wait()
        #expect(try second.read { db in try Int.fetchAll(db, sql: "SELECT v FROM t ORDER BY v") } == [1, 2])
    }

    @Test func aFileThatIsNotADatabaseFailsToOpen() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        var configuration = Configuration()
        configuration.readonly = true
        let error = #expect(throws: DatabaseError.self) { try DatabaseQueue(path: path, configuration: configuration) }
        #expect(error?.message == "file is not a database")
    }

    @Test func aMissingFileIsAnErrorWhenReadOnly() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = Configuration()
        configuration.readonly = true
        let error = #expect(throws: DatabaseError.self) { try DatabaseQueue(path: path, configuration: configuration) }
        #expect(error?.description.contains("unable to open") == true)
    }
}
