import CloudModel
import CloudStore
import Hummingbird
import PacerContract

/// A run's samples written out as they are read, one chunk at a time from the store: a run
/// read holds one chunk (at most `TrackChunkFormat.maxLinesPerChunk` lines) in memory, never
/// the whole run. The same for the JSON of `GET /v1/runs/{run_id}` and for its GPX, TCX and FIT.
struct TrackStream: Sendable {
    /// Which chunks make the run: 0..<count of one device's run.
    struct Chunks: Sendable {
        var device: String
        var runID: String
        var count: Int
    }

    /// A new document for each response body.
    var document: @Sendable () -> any TrackDocument

    func body(runs: RunRepository, chunks: Chunks) -> ResponseBody {
        ResponseBody { writer in
            var document = document()
            var buffer = ByteBuffer(bytes: try document.start())
            for seq in 0..<chunks.count {
                guard let chunk = try await runs.chunk(device: chunks.device, runID: chunks.runID, seq: seq) else {
                    throw StoreError("chunk \(seq) of run \(chunks.runID) went while the run was read")
                }
                try TrackChunkFormat.read(chunk.body, gzip: chunk.contentEncoding == "gzip") { item in
                    buffer.writeBytes(try document.add(item))
                }
                try await writer.write(buffer)
                buffer.clear()
            }
            buffer.writeBytes(try document.end())
            try await writer.write(buffer)
            try await writer.finish(nil)
        }
    }
}

/// A run served as a document: what comes before the samples, each sample, what comes after.
protocol TrackDocument {
    mutating func start() throws -> [UInt8]
    mutating func add(_ sample: ChunkSample) throws -> [UInt8]
    mutating func end() throws -> [UInt8]
}
