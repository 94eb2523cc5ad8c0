import Hummingbird
import PacerContract

/// A run's samples written out as they are read, one chunk at a time from the store: a run
/// read holds one chunk (at most `TrackChunkFormat.maxLinesPerChunk` lines) in memory, never
/// the whole run. The same for the JSON of `GET /v1/runs/{run_id}` and for its GPX.
struct TrackStream: Sendable {
    /// Which chunks make the run: 0..<count of one device's run.
    struct Chunks: Sendable {
        var device: String
        var runID: String
        var count: Int
    }

    var start: String
    var end: String
    var separator: String
    var sample: @Sendable (ChunkSample) -> String

    func body(store: any CloudStore, chunks: Chunks) -> ResponseBody {
        ResponseBody { writer in
            var buffer = ByteBuffer(string: start)
            var first = true
            for seq in 0..<chunks.count {
                guard let chunk = try await store.chunk(device: chunks.device, runID: chunks.runID, seq: seq) else {
                    throw StoreError("chunk \(seq) of run \(chunks.runID) went while the run was read")
                }
                try TrackChunkFormat.read(chunk.body, gzip: chunk.contentEncoding == "gzip") { item in
                    if !first { buffer.writeString(separator) }
                    first = false
                    buffer.writeString(sample(item))
                }
                try await writer.write(buffer)
                buffer.clear()
            }
            buffer.writeString(end)
            try await writer.write(buffer)
            try await writer.finish(nil)
        }
    }
}
