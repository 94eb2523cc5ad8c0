@testable import CloudModel
@testable import CloudStore
import PacerTestSupport
import Testing
@testable import PacerCloud

/// A run is listed once it is complete: its summary and every chunk below the count it names,
/// in whatever order they arrive, also when they arrive at once on PostgreSQL (issue 32: the
/// completeness is kept in the run's row instead of counted by every list).
@Suite(.timeLimit(.minutes(10))) struct RunCompletenessTests {
    static func chunk(_ run: String, _ seq: Int) -> StoredChunk {
        StoredChunk(runID: run, seq: seq, body: [UInt8(seq)], contentEncoding: nil, digest: "digest-\(seq)", samples: 1)
    }

    static func summary(_ run: String, chunks: Int, json: String = "{}") -> StoredSummary {
        StoredSummary(runID: run, json: json, chunks: chunks, startMs: 1_000)
    }

    @Test("complete whichever comes last; a summary naming more chunks makes it incomplete again", arguments: Backend.allCases)
    func order(_ backend: Backend) async throws {
        try await DeviceRepositoryTests.withDatabase(backend) { database in
            let runs = RunRepository(database: database)
            let listed = { try await runs.completeRun(device: "d1", runID: "r1") != nil }

            _ = try await runs.putChunk(Self.chunk("r1", 0), device: "d1")
            #expect(try await !listed(), "chunks without a summary")
            _ = try await runs.putSummary(Self.summary("r1", chunks: 2), device: "d1")
            #expect(try await !listed(), "a summary naming 2 chunks with one stored")
            _ = try await runs.putChunk(Self.chunk("r1", 1), device: "d1")
            #expect(try await listed(), "the last chunk after the summary")
            _ = try await runs.putSummary(Self.summary("r1", chunks: 3, json: #"{"v":2}"#), device: "d1")
            #expect(try await !listed(), "a new summary naming a third chunk")
            _ = try await runs.putChunk(Self.chunk("r1", 2), device: "d1")
            #expect(try await listed())
            _ = try await runs.putSummary(Self.summary("r1", chunks: 1, json: #"{"v":3}"#), device: "d1")
            #expect(try await listed(), "chunks beyond the summary's count are not counted")
            #expect(try await runs.deleteRun(device: "d1", runID: "r1"))
            #expect(try await !listed())
        }
    }

    @Test("the last chunks and the summary written at once: every run ends complete", arguments: Backend.allCases)
    func concurrentWrites(_ backend: Backend) async throws {
        try await DeviceRepositoryTests.withDatabase(backend) { database in
            let runs = RunRepository(database: database)
            let runIDs = (0..<20).map { "run-\($0)" }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for run in runIDs {
                    group.addTask { _ = try await runs.putSummary(Self.summary(run, chunks: 3), device: "d1") }
                    for seq in 0..<3 { group.addTask { _ = try await runs.putChunk(Self.chunk(run, seq), device: "d1") } }
                }
                try await group.waitForAll()
            }
            for run in runIDs { #expect(try await runs.completeRun(device: "d1", runID: run) != nil, "\(run)") }
        }
    }
}
