/// One D-Bus value, as sd-bus reads and writes it. Strings are copied out of their message at
/// once (sd-bus hands out pointers that live only as long as the message).
public indirect enum BusValue: Sendable, Equatable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// `ay`, kept apart from `array` because characteristic values arrive as byte arrays several
    /// times a second and are read in one piece.
    case bytes([UInt8])
    /// An array of `element`-typed values; the element signature is needed for empty arrays.
    case array(element: String, [BusValue])
    case dictEntry(BusValue, BusValue)
    case structure([BusValue])
    case variant(BusValue)

    /// The value's D-Bus type signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }
}

extension BusValue {
    /// An `a{sv}` dictionary, the shape of D-Bus property maps and option arguments.
    public static func dictionary(_ entries: [String: BusValue]) -> BusValue {
        .array(
            element: "{sv}",
            entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) }
        )
    }

    /// An `as` array.
    public static func strings(_ values: [String]) -> BusValue {
        .array(element: "s", values.map(BusValue.string))
    }

    /// The value inside any number of variants.
    public var unwrapped: BusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var stringValue: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type, widened.
    public var integerValue: Int? {
        switch unwrapped {
        case .byte(let v): Int(v)
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint64(let v): Int(exactly: v)
        default: nil
        }
    }

    public var bytesValue: [UInt8]? {
        switch unwrapped {
        case .bytes(let bytes): return bytes
        case .array("y", let values):
            var bytes: [UInt8] = []
            for case .byte(let byte) in values { bytes.append(byte) }
            return bytes.count == values.count ? bytes : nil
        default: return nil
        }
    }

    public var stringArrayValue: [String]? {
        guard case .array(_, let values) = unwrapped else { return nil }
        let strings = values.compactMap(\.stringValue)
        return strings.count == values.count ? strings : nil
    }

    /// A dictionary with string-like keys (`a{sv}`, `a{oa{sa{sv}}}`…), variants unwrapped.
    public var dictionaryValue: [String: BusValue]? {
        guard case .array(_, let entries) = unwrapped else { return nil }
        var result: [String: BusValue] = [:]
        for entry in entries {
            guard case .dictEntry(let key, let value) = entry, let name = key.stringValue else { return nil }
            result[name] = value.unwrapped
        }
        return result
    }
}
