@testable import CloudStore
import PacerTestSupport
import SQLKit
import Testing

/// `StoreDatabase.readColumns`, the store's row-per-run reads past SQLKit's row decoding (issue
/// 32): the same values as SQLKit's decoder on both backends, NULLs as nil, and a clear error for
/// a column the query has not or a NULL where a value must be.
@Suite(.timeLimit(.minutes(10))) struct ColumnRowsTests {
    struct Decoded: Decodable, Equatable {
        let name: String, count: Int64, ratio: Double?, small: Int?
    }

    @Test("the values SQLKit's decoder reads, on both backends", arguments: Backend.allCases)
    func sameAsSQLKit(_ backend: Backend) async throws {
        try await DeviceRepositoryTests.withDatabase(backend) { database in
            let real = database.dialect.real
            try await database.transaction { db in
                try await db.raw("CREATE TABLE sample (name TEXT NOT NULL, count BIGINT NOT NULL, ratio \(unsafeRaw: real), small INTEGER)").run()
                for (name, count, ratio, small) in [("a", Int64(9_000_000_000), Optional(0.25), Optional(7)), ("b", -1, nil, nil), ("c", 0, 3.0, -2)] {
                    try await db.raw("INSERT INTO sample VALUES (\(bind: name), \(bind: count), \(bind: ratio), \(bind: small))").run()
                }
            }
            let query: SQLQueryString = "SELECT name, count, ratio, small FROM sample WHERE count > \(bind: Int64(-5)) AND name <> \(bind: "z") ORDER BY name"
            let expected = try await database.read { try await $0.raw(query).rows(Decoded.self) }
            let read = try await database.readColumns(query) { row in
                Decoded(name: try row.string("name"), count: try row.int64("count"), ratio: try row.optionalDouble("ratio"), small: try row.optionalInt("small"))
            }
            #expect(expected.count == 3)
            #expect(read == expected)

            await #expect(throws: StoreError.self) { _ = try await database.readColumns(query) { try $0.string("nope") } }
            await #expect(throws: StoreError.self) { _ = try await database.readColumns(query) { try $0.double("ratio") } }
        }
    }
}
