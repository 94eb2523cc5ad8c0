extension JSONValue {
    /// Compact JSON text on one line (control characters in strings are escaped, so a value never
    /// contains a newline). Object keys are sorted, so the same value always gives the same text.
    public func serialized() -> String {
        var bytes: [UInt8] = []
        serialize(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    func serialize(into output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value): Self.serialize(number: value, into: &output)
        case .string(let value): Self.serialize(string: value, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.serialize(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.serialize(string: key, into: &output)
                output.append(UInt8(ascii: ":"))
                members[key, default: .null].serialize(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Integral values below 2^53 as integers; others in Swift's shortest round-trip form
    /// (`5.21`, `1e-05`, `1e+300`), which is valid JSON. JSON has no NaN or infinity: null.
    static func serialize(number value: Double, into output: inout [UInt8]) {
        guard value.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if value.rounded(.towardZero) == value, abs(value) < 9_007_199_254_740_992 {
            output.append(contentsOf: String(Int64(value)).utf8)
        } else {
            output.append(contentsOf: value.description.utf8)
        }
    }

    static func serialize(string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): output.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): output.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): output.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(hexDigit(byte >> 4))
                output.append(hexDigit(byte & 0xF))
            default:
                // Bytes of multi-byte UTF-8 sequences are all >= 0x80: copied as they are.
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
