/// One result row, its values copied out of the statement.
public struct Row: Sendable {
    let columns: [String]
    let values: [DatabaseValue]

    /// The value of column `name`, or nil when it is NULL. A column that is not in the row, or a
    /// value that is not a `V`, is a programming error.
    public subscript<V: DatabaseValueConvertible>(_ name: String) -> V? {
        let value = values[index(of: name)]
        if value == .null { return nil }
        guard let converted = V.fromDatabaseValue(value) else {
            preconditionFailure("column \(name): \(value) is not a \(V.self)")
        }
        return converted
    }

    /// The value of column `name`, which must not be NULL.
    public subscript<V: DatabaseValueConvertible>(_ name: String) -> V {
        guard let value: V = self[name] else { preconditionFailure("column \(name) is NULL, expected a \(V.self)") }
        return value
    }

    /// Columns are found as SQLite names them: case-insensitively.
    private func index(of name: String) -> Int {
        if let exact = columns.firstIndex(of: name) { return exact }
        let lowered = name.lowercased()
        guard let index = columns.firstIndex(where: { $0.lowercased() == lowered }) else {
            preconditionFailure("no column \(name) in \(columns)")
        }
        return index
    }
}

/// Rows read one at a time, for results too large to hold at once.
public final class RowCursor {
    private let statement: Statement

    init(statement: Statement) {
        self.statement = statement
    }

    public func next() throws -> Row? {
        try statement.step() ? statement.currentRow() : nil
    }
}

extension Row {
    public static func fetchCursor(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> RowCursor {
        let statement = try db.makeStatement(sql: sql)
        try statement.bind(arguments)
        return RowCursor(statement: statement)
    }

    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Row] {
        try fetchAll(db.makeStatement(sql: sql), arguments: arguments)
    }

    public static func fetchAll(_ statement: Statement, arguments: StatementArguments = []) throws -> [Row] {
        try statement.bind(arguments)
        defer { sqlite3ResetQuietly(statement) }
        var rows: [Row] = []
        while try statement.step() { rows.append(statement.currentRow()) }
        return rows
    }

    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Row? {
        try fetchOne(db.makeStatement(sql: sql), arguments: arguments)
    }

    public static func fetchOne(_ statement: Statement, arguments: StatementArguments = []) throws -> Row? {
        try statement.bind(arguments)
        defer { sqlite3ResetQuietly(statement) }
        return try statement.step() ? statement.currentRow() : nil
    }
}

extension DatabaseValueConvertible {
    /// The first column of the first row; nil when there is no row or the value is NULL.
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        try fetchOne(db.makeStatement(sql: sql), arguments: arguments)
    }

    public static func fetchOne(_ statement: Statement, arguments: StatementArguments = []) throws -> Self? {
        guard let row = try Row.fetchOne(statement, arguments: arguments), let value = row.values.first else { return nil }
        return try convert(value, statement)
    }

    /// The first column of every row; a NULL is an error.
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        let statement = try db.makeStatement(sql: sql)
        return try Row.fetchAll(statement, arguments: arguments).compactMap { row in
            guard let value = row.values.first else { return nil }
            guard let converted = try convert(value, statement) else {
                throw DatabaseError(message: "a NULL where a \(Self.self) was expected", sql: statement.sql)
            }
            return converted
        }
    }

    private static func convert(_ value: DatabaseValue, _ statement: Statement) throws -> Self? {
        if value == .null { return nil }
        guard let converted = fromDatabaseValue(value) else {
            throw DatabaseError(message: "\(value) is not a \(Self.self)", sql: statement.sql)
        }
        return converted
    }
}
