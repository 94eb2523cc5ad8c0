import FoundationEssentials

/// One SQLite value, copied out of a statement.
public enum DatabaseValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// A Swift value SQLite stores: how it is bound, and how it is read back (nil when the stored
/// value is NULL or cannot be this type without loss).
public protocol DatabaseValueConvertible {
    var databaseValue: DatabaseValue { get }
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?
}

/// Whole numbers: stored as SQLite's 64-bit integer, read back when the value fits exactly.
extension DatabaseValueConvertible where Self: FixedWidthInteger {
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        switch value {
        case .integer(let v): return Self(exactly: v)
        case .real(let v): return Self(exactly: v)
        default: return nil
        }
    }
}

extension Int64: DatabaseValueConvertible {}
extension Int: DatabaseValueConvertible {}
extension Int32: DatabaseValueConvertible {}
extension UInt32: DatabaseValueConvertible {}

extension Bool: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case .integer(let v): return v != 0
        case .real(let v): return v != 0
        default: return nil
        }
    }
}

extension Double: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .real(let v): return v
        default: return nil
        }
    }
}

extension String: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        switch value {
        case .text(let v): return v
        case .blob(let v): return String(bytes: v, encoding: .utf8)
        default: return nil
        }
    }
}

extension Data: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .blob(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        switch value {
        case .blob(let v): return v
        case .text(let v): return Data(v.utf8)
        default: return nil
        }
    }
}

/// The values bound to a statement's `?` placeholders, in order: `[runID, name, nil]`.
public struct StatementArguments: ExpressibleByArrayLiteral, Sendable {
    var values: [DatabaseValue]

    public init(_ values: [(any DatabaseValueConvertible)?]) {
        self.values = values.map { $0?.databaseValue ?? .null }
    }

    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }

    init(values: [DatabaseValue]) {
        self.values = values
    }
}
