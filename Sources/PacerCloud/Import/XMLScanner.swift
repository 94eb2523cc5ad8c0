/// A small, strict XML reader for the GPX and TCX files runners upload: elements, attributes,
/// text, CDATA, comments and processing instructions, the five predefined entities and
/// character references. A DOCTYPE is refused (no entity of a file's own is ever expanded), as is
/// anything not well-formed: tags that do not match, a file that stops inside an element, more
/// than `maxDepth` open elements. Pure Swift over bytes, every index checked: garbled input is an
/// error with its line, never a trap. (Foundation's XMLParser traps on some garbled files.)
struct XMLScanner {
    /// What the scanner reports, in document order.
    enum Event {
        case start(name: String, attributes: [String: String])
        case end(name: String)
        case text(String)
    }

    struct Failure: Error {
        var line: Int
        var message: String
    }

    static let maxDepth = 64

    private let bytes: [UInt8]
    private var position = 0
    private(set) var line = 1
    private var open: [String] = []

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// Reads the whole document, handing each event to `each` (which may throw to stop).
    mutating func scan(_ each: (Event, Int) throws -> Void) throws {
        var sawRoot = false
        while position < bytes.count {
            if bytes[position] != UInt8(ascii: "<") {
                let start = position
                while position < bytes.count, bytes[position] != UInt8(ascii: "<") { advance() }
                let raw = bytes[start..<position]
                if open.isEmpty {
                    guard raw.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { throw fail("text outside the document's element") }
                } else {
                    try each(.text(try decode(raw)), line)
                }
                continue
            }
            if starts("<?") {
                try skip(past: "?>", what: "a processing instruction")
            } else if starts("<!--") {
                try skip(past: "-->", what: "a comment")
            } else if starts("<![CDATA[") {
                guard !open.isEmpty else { throw fail("CDATA outside the document's element") }
                position += 9
                let start = position
                try skip(past: "]]>", what: "a CDATA section")
                try each(.text(String(decoding: bytes[start..<(position - 3)], as: UTF8.self)), line)
            } else if starts("<!") {
                throw fail("a DOCTYPE or other declaration; GPX and TCX files have none, and none is accepted")
            } else if starts("</") {
                position += 2
                let name = readName()
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else { throw fail("the end tag </\(name)> is not closed with '>'") }
                position += 1
                guard let expected = open.last else { throw fail("</\(name)> closes nothing") }
                guard expected == name else { throw fail("</\(name)> where </\(expected)> was expected") }
                open.removeLast()
                try each(.end(name: name), line)
            } else {
                guard open.isEmpty ? !sawRoot : true else { throw fail("a second root element") }
                position += 1
                let name = readName()
                guard !name.isEmpty else { throw fail("'<' not followed by an element name") }
                var attributes: [String: String] = [:]
                var selfClosing = false
                while true {
                    skipSpace()
                    guard position < bytes.count else { throw fail("the file ends inside the tag <\(name)>: it is truncated") }
                    if bytes[position] == UInt8(ascii: ">") { position += 1; break }
                    if starts("/>") { position += 2; selfClosing = true; break }
                    let attribute = readName()
                    guard !attribute.isEmpty else { throw fail("<\(name)> has a malformed attribute") }
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else { throw fail("attribute \(attribute) of <\(name)> has no '='") }
                    position += 1
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
                        throw fail("attribute \(attribute) of <\(name)> is not quoted")
                    }
                    let quote = bytes[position]
                    position += 1
                    let start = position
                    while position < bytes.count, bytes[position] != quote {
                        guard bytes[position] != UInt8(ascii: "<") else { throw fail("'<' in attribute \(attribute) of <\(name)>") }
                        advance()
                    }
                    guard position < bytes.count else { throw fail("the file ends inside attribute \(attribute) of <\(name)>: it is truncated") }
                    guard attributes[attribute] == nil else { throw fail("<\(name)> has attribute \(attribute) twice") }
                    attributes[attribute] = try decode(bytes[start..<position])
                    position += 1
                }
                sawRoot = true
                guard open.count < Self.maxDepth else { throw fail("elements nested more than \(Self.maxDepth) deep") }
                open.append(name)
                try each(.start(name: name, attributes: attributes), line)
                if selfClosing {
                    open.removeLast()
                    try each(.end(name: name), line)
                }
            }
        }
        if let last = open.last { throw fail("the file ends inside <\(last)>: it is truncated") }
        guard sawRoot else { throw fail("no element: the file holds no XML document") }
    }

    private func fail(_ message: String) -> Failure { Failure(line: line, message: message) }

    private func starts(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        return text.withUTF8Buffer { bytes[position..<(position + count)].elementsEqual($0) }
    }

    private mutating func advance() {
        if bytes[position] == 0x0A { line += 1 }
        position += 1
    }

    private mutating func skip(past end: StaticString, what: String) throws {
        while position < bytes.count {
            if starts(end) {
                position += end.utf8CodeUnitCount
                return
            }
            advance()
        }
        throw fail("the file ends inside \(what): it is truncated")
    }

    private mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { advance() }
    }

    /// A name: bytes up to whitespace, '/', '>', '=', '<' or a quote.
    private mutating func readName() -> String {
        let start = position
        while position < bytes.count, ![0x20, 0x09, 0x0A, 0x0D, 0x2F, 0x3E, 0x3D, 0x3C, 0x22, 0x27].contains(bytes[position]) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// Text with its entity and character references replaced.
    private func decode(_ raw: ArraySlice<UInt8>) throws -> String {
        guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
        var out = ""
        var index = raw.startIndex
        var plain = index
        while index < raw.endIndex {
            guard raw[index] == UInt8(ascii: "&") else { index += 1; continue }
            out += String(decoding: raw[plain..<index], as: UTF8.self)
            guard let semicolon = raw[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else { throw fail("'&' that starts no entity") }
            let name = String(decoding: raw[(index + 1)..<semicolon], as: UTF8.self)
            switch name {
            case "amp": out += "&"
            case "lt": out += "<"
            case "gt": out += ">"
            case "quot": out += "\""
            case "apos": out += "'"
            default:
                let hex = name.hasPrefix("#x") || name.hasPrefix("#X")
                guard name.hasPrefix("#"), let value = UInt32(name.dropFirst(hex ? 2 : 1), radix: hex ? 16 : 10),
                      let scalar = Unicode.Scalar(value) else { throw fail("unknown entity &\(name.prefix(12));") }
                out.unicodeScalars.append(scalar)
            }
            index = semicolon + 1
            plain = index
        }
        return out + String(decoding: raw[plain..<raw.endIndex], as: UTF8.self)
    }
}
