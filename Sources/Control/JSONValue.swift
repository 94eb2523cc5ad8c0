/// Any JSON value. Control requests carry free-form arguments and replies free-form results, so
/// later commands need no protocol change: the daemon reads what it needs through the typed
/// accessors and builds results from literals (`["run": 12, "state": "recording"]`).
///
/// Numbers are `Double`: integers up to 2^53 are exact, which covers ids, counts and offsets, and
/// integral values are written without a fraction (`12`, not `12.0`).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue {
    public init(_ value: Bool) { self = .bool(value) }
    public init(_ value: Int) { self = .number(Double(value)) }
    public init(_ value: Double) { self = .number(value) }
    public init(_ value: String) { self = .string(value) }
    public init(_ value: [JSONValue]) { self = .array(value) }
    public init(_ value: [String: JSONValue]) { self = .object(value) }

    public var isNull: Bool { self == .null }

    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    public var doubleValue: Double? {
        if case .number(let value) = self { value } else { nil }
    }

    /// The number as an `Int` when it is integral and in range (so `2.5` and `1e300` give nil).
    public var intValue: Int? {
        guard case .number(let value) = self, value.rounded(.towardZero) == value,
            let exact = Int(exactly: value)
        else { return nil }
        return exact
    }

    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }

    /// The member `key` of an object; nil when absent or when this is not an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The element at `index` of an array; nil when out of range or when this is not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// "a string", "an object"...: for error messages that say what was found instead.
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// A repeated key keeps its last value, as in parsing.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { serialized() }
}
