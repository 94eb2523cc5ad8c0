import CSQLite

/// Schema migrations by name, each applied once, in the order registered. The names applied are
/// kept in the table `grdb_migrations`, as GRDB (which wrote the stores before) kept them, so a
/// file written by an earlier pacerd is migrated from where it stands.
public struct DatabaseMigrator {
    private var migrations: [(identifier: String, migrate: (Database) throws -> Void)] = []

    public init() {}

    public mutating func registerMigration(_ identifier: String, migrate: @escaping (Database) throws -> Void) {
        precondition(!migrations.contains { $0.identifier == identifier }, "migration \(identifier) registered twice")
        migrations.append((identifier, migrate))
    }

    /// Applies every migration not applied yet.
    public func migrate(_ queue: DatabaseQueue) throws {
        try migrate(queue, upTo: migrations.last?.identifier)
    }

    /// Applies the migrations not applied yet, up to and including `target`.
    public func migrate(_ queue: DatabaseQueue, upTo target: String?) throws {
        let wanted: ArraySlice<(identifier: String, migrate: (Database) throws -> Void)>
        if let target {
            guard let last = migrations.firstIndex(where: { $0.identifier == target }) else {
                throw DatabaseError(message: "no migration named \(target)")
            }
            wanted = migrations[...last]
        } else {
            wanted = []
        }
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
            for migration in wanted where !applied.contains(migration.identifier) {
                try Self.apply(migration.identifier, migration.migrate, db)
            }
        }
    }

    /// One migration in one transaction, with foreign keys off while it runs (a table rebuilt
    /// is dropped and renamed) and checked before the commit, as SQLite's documentation for
    /// ALTER TABLE recommends.
    private static func apply(_ identifier: String, _ migrate: (Database) throws -> Void, _ db: Database) throws {
        let foreignKeys = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
        if foreignKeys { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
        defer { if foreignKeys { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
        try DatabaseQueue.inTransaction(db, begin: "BEGIN IMMEDIATE") { db in
            try migrate(db)
            if foreignKeys, let violation = try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") {
                throw DatabaseError(resultCode: .init(rawValue: SQLITE_CONSTRAINT),
                                    message: "migration \(identifier) left a foreign key violation in table \(violation["table"] as String)")
            }
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [identifier])
        }
    }
}
