import CloudModel
import Foundation
import Logging
import NIOPosix
import SQLiteKit
import SQLKit
import Threads

/// `pacer-cloud backup FILE` and `restore FILE`. SQLite: `VACUUM INTO`, so the copy is one
/// consistent snapshot even while a server writes, and a plain SQLite file; restoring copies it
/// into place (the server stopped). PostgreSQL: `pg_dump -Fc` and `pg_restore`, from PATH or
/// /usr/lib/postgresql/15/bin.
public enum CloudBackup {
    /// Writes a backup of `database` to `file`, which must not exist; returns what was written.
    public static func backup(_ database: DatabaseURL, to file: String) async throws -> String {
        guard !FileManager.default.fileExists(atPath: file) else {
            throw StoreError("\(file) exists already: give a new file (a backup never overwrites one)")
        }
        // Written beside the target and renamed into place: an interrupted backup leaves no
        // file that looks complete.
        let partial = file + ".partial-\(getpid())"
        defer { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: partial + suffix) } }
        switch database {
        case .sqlite(let path):
            guard FileManager.default.fileExists(atPath: path) else { throw StoreError("no SQLite database at \(path)") }
            let source = try await StoreDatabase.sqlite(path: path, readers: 1)
            do {
                try await source.read { try await $0.raw("VACUUM INTO \(bind: partial)").run() }
            } catch {
                await source.close()
                throw StoreError("cannot back up \(path): \(error)")
            }
            await source.close()
            // A backup is one self-contained file, whatever mode the source was in.
            try await withSQLiteFile(partial) { try await $0.raw("PRAGMA journal_mode = DELETE").run() }
        case .postgres:
            try run(try tool("pg_dump"), ["--format=custom", "--no-owner", "--file=\(partial)"] + connectionArguments(database),
                    environment: environment(database))
        }
        try move(partial, to: file)
        let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        return "\(file): \(size) bytes"
    }

    /// Replaces what `database` holds with the backup in `file`. Refused when the database holds
    /// any row, unless `force`. The server must be stopped first (README: Operations).
    public static func restore(_ database: DatabaseURL, from file: String, force: Bool) async throws {
        guard FileManager.default.fileExists(atPath: file) else { throw StoreError("no backup at \(file)") }
        switch database {
        case .sqlite(let path):
            let isBackup: Bool
            do {
                isBackup = try await withSQLiteFile(file) { db in
                    try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('schema_version', 'pacer_migration')").first() != nil
                }
            } catch {
                throw StoreError("\(file) is not a pacer-cloud SQLite backup: \(error)")
            }
            guard isBackup else { throw StoreError("\(file) is not a pacer-cloud backup (no schema_version table)") }
            if FileManager.default.fileExists(atPath: path), !force,
               let table = try await withSQLiteFile(path, { try await firstTableWithRows($0) }) {
                throw StoreError("\(path) is not empty (table \(table) has rows): restore refuses to replace data without --force")
            }
            // Copied beside the database and renamed over it; the old file's WAL goes with it.
            let partial = path + ".restoring-\(getpid())"
            defer { try? FileManager.default.removeItem(atPath: partial) }
            try? FileManager.default.removeItem(atPath: partial)
            try FileManager.default.copyItem(atPath: file, toPath: partial)
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            guard rename(partial, path) == 0 else { throw StoreError("cannot write \(path): \(String(cString: strerror(errno)))") }
        case .postgres:
            let target = try await database.openDatabase()
            let (tables, filled) = try await target.withRunning { try await publicTables(target) }
            if let filled, !force {
                throw StoreError("the database is not empty (table \(filled) has rows): restore refuses to replace data without --force")
            }
            // Tables that exist (a migrated but empty database, or --force) are dropped and made again.
            let clean = tables > 0 ? ["--clean", "--if-exists"] : []
            try run(try tool("pg_restore"), ["--no-owner", "--exit-on-error", "--single-transaction"] + clean
                        + ["--dbname=\(try connectionString(database))", file], environment: environment(database))
        }
        // A backup from an older version gets this version's schema.
        let restored = try await database.openDatabase()
        _ = try await restored.withRunning { try await Migrator.migrate(restored, nowMs: WallClock.milliseconds()) }
    }

    /// One plain connection to an SQLite file (no WAL set up: a backup stays as it is).
    private static func withSQLiteFile<T: Sendable>(_ path: String, _ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: Logger(label: "pacer-cloud.backup"))
        do {
            let value = try await body(connection.sql())
            try await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The first table (of the application's) with a row, or nil.
    private static func firstTableWithRows(_ db: any SQLDatabase) async throws -> String? {
        let tables = try await db.raw("""
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
            AND name NOT IN ('schema_version', 'pacer_migration') ORDER BY name
            """).all().map { try $0.decode(column: "name", as: String.self) }
        for table in tables where try await db.raw("SELECT 1 AS filled FROM \(ident: table) LIMIT 1").first() != nil { return table }
        return nil
    }

    private static func move(_ from: String, to file: String) throws {
        // link(2) fails if the target appeared meanwhile, where rename(2) would replace it.
        guard link(from, file) == 0 else {
            throw StoreError("cannot write \(file): \(String(cString: strerror(errno)))")
        }
    }

    // MARK: PostgreSQL tools

    /// Where `name` is: PATH, then Debian's PostgreSQL 15 directory.
    public static func tool(_ name: String, path: String? = ProcessInfo.processInfo.environment["PATH"]) throws -> String {
        let directories = (path ?? "").split(separator: ":").map(String.init) + ["/usr/lib/postgresql/15/bin"]
        for directory in directories where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        throw StoreError("\(name) is not installed (not on PATH nor in /usr/lib/postgresql/15/bin): apt-get install postgresql-client-15")
    }

    /// libpq's connection string for `database`, without the password (that goes in PGPASSWORD: arguments show in ps).
    static func connectionString(_ database: DatabaseURL) throws -> String {
        guard case .postgres(let host, let port, let user, _, let name, _, _) = database else { throw StoreError("not a PostgreSQL URL") }
        let quote = { (value: String) in "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'" }
        return "host=\(quote(host)) port=\(port) user=\(quote(user)) dbname=\(quote(name))"
    }

    private static func connectionArguments(_ database: DatabaseURL) throws -> [String] {
        ["--dbname=\(try connectionString(database))"]
    }

    /// The password and TLS settings as libpq's environment variables.
    static func environment(_ database: DatabaseURL) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        guard case .postgres(_, _, _, let password, _, let tls, _) = database else { return environment }
        if let password { environment["PGPASSWORD"] = password }
        switch tls {
        case .disable: environment["PGSSLMODE"] = "disable"
        case .prefer: environment["PGSSLMODE"] = "prefer"
        case .require: environment["PGSSLMODE"] = "require"
        case .verifyCA(let root):
            environment["PGSSLMODE"] = "verify-ca"
            if let root { environment["PGSSLROOTCERT"] = root }
        case .verifyFull(let root):
            environment["PGSSLMODE"] = "verify-full"
            if let root { environment["PGSSLROOTCERT"] = root }
        }
        return environment
    }

    /// Runs `executable`; its standard error becomes the error's text when it fails.
    private static func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let name = (executable as NSString).lastPathComponent
            throw StoreError("\(name) failed (exit \(process.terminationStatus)): \(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}

extension CloudBackup {
    /// How many tables the public schema has, and the first with a row (nil: all empty).
    static func publicTables(_ database: StoreDatabase) async throws -> (count: Int, filled: String?) {
        try await database.read { db in
            let names = try await db.raw("""
                SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('schema_version', 'pacer_migration')
                ORDER BY tablename
                """).all().map { try $0.decode(column: "tablename", as: String.self) }
            for name in names where try await db.raw("SELECT 1 AS filled FROM \(ident: name) LIMIT 1").first() != nil {
                return (names.count, name)
            }
            return (names.count, nil)
        }
    }
}
