/// The part of TOML Pacer's config uses: `[section]` headers, `key = value` with strings, numbers,
/// booleans and arrays of those, and `#` comments; and, only where a caller names them,
/// `[[name]]` arrays of tables (a workout's `[[step]]`s). Anything else is an error with its line,
/// never a guess: a config that half-parses is worse than one that is rejected.
enum TOMLValue: Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([TOMLValue])

    var typeName: String {
        switch self {
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .array: "an array"
        }
    }
}

struct TOMLEntry: Sendable, Equatable {
    var key: String  // dotted: section.key (for a table array's entry, name.key)
    var value: TOMLValue
    var line: Int
    /// For an entry in a `[[name]]` table: which one, counting from 1 in file order.
    var tableIndex: Int? = nil

    /// The key as errors show it: `step[3].pace` names the third `[[step]]`, which plain dotted
    /// keys cannot tell apart.
    var displayKey: String { Self.displayKey(key, tableIndex: tableIndex) }

    static func displayKey(_ key: String, tableIndex: Int?) -> String {
        guard let tableIndex, let dot = key.firstIndex(of: ".") else { return key }
        return "\(key[..<dot])[\(tableIndex)]\(key[dot...])"
    }
}

/// One `[[name]]` header: kept even when no key follows it, so that an empty table is still seen.
struct TOMLTableHeader: Sendable, Equatable {
    var name: String
    /// Counting from 1 in file order, among the tables of this name.
    var index: Int
    var line: Int
}

struct TOMLDocument: Sendable, Equatable {
    var entries: [TOMLEntry]
    var tables: [TOMLTableHeader]
}

enum TOMLSubset {
    /// A file without arrays of tables (pacer.toml): `[[` is a malformed header there.
    static func parse(_ text: String, file: String) throws(ConfigError) -> [TOMLEntry] {
        try parseDocument(text, file: file, tableArrays: []).entries
    }

    /// `tableArrays` names the `[[name]]` tables the caller understands; any other is an error.
    static func parseDocument(_ text: String, file: String, tableArrays: Set<String>) throws(ConfigError) -> TOMLDocument {
        var entries: [TOMLEntry] = []
        var tables: [TOMLTableHeader] = []
        var section = ""
        var tableIndex: Int?
        var plainSections: Set<String> = []
        var seen: Set<String> = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = stripComment(rawLine).trimmed
            if line.isEmpty { continue }
            if line.hasPrefix("[[") && !tableArrays.isEmpty {
                guard line.hasSuffix("]]"), line.count > 4 else {
                    throw ConfigError(file: file, line: lineNumber, key: nil, problem: "malformed table header \(quoted(line))")
                }
                let name = String(line.dropFirst(2).dropLast(2)).trimmed
                guard tableArrays.contains(name) else {
                    let known = tableArrays.sorted().map { "[[\($0)]]" }.joined(separator: ", ")
                    throw ConfigError(file: file, line: lineNumber, key: nil, problem: "unknown table \(quoted("[[\(name)]]")) (expected \(known))")
                }
                // TOML forbids a name being both; here it would also make keys ambiguous.
                guard !plainSections.contains(name) else {
                    throw ConfigError(file: file, line: lineNumber, key: nil, problem: "\(quoted(name)) is already a [section]; it cannot also be a [[table]]")
                }
                let index = tables.filter { $0.name == name }.count + 1
                tables.append(TOMLTableHeader(name: name, index: index, line: lineNumber))
                section = name
                tableIndex = index
                continue
            }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), !line.hasPrefix("[["), line.count > 2 else {
                    throw ConfigError(file: file, line: lineNumber, key: nil, problem: "malformed section header \(quoted(line))")
                }
                let name = String(line.dropFirst().dropLast()).trimmed
                guard isBareKey(name) else {
                    throw ConfigError(file: file, line: lineNumber, key: nil, problem: "invalid section name \(quoted(name))")
                }
                guard !tables.contains(where: { $0.name == name }) else {
                    throw ConfigError(file: file, line: lineNumber, key: nil, problem: "\(quoted(name)) is already a [[table]]; it cannot also be a [section]")
                }
                plainSections.insert(name)
                section = name
                tableIndex = nil
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigError(file: file, line: lineNumber, key: nil, problem: "expected `key = value`, got \(quoted(line))")
            }
            let key = String(line[..<equals]).trimmed
            guard isBareKey(key) else {
                throw ConfigError(file: file, line: lineNumber, key: nil, problem: "invalid key \(quoted(key))")
            }
            let fullKey = section.isEmpty ? key : "\(section).\(key)"
            let displayKey = TOMLEntry.displayKey(fullKey, tableIndex: tableIndex)
            let valueText = String(line[line.index(after: equals)...]).trimmed
            guard !valueText.isEmpty else {
                throw ConfigError(file: file, line: lineNumber, key: displayKey, problem: "missing value")
            }
            var parser = ValueParser(text: Array(valueText.unicodeScalars))
            let value: TOMLValue
            do {
                value = try parser.parseValue()
                try parser.expectEnd()
            } catch {
                throw ConfigError(file: file, line: lineNumber, key: displayKey, problem: "\(error.message) in \(quoted(valueText))")
            }
            guard seen.insert(displayKey).inserted else {
                throw ConfigError(file: file, line: lineNumber, key: displayKey, problem: "set twice")
            }
            entries.append(TOMLEntry(key: fullKey, value: value, line: lineNumber, tableIndex: tableIndex))
        }
        return TOMLDocument(entries: entries, tables: tables)
    }

    private static func stripComment(_ line: Substring) -> Substring {
        var inString = false
        var escaped = false
        for index in line.indices {
            let c = line[index]
            if inString {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
            } else if c == "\"" {
                inString = true
            } else if c == "#" {
                return line[..<index]
            }
        }
        return line
    }

    private static func isBareKey(_ key: String) -> Bool {
        !key.isEmpty && key.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
        }
    }

    static func quoted(_ text: String) -> String { "\"\(text)\"" }
}

