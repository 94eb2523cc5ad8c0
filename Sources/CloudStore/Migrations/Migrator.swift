import SQLKit

/// One change to the schema (and the rows it needs changed), known by its name. A migration is
/// never edited once shipped: a later change is a new migration at the end of the list
/// (`MigrationTests.shippedMigrationsAreUnchanged` fails on an edit).
public struct Migration: Sendable {
    public let name: String
    let run: @Sendable (any SQLDatabase, Dialect) async throws -> Void

    init(_ name: String, run: @escaping @Sendable (any SQLDatabase, Dialect) async throws -> Void) {
        self.name = name
        self.run = run
    }
}

/// Runs the migrations a database has not had yet, in order, each recorded by name in
/// `pacer_migration`, all in one transaction under a lock: several instances starting together
/// run each migration once (the others wait, then find nothing to do), and a migration that
/// fails leaves the database as it was.
public enum Migrator {
    /// PostgreSQL's advisory lock: the key pacer-cloud's migration took before named migrations
    /// too, so an older instance and a newer one never migrate at the same time.
    static let lockKey = 7_365_872

    /// The names of the migrations run now (none when the database was up to date).
    @discardableResult
    public static func migrate(_ database: StoreDatabase, migrations: [Migration] = Migrations.all, nowMs: Int64) async throws -> [String] {
        try await database.checkReachable()
        let dialect = database.dialect
        return try await database.transaction { db in
            if dialect == .postgres {
                try await db.raw("SELECT pg_advisory_xact_lock(\(literal: lockKey))").run()
            }
            try await db.raw("CREATE TABLE IF NOT EXISTS pacer_migration (name TEXT PRIMARY KEY, applied_ms BIGINT NOT NULL)").run()
            let applied = Set(try await db.raw("SELECT name FROM pacer_migration").all().map { try $0.decode(column: "name", as: String.self) })
            let known = Set(migrations.map(\.name))
            let unknown = applied.subtracting(known).sorted()
            if !unknown.isEmpty {
                throw StoreError("the database has migrations this pacer-cloud does not know (\(unknown.joined(separator: ", "))): "
                                 + "a newer pacer-cloud upgraded it")
            }
            var ran: [String] = []
            for migration in migrations where !applied.contains(migration.name) {
                do {
                    try await migration.run(db, dialect)
                } catch {
                    throw StoreError("migration \(migration.name) failed: \(error)")
                }
                try await db.raw("INSERT INTO pacer_migration (name, applied_ms) VALUES (\(bind: migration.name), \(bind: nowMs))").run()
                ran.append(migration.name)
            }
            return ran
        }
    }
}

/// Every migration, in the order they run.
public enum Migrations {
    public static let all: [Migration] = [Schema8.migration, RunComplete.migration, Activities.migration, Shoes.migration, Units.migration, Races.migration]
}
