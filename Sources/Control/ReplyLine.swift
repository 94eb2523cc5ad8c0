/// The three reply line shapes, each ending in "\n". Members are written in a fixed order
/// (id first) so a person reading the socket sees the same layout every time.
enum ReplyLine {
    static func success(id: JSONValue, result: JSONValue?) -> [UInt8] {
        var line = start(id)
        line.append(contentsOf: #","ok":true"#.utf8)
        if let result {
            line.append(contentsOf: #","result":"#.utf8)
            result.serialize(into: &line)
        }
        line.append(contentsOf: "}\n".utf8)
        return line
    }

    static func failure(id: JSONValue, error: ControlError) -> [UInt8] {
        var line = start(id)
        line.append(contentsOf: #","ok":false,"error":{"code":"#.utf8)
        JSONValue.serialize(string: error.code.rawValue, into: &line)
        line.append(contentsOf: #","message":"#.utf8)
        JSONValue.serialize(string: error.message, into: &line)
        line.append(contentsOf: "}}\n".utf8)
        return line
    }

    static func chunk(id: JSONValue, text: String) -> [UInt8] {
        var line = start(id)
        line.reserveCapacity(line.count + text.utf8.count + 16)
        line.append(contentsOf: #","chunk":"#.utf8)
        JSONValue.serialize(string: text, into: &line)
        line.append(contentsOf: "}\n".utf8)
        return line
    }

    private static func start(_ id: JSONValue) -> [UInt8] {
        var line = Array(#"{"id":"#.utf8)
        id.serialize(into: &line)
        return line
    }
}