private struct ValueParseError: Error {
    var message: String
}

private struct ValueParser {
    let text: [Unicode.Scalar]
    var index = 0

    mutating func expectEnd() throws(ValueParseError) {
        skipSpace()
        guard index == text.count else { throw ValueParseError(message: "unexpected text after the value") }
    }

    mutating func skipSpace() {
        while index < text.count, text[index] == " " || text[index] == "\t" { index += 1 }
    }

    mutating func parseValue() throws(ValueParseError) -> TOMLValue {
        skipSpace()
        guard index < text.count else { throw ValueParseError(message: "missing value") }
        switch text[index] {
        case "\"": return .string(try parseString())
        case "[": return .array(try parseArray())
        default: return try parseBareToken()
        }
    }

    mutating func parseString() throws(ValueParseError) -> String {
        index += 1
        var result = String.UnicodeScalarView()
        while index < text.count {
            let c = text[index]
            index += 1
            if c == "\"" { return String(result) }
            if c == "\\" {
                guard index < text.count else { break }
                let e = text[index]
                index += 1
                switch e {
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "\\": result.append("\\")
                case "\"": result.append("\"")
                default: throw ValueParseError(message: "unsupported escape \\\(e)")
                }
            } else {
                result.append(c)
            }
        }
        throw ValueParseError(message: "unterminated string")
    }

    mutating func parseArray() throws(ValueParseError) -> [TOMLValue] {
        index += 1
        var items: [TOMLValue] = []
        while true {
            skipSpace()
            guard index < text.count else { throw ValueParseError(message: "unterminated array") }
            if text[index] == "]" {
                index += 1
                return items
            }
            items.append(try parseValue())
            skipSpace()
            guard index < text.count else { throw ValueParseError(message: "unterminated array") }
            if text[index] == "," { index += 1 } else if text[index] != "]" {
                throw ValueParseError(message: "expected `,` or `]` in array")
            }
        }
    }

    /// `true`, `false` or a number; any other bare word is an error that says what would be valid.
    mutating func parseBareToken() throws(ValueParseError) -> TOMLValue {
        let start = index
        while index < text.count, text[index] != " ", text[index] != "\t", text[index] != ",", text[index] != "]" {
            index += 1
        }
        let token = String(String.UnicodeScalarView(text[start..<index]))
        if token == "true" { return .bool(true) }
        if token == "false" { return .bool(false) }
        guard !token.isEmpty, let value = Double(token.replacingUnderscores), value.isFinite else {
            throw ValueParseError(message: "`\(token)` is not a number, a quoted string, true/false or an array")
        }
        return .number(value)
    }
}

extension String {
    var trimmed: String { Substring(self).trimmed }
    fileprivate var replacingUnderscores: String { String(filter { $0 != "_" }) }
}

extension Substring {
    var trimmed: String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
}
