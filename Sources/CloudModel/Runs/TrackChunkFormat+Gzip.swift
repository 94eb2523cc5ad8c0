import Gzip
import PacerContract

/// Chunks as the cloud receives and stores them: gzipped or plain.
extension TrackChunkFormat {
    /// Reads a stored or received chunk body (gzip or plain) and hands each sample to `each`
    /// as it is parsed: no more than one line is held. Throws `Gzip.Failure`, `Failure`, or what
    /// `each` throws.
    public static func read(_ body: [UInt8], gzip: Bool, maxLines: Int? = maxLinesPerChunk, _ each: (ChunkSample) throws -> Void) throws {
        var reader = Reader(maxLines: maxLines)
        if gzip {
            try Gzip.inflate(body) { piece in try reader.feed(piece, each) }
        } else {
            try reader.feed(body[...], each)
        }
        try reader.finish(each)
    }

    /// How many samples a stored chunk holds (no cap: for chunks stored before the caps).
    public static func countSamples(_ body: [UInt8], gzip: Bool) -> Int? {
        var count = 0
        do {
            try read(body, gzip: gzip, maxLines: nil) { _ in count += 1 }
        } catch {
            return nil
        }
        return count
    }
}
