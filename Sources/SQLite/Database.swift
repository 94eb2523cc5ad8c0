import CSQLite
import FoundationEssentials

/// An SQLite error: its result code (extended codes are on), SQLite's message, and the SQL.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    public struct ResultCode: Sendable, Equatable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
    }

    public let resultCode: ResultCode
    public let message: String?
    public let sql: String?

    public init(resultCode: ResultCode = .init(rawValue: SQLITE_ERROR), message: String? = nil, sql: String? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(resultCode.rawValue)"
        if let message { text += ": \(message)" }
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}

/// One connection, used by one thread at a time (`DatabaseQueue` sees to that).
public final class Database {
    let handle: OpaquePointer
    private var cache: [String: Statement] = [:]

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        cache.removeAll()  // statements are finalized before the connection closes
        sqlite3_close_v2(handle)
    }

    /// Runs `sql`, which may hold several statements; `arguments` fill their placeholders in order.
    public func execute(sql: String, arguments: StatementArguments = []) throws {
        var remaining = arguments.values[...]
        try sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var raw: OpaquePointer?
                let code = sqlite3_prepare_v2(handle, current, -1, &raw, &next)
                guard code == SQLITE_OK else { throw error(code, sql: sql) }
                guard let raw else { continue }  // whitespace or a comment
                let statement = Statement(handle: raw, database: self, sql: sql)
                let count = Int(sqlite3_bind_parameter_count(raw))
                try statement.execute(arguments: StatementArguments(values: Array(remaining.prefix(count))))
                remaining = remaining.dropFirst(count)
            }
        }
    }

    /// A prepared statement kept for the connection's life: SQL that runs every few seconds is
    /// compiled once.
    public func cachedStatement(sql: String) throws -> Statement {
        if let statement = cache[sql] { return statement }
        let statement = try makeStatement(sql: sql)
        cache[sql] = statement
        return statement
    }

    public func makeStatement(sql: String) throws -> Statement {
        var raw: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &raw, nil)
        guard code == SQLITE_OK, let raw else { throw error(code, sql: sql) }
        return Statement(handle: raw, database: self, sql: sql)
    }

    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    public var changesCount: Int { Int(sqlite3_changes(handle)) }

    func error(_ code: Int32, sql: String?) -> DatabaseError {
        DatabaseError(resultCode: .init(rawValue: code), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }
}

/// A prepared statement; bound, stepped and reset for each use.
public final class Statement {
    let handle: OpaquePointer
    unowned let database: Database
    let sql: String

    init(handle: OpaquePointer, database: Database, sql: String) {
        self.handle = handle
        self.database = database
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    public func execute(arguments: StatementArguments = []) throws {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    func bind(_ arguments: StatementArguments) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.values.count == expected else {
            throw DatabaseError(resultCode: .init(rawValue: SQLITE_MISUSE),
                                message: "wrong number of statement arguments: \(arguments.values.count), expected \(expected)", sql: sql)
        }
        for (offset, value) in arguments.values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let v): code = sqlite3_bind_int64(handle, index, v)
            case .real(let v): code = sqlite3_bind_double(handle, index, v)
            case .text(let v): code = sqlite3_bind_text(handle, index, v, -1, pacer_sqlite_transient())
            case .blob(let v):
                code = v.withUnsafeBytes { bytes in
                    // A zero-length blob is an empty blob, not NULL: bind a valid pointer.
                    sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), pacer_sqlite_transient())
                }
            }
            guard code == SQLITE_OK else { throw database.error(code, sql: sql) }
        }
    }

    /// One step: true while it yields a row.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw database.error(code, sql: sql)
        }
    }

    lazy var columnNames: [String] = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }

    func currentRow() -> Row {
        let values = (0..<Int32(columnNames.count)).map { column -> DatabaseValue in
            switch sqlite3_column_type(handle, column) {
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
            case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
            case SQLITE_TEXT:
                let count = Int(sqlite3_column_bytes(handle, column))
                guard let text = sqlite3_column_text(handle, column) else { return .text("") }
                return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(handle, column))
                guard let bytes = sqlite3_column_blob(handle, column) else { return .blob(Data()) }
                return .blob(Data(bytes: bytes, count: count))
            default: return .null
            }
        }
        return Row(columns: columnNames, values: values)
    }
}
