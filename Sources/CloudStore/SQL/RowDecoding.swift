import SQLKit
import Synchronization

extension SQLQueryFetcher {
    /// Every row, decoded by column name: a record's property `startMs` reads the column `start_ms`.
    func rows<Row: Decodable>(_ type: Row.Type) async throws -> [Row] {
        try await all(decoding: Row.self, with: .snakeCaseColumns)
    }

    /// The first row, decoded as `rows` decodes each.
    func row<Row: Decodable>(_ type: Row.Type) async throws -> Row? {
        try await first(decoding: Row.self, with: .snakeCaseColumns)
    }
}

extension SQLRowDecoder {
    /// SQLKit's `.convertFromSnakeCase` converts each key of each row again, through Unicode
    /// properties: the statistics page's thousand rows spent more time there than in SQLite.
    /// The few names a program has are converted once.
    static let snakeCaseColumns = SQLRowDecoder(keyDecodingStrategy: .custom(SnakeCaseColumns.column))
}

enum SnakeCaseColumns {
    private static let converted = Mutex<[String: String]>([:])

    @Sendable static func column(_ path: [any CodingKey]) -> any CodingKey {
        let key = path.last?.stringValue ?? ""
        let column = converted.withLock { names in
            if let known = names[key] { return known }
            let name = snakeCase(key)
            names[key] = name
            return name
        }
        return ColumnKey(stringValue: column)
    }

    /// SQLKit's (and Foundation's) conversion: "startMs" → "start_ms", "runID" → "run_id",
    /// "lastURLPath" → "last_url_path" (a run of capitals is one word; its last capital starts
    /// the next word when a small letter follows).
    static func snakeCase(_ key: String) -> String {
        let characters = Array(key)
        var name = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let before = characters[index - 1]
                let after = index + 1 < characters.count ? characters[index + 1] : nil
                if !before.isUppercase || after?.isLowercase == true { name.append("_") }
            }
            name.append(contentsOf: character.lowercased())
        }
        return name
    }

    private struct ColumnKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
