import CSQLite
import Glibc

/// How a connection is opened.
public struct Configuration {
    public enum BusyMode {
        case immediateError
        /// Wait up to this many seconds for another connection's lock.
        case timeout(Double)
    }

    public var readonly = false
    public var busyMode = BusyMode.immediateError
    /// Names the connection in errors.
    public var label: String?
    /// `FOREIGN KEY ... ON DELETE CASCADE` is honoured (SQLite's default is off).
    public var foreignKeysEnabled = true
    var prepare: ((Database) throws -> Void)?

    public init() {}

    /// Runs on the connection once it is open, before anything else.
    public mutating func prepareDatabase(_ body: @escaping (Database) throws -> Void) {
        prepare = body
    }
}

/// One SQLite connection, used by one thread at a time: every `read` and `write` holds its lock.
public final class DatabaseQueue: @unchecked Sendable {
    // The lock guards `database`; nothing reaches it outside `locked`.
    private var mutex = pthread_mutex_t()
    private let database: Database

    public init(path: String, configuration: Configuration = Configuration()) throws {
        var raw: OpaquePointer?
        let flags = (configuration.readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &raw, flags, nil)
        guard let raw else { throw DatabaseError(resultCode: .init(rawValue: code), message: "out of memory opening \(path)") }
        let database = Database(handle: raw)  // closes the connection if opening fails below
        guard code == SQLITE_OK else { throw database.error(code, sql: nil) }
        sqlite3_extended_result_codes(raw, 1)
        if case .timeout(let seconds) = configuration.busyMode { sqlite3_busy_timeout(raw, Int32(seconds * 1000)) }
        if configuration.foreignKeysEnabled { try database.execute(sql: "PRAGMA foreign_keys = ON") }
        try configuration.prepare?(database)
        // Opening reads nothing: a file that is not a database would only fail at its first
        // query. Read the schema now, so that it fails here, as opening it.
        try database.execute(sql: "SELECT * FROM sqlite_master LIMIT 1")
        self.database = database
        pthread_mutex_init(&mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(&mutex)
    }

    /// Reads in one transaction (one snapshot of the file); writing in it is an error.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try locked { db in
            try db.execute(sql: "PRAGMA query_only = 1")
            defer { try? db.execute(sql: "PRAGMA query_only = 0") }
            return try Self.inTransaction(db, begin: "BEGIN DEFERRED", body)
        }
    }

    /// Writes in one transaction, committed when `body` returns and rolled back when it throws.
    /// IMMEDIATE: the write lock is taken (or waited for) at the start, so a transaction that
    /// reads first never fails to upgrade.
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try locked { db in try Self.inTransaction(db, begin: "BEGIN IMMEDIATE", body) }
    }

    /// `body` outside any transaction: each statement commits by itself.
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try locked(body)
    }

    private func locked<T>(_ body: (Database) throws -> T) throws -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body(database)
    }

    static func inTransaction<T>(_ db: Database, begin: String, _ body: (Database) throws -> T) throws -> T {
        try db.execute(sql: begin)
        let result: T
        do {
            result = try body(db)
        } catch {
            // A failed statement may already have rolled the transaction back.
            if sqlite3_get_autocommit(db.handle) == 0 { try? db.execute(sql: "ROLLBACK") }
            throw error
        }
        do {
            try db.execute(sql: "COMMIT")
        } catch {
            if sqlite3_get_autocommit(db.handle) == 0 { try? db.execute(sql: "ROLLBACK") }
            throw error
        }
        return result
    }
}

func sqlite3ResetQuietly(_ statement: Statement) {
    sqlite3_reset(statement.handle)
}
