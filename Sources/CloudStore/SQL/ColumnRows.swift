import PostgresNIO
import SQLiteKit
import SQLiteNIO
import SQLKit

/// One row of `StoreDatabase.readColumns`, its values read by column name.
public struct ColumnRow {
    fileprivate enum Values {
        case postgres([PostgresCell])
        case sqlite(SQLiteRow)
    }

    fileprivate let values: Values
    /// Column name → position, found once per query.
    fileprivate let positions: [String: Int]

    private func missing(_ column: String) -> StoreError { StoreError("no column \(column) in the result") }

    /// nil for NULL.
    private func postgresCell(_ column: String) throws -> PostgresCell? {
        guard case .postgres(let cells) = values else { return nil }
        guard let position = positions[column] else { throw missing(column) }
        return cells[position].bytes == nil ? nil : cells[position]
    }

    private func sqliteValue(_ column: String) throws -> SQLiteData {
        guard case .sqlite(let row) = values else { return .null }
        guard let value = row.column(column) else { throw missing(column) }
        return value
    }

    private func wrongType(_ column: String) -> StoreError { StoreError("column \(column) holds another type") }

    public func string(_ column: String) throws -> String {
        guard let value = try optionalString(column) else { throw StoreError("column \(column) is NULL") }
        return value
    }

    public func optionalString(_ column: String) throws -> String? {
        switch values {
        case .postgres: return try postgresCell(column)?.decode(String.self)
        case .sqlite:
            switch try sqliteValue(column) {
            case .null: return nil
            case .text(let text): return text
            default: throw wrongType(column)
            }
        }
    }

    public func int64(_ column: String) throws -> Int64 {
        guard let value = try optionalInt64(column) else { throw StoreError("column \(column) is NULL") }
        return value
    }

    public func optionalInt64(_ column: String) throws -> Int64? {
        switch values {
        case .postgres: return try postgresCell(column)?.decode(Int64.self)
        case .sqlite:
            switch try sqliteValue(column) {
            case .null: return nil
            case .integer(let value): return Int64(value)
            default: throw wrongType(column)
            }
        }
    }

    public func optionalInt(_ column: String) throws -> Int? {
        switch values {
        case .postgres: return try postgresCell(column)?.decode(Int.self)
        case .sqlite: return try optionalInt64(column).map { Int(truncatingIfNeeded: $0) }
        }
    }

    public func double(_ column: String) throws -> Double {
        guard let value = try optionalDouble(column) else { throw StoreError("column \(column) is NULL") }
        return value
    }

    public func optionalDouble(_ column: String) throws -> Double? {
        switch values {
        case .postgres: return try postgresCell(column)?.decode(Double.self)
        case .sqlite:
            switch try sqliteValue(column) {
            case .null: return nil
            case .float(let value): return value
            case .integer(let value): return Double(value)
            default: throw wrongType(column)
            }
        }
    }
}

extension StoreDatabase {
    /// Rows read column by column past SQLKit's row decoding, for the reads of a row per run (a
    /// thousand on the statistics page): PostgresKit's rows build a lookup table per row and a
    /// coding path per value, which cost more than the query there. The query is SQLKit's, bound
    /// in the dialect's placeholders as everywhere else; values bound are strings, integers,
    /// doubles and booleans.
    public func readColumns<Row: Sendable>(_ query: SQLQueryString, _ make: @escaping @Sendable (ColumnRow) throws -> Row)
        async throws -> [Row] {
        try await readConnection { connection in
            switch connection {
            case .sqlite(let sqlite):
                let (sql, binds) = Self.serialize(query, on: sqlite.sql(queryLogLevel: nil))
                let encoder = SQLiteDataEncoder()
                let rows = try await sqlite.query(sql, try binds.map { try encoder.encode($0) })
                return try rows.map { try make(ColumnRow(values: .sqlite($0), positions: [:])) }
            case .postgres(let postgres):
                let (sql, binds) = Self.serialize(query, on: postgres.sql(queryLogLevel: nil))
                var bindings = PostgresBindings(capacity: binds.count)
                for bind in binds { try Self.append(bind, to: &bindings) }
                var positions: [String: Int]?
                var made: [Row] = []
                for try await row in try await postgres.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: self.logger) {
                    let cells = Array(row)
                    if positions == nil {
                        positions = Dictionary(cells.enumerated().map { ($1.columnName, $0) }, uniquingKeysWith: { first, _ in first })
                    }
                    made.append(try make(ColumnRow(values: .postgres(cells), positions: positions ?? [:])))
                }
                return made
            }
        }
    }

    private static func serialize(_ query: SQLQueryString, on database: any SQLDatabase) -> (String, [any Encodable & Sendable]) {
        var serializer = SQLSerializer(database: database)
        query.serialize(to: &serializer)
        return (serializer.sql, serializer.binds)
    }

    private static func append(_ value: any Encodable & Sendable, to bindings: inout PostgresBindings) throws {
        switch value {
        case let value as String: bindings.append(value)
        case let value as Int: bindings.append(value)
        case let value as Int64: bindings.append(value)
        case let value as Double: bindings.append(value)
        case let value as Bool: bindings.append(value)
        default: throw StoreError("readColumns cannot bind a \(type(of: value))")
        }
    }
}
