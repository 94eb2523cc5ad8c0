import Foundation
import GRDB
import PostgresNIO

/// `pacer-cloud backup FILE` and `restore FILE`. SQLite: SQLite's online backup API (through
/// GRDB: `sqlite3_backup_*` in one step inside a read transaction), so the copy is one
/// consistent snapshot even while a server writes; the file is a plain SQLite database.
/// PostgreSQL: `pg_dump -Fc` and `pg_restore`, from PATH or /usr/lib/postgresql/15/bin.
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
            // Not opened read-only: a read-only WAL database cannot be opened once its last
            // writer has gone (and removed its -shm). The backup only reads.
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let source = try DatabasePool(path: path, configuration: configuration)
            let destination = try DatabaseQueue(path: partial)
            try source.backup(to: destination)
            // The copy takes the source's WAL mode; a backup is one self-contained file.
            try await destination.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode=DELETE") }
            try destination.close()
            try source.close()
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
            var readOnly = Configuration()
            readOnly.readonly = true
            let source: DatabaseQueue
            do {
                source = try DatabaseQueue(path: file, configuration: readOnly)
                guard try await source.read({ try $0.tableExists("schema_version") }) else {
                    throw StoreError("\(file) is not a pacer-cloud backup (no schema_version table)")
                }
            } catch let error as StoreError { throw error } catch {
                throw StoreError("\(file) is not a pacer-cloud SQLite backup: \(error)")
            }
            let target = try DatabasePool(path: path)
            if !force, let table = try await target.read({ try firstTableWithRows($0) }) {
                throw StoreError("\(path) is not empty (table \(table) has rows): restore refuses to replace data without --force")
            }
            try source.backup(to: target)
            try target.close()
            try source.close()
        case .postgres:
            let store = try database.open()
            guard let postgres = store as? PostgresCloudStore else { throw StoreError("not a PostgreSQL store") }
            let (tables, filled) = try await postgres.withRunning { try await postgres.publicTables() }
            if let filled, !force {
                throw StoreError("the database is not empty (table \(filled) has rows): restore refuses to replace data without --force")
            }
            // Tables that exist (a migrated but empty database, or --force) are dropped and made again.
            let clean = tables > 0 ? ["--clean", "--if-exists"] : []
            try run(try tool("pg_restore"), ["--no-owner", "--exit-on-error", "--single-transaction"] + clean
                        + ["--dbname=\(try connectionString(database))", file], environment: environment(database))
        }
        // A backup from an older version gets this version's schema.
        let store = try database.open()
        if let postgres = store as? PostgresCloudStore {
            try await postgres.withRunning { try await store.migrate() }
        } else {
            try await store.migrate()
        }
    }

    /// The first table (of the application's) with a row, or nil.
    private static func firstTableWithRows(_ db: Database) throws -> String? {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_version' ORDER BY name")
        for table in tables where try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \"\(table)\")") == true { return table }
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
        guard case .postgres(let host, let port, let user, _, let name, _) = database else { throw StoreError("not a PostgreSQL URL") }
        let quote = { (value: String) in "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'" }
        return "host=\(quote(host)) port=\(port) user=\(quote(user)) dbname=\(quote(name))"
    }

    private static func connectionArguments(_ database: DatabaseURL) throws -> [String] {
        ["--dbname=\(try connectionString(database))"]
    }

    /// The password and TLS settings as libpq's environment variables.
    static func environment(_ database: DatabaseURL) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        guard case .postgres(_, _, _, let password, _, let tls) = database else { return environment }
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

extension PostgresCloudStore {
    /// How many tables the public schema has, and the first with a row (nil: all empty).
    func publicTables() async throws -> (count: Int, filled: String?) {
        var names: [String] = []
        for try await name in try await client.query(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename != 'schema_version' ORDER BY tablename",
            logger: logger).decode(String.self) {
            names.append(name)
        }
        for name in names {
            let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            for try await filled in try await client.query(PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \(quoted))"), logger: logger)
                .decode(Bool.self) where filled {
                return (names.count, name)
            }
        }
        return (names.count, nil)
    }
}
