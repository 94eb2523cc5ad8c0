/// Typed reads of one entry, each failing with the entry's file, line and key.
struct EntryReader {
    let entry: TOMLEntry
    let file: String

    func fail(_ problem: String) -> ConfigError {
        ConfigError(file: file, line: entry.line, key: entry.displayKey, problem: problem)
    }

    func number(in range: ClosedRange<Double>, _ what: String) throws(ConfigError) -> Double {
        guard case .number(let n) = entry.value else { throw fail("expected \(what), got \(entry.value.typeName)") }
        guard range.contains(n) else { throw fail("expected \(what), got \(show(n))") }
        return n
    }

    func integer(in range: ClosedRange<Int>, _ what: String) throws(ConfigError) -> Int {
        guard case .number(let n) = entry.value else { throw fail("expected \(what), got \(entry.value.typeName)") }
        guard n == n.rounded(), abs(n) < 1e15 else { throw fail("expected \(what), got \(show(n))") }
        guard range.contains(Int(n)) else { throw fail("expected \(what), got \(Int(n))") }
        return Int(n)
    }

    func integers(in range: ClosedRange<Int>, _ what: String) throws(ConfigError) -> [Int] {
        guard case .array(let items) = entry.value, !items.isEmpty else { throw fail("expected \(what), got \(entry.value.typeName)") }
        var result: [Int] = []
        for item in items {
            guard case .number(let n) = item, n == n.rounded(), abs(n) < 1e15, range.contains(Int(n)) else {
                throw fail("expected \(what); \(item.typeName == "a number" ? show(item) : item.typeName) is not one")
            }
            result.append(Int(n))
        }
        return result
    }

    func strings(_ what: String) throws(ConfigError) -> [String] {
        guard case .array(let items) = entry.value else { throw fail("expected \(what), got \(entry.value.typeName)") }
        var result: [String] = []
        for item in items {
            guard case .string(let s) = item else { throw fail("expected \(what); \(show(item)) is not a string") }
            result.append(s)
        }
        return result
    }

    func string(_ what: String, allowEmpty: Bool) throws(ConfigError) -> String {
        guard case .string(let s) = entry.value else { throw fail("expected \(what), got \(entry.value.typeName)") }
        guard allowEmpty || !s.isEmpty else { throw fail("expected \(what), got an empty string") }
        return s
    }

    func absolutePath() throws(ConfigError) -> String {
        guard case .string(let path) = entry.value else { throw fail("expected an absolute path in quotes, got \(entry.value.typeName)") }
        guard path.hasPrefix("/") else { throw fail("expected an absolute path, got \"\(path)\"") }
        return path
    }

    /// "AA:BB:CC:DD:EE:FF" in either case, upper-cased; "" is nil.
    func bluetoothAddress() throws(ConfigError) -> String? {
        let text = try string("a Bluetooth address in quotes, e.g. \"C8:4F:0E:12:34:56\", or \"\" for none", allowEmpty: true)
        if text.isEmpty { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
            throw fail("expected a Bluetooth address like \"C8:4F:0E:12:34:56\", got \"\(text)\"")
        }
        return text.uppercased()
    }

    func bool() throws(ConfigError) -> Bool {
        guard case .bool(let b) = entry.value else { throw fail("expected true or false, got \(entry.value.typeName)") }
        return b
    }
}

/// A number as a person wrote it: 5, not 5.0.
func show(_ n: Double) -> String {
    n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
}

func show(_ value: TOMLValue) -> String {
    if case .number(let n) = value { return show(n) }
    return value.typeName
}
