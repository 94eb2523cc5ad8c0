extension JSONValue {
    /// Nesting deeper than this is refused rather than risking the stack on `[[[[...`.
    public static let maximumNestingDepth = 64

    /// Parses one JSON text (RFC 8259, strict: no comments, no trailing commas, no NaN).
    /// Whitespace around the value is allowed; anything else after it is an error.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        let parsed: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable {
            JSONParser.parseDocument($0)
        }
        self = try (parsed ?? Array(bytes).withUnsafeBufferPointer { JSONParser.parseDocument($0) }).get()
    }

    public init(parsing text: String) throws(JSONParseError) {
        try self.init(parsing: Array(text.utf8))
    }
}

/// A recursive-descent parser over bytes; errors name the offset and what was expected.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    static func parseDocument(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONParseError> {
        var parser = JSONParser(bytes)
        do throws(JSONParseError) {
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            if parser.position < bytes.count {
                throw parser.error("unexpected \(parser.describeCurrent()) after the JSON value")
            }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of input, expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
        case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
        case UInt8(ascii: "n"): return try parseLiteral("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("expected a value, found \(describeCurrent())")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        try checkDepth(depth)
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                throw error("expected a string key in an object, found \(describeCurrent())")
            }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                throw error("expected ':' after the object key \"\(key)\", found \(describeCurrent())")
            }
            position += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(members)
            default: throw error("expected ',' or '}' after an object member, found \(describeCurrent())")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        try checkDepth(depth)
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(elements)
            default: throw error("expected ',' or ']' after an array element, found \(describeCurrent())")
            }
        }
    }

    private func checkDepth(_ depth: Int) throws(JSONParseError) {
        if depth > JSONValue.maximumNestingDepth {
            throw error("nested deeper than \(JSONValue.maximumNestingDepth) levels")
        }
    }

    private mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
        let start = position
        for expected in word.utf8 {
            guard current == expected else {
                position = start
                throw error("expected a value, found \(describeCurrent())")
            }
            position += 1
        }
        return value
    }

    /// Checks the JSON number grammar (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`),
    /// then lets the standard library convert the digits.
    private mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        if current == UInt8(ascii: "0") {
            position += 1
        } else if try skipDigits() == 0 {
            throw error("invalid number: expected a digit, found \(describeCurrent())")
        }
        if current == UInt8(ascii: ".") {
            position += 1
            if try skipDigits() == 0 {
                throw error("invalid number: expected a digit after '.', found \(describeCurrent())")
            }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            if try skipDigits() == 0 {
                throw error("invalid number: expected a digit in the exponent, found \(describeCurrent())")
            }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(offset: start, reason: "number out of range: \(text)")
        }
        return value
    }

    private mutating func skipDigits() throws(JSONParseError) -> Int {
        let start = position
        while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { position += 1 }
        return position - start
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        let start = position
        position += 1
        var utf8: [UInt8] = []
        while true {
            guard let byte = current else {
                throw JSONParseError(offset: start, reason: "unterminated string")
            }
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw JSONParseError(offset: start, reason: "string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                position += 1
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw error("control character 0x\(String(byte, radix: 16)) in a string (it must be escaped)")
            default:
                utf8.append(byte)
                position += 1
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONParseError) {
        guard let byte = current else { throw error("unterminated string") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            let escapeStart = position - 2
            var scalar = try parseHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one: together, one scalar.
                guard current == UInt8(ascii: "\\"), position + 1 < bytes.count,
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw JSONParseError(offset: escapeStart, reason: "unpaired surrogate \\u escape") }
                position += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONParseError(offset: escapeStart, reason: "unpaired surrogate \\u escape")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw JSONParseError(offset: escapeStart, reason: "unpaired surrogate \\u escape")
            }
            guard let unicode = Unicode.Scalar(scalar) else {
                throw JSONParseError(offset: escapeStart, reason: "invalid \\u escape")
            }
            utf8.append(contentsOf: String(Character(unicode)).utf8)
        default:
            position -= 1
            throw error("invalid escape in a string: \\ followed by \(Self.describe(byte))")
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Self.hexValue(byte) else {
                throw error("expected 4 hex digits after \\u, found \(describeCurrent())")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    private mutating func skipWhitespace() {
        while let byte = current,
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
                || byte == UInt8(ascii: "\r")
        {
            position += 1
        }
    }

    private func error(_ reason: String) -> JSONParseError {
        JSONParseError(offset: position, reason: reason)
    }

    private func describeCurrent() -> String {
        current.map(Self.describe) ?? "the end of input"
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? "'\(Character(UnicodeScalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }
}
