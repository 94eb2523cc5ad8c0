import PacerCore

/// A small JSON writer with fixed number formats, so the same input always gives byte-identical
/// output (no locale, no shortest-round-trip surprises) and no Foundation is needed.
public struct JSONWriter {
    public private(set) var output = ""
    private var needsComma: [Bool] = [false]

    public init(capacity: Int = 1024) {
        output.reserveCapacity(capacity)
    }

    public mutating func beginObject(_ key: String? = nil) { open(key, "{") }
    public mutating func endObject() { close("}") }
    public mutating func beginArray(_ key: String? = nil) { open(key, "[") }
    public mutating func endArray() { close("]") }

    public mutating func string(_ key: String?, _ value: String?) {
        prefix(key)
        if let value { appendQuoted(value) } else { output += "null" }
    }

    public mutating func number(_ key: String?, _ value: Double?, digits: Int) {
        prefix(key)
        output += value.map { Self.fixed($0, digits: digits) } ?? "null"
    }

    public mutating func integer(_ key: String?, _ value: Int?) {
        prefix(key)
        output += value.map(String.init) ?? "null"
    }

    public mutating func bool(_ key: String?, _ value: Bool) {
        prefix(key)
        output += value ? "true" : "false"
    }

    public mutating func time(_ key: String?, _ value: Timestamp?) {
        string(key, value?.iso8601)
    }

    private mutating func open(_ key: String?, _ bracket: String) {
        prefix(key)
        output += bracket
        needsComma.append(false)
    }

    private mutating func close(_ bracket: String) {
        needsComma.removeLast()
        output += bracket
    }

    private mutating func prefix(_ key: String?) {
        if needsComma[needsComma.count - 1] { output += "," }
        needsComma[needsComma.count - 1] = true
        if let key {
            appendQuoted(key)
            output += ":"
        }
    }

    private mutating func appendQuoted(_ text: String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    /// `value` rounded half away from zero to `digits` decimals; non-finite values become null.
    public static func fixed(_ value: Double, digits: Int) -> String {
        FixedDecimal.format(value, decimals: digits) ?? "null"
    }
}
