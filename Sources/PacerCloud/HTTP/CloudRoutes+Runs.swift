import Foundation
import Hummingbird

extension CloudRoutes {
    func putChunk(_ request: Request, context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let runID = try Identifiers.runID(context.parameters.get("run_id"))
        let seqText = context.parameters.get("seq") ?? ""
        guard let seq = Int(seqText), seq >= 0, seq < 100_000, String(seq) == seqText else {
            throw APIError.badRequest("invalid_seq", "seq '\(seqText)' is not a chunk number 0, 1, 2, …")
        }
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix(TrackChunkFormat.contentType) {
            throw APIError(.unsupportedMediaType, "unsupported_media_type",
                           "Content-Type is '\(type)'; a chunk is \(TrackChunkFormat.contentType)")
        }
        let encoding: String?
        switch request.headers[.contentEncoding]?.lowercased().trimmingSpaces {
        case nil, "", "identity": encoding = nil
        case "gzip": encoding = "gzip"
        case let other?:
            throw APIError(.unsupportedMediaType, "unsupported_encoding", "Content-Encoding '\(other)' is not taken; use gzip or none")
        }
        let body = try await JSONInput.body(of: request, context: context)
        let text: [UInt8]
        if encoding == "gzip" {
            do {
                text = try Gzip.decompress(body)
            } catch {
                throw APIError.badRequest("bad_gzip", "the body is sent with Content-Encoding: gzip but \(error)")
            }
        } else {
            text = body
        }
        do {
            _ = try TrackChunkFormat.decode(text)
        } catch {
            throw APIError.badRequest("bad_track", "chunk \(seq): \(error)")
        }
        // The encoding is part of what was received: the same bytes with another encoding differ.
        let digest = Tokens.digest(Array((encoding ?? "identity").utf8) + [0] + body)
        let chunk = StoredChunk(runID: runID, seq: seq, body: body, contentEncoding: encoding, digest: digest)
        switch try await store.putChunk(chunk, device: device.id) {
        case .created, .replaced:
            return try JSONInput.encode(ChunkReply(run_id: runID, seq: seq, stored: true), status: .created)
        case .unchanged:
            return try JSONInput.encode(ChunkReply(run_id: runID, seq: seq, stored: false))
        case .conflict:
            throw APIError(.conflict, "conflict", "chunk \(seq) of run \(runID) is stored already with a different body")
        }
    }

    func putSummary(_ request: Request, context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let runID = try Identifiers.runID(context.parameters.get("run_id"))
        let summary = try JSONInput.decode(RunSummary.self, from: try await JSONInput.body(of: request, context: context))
        let startMs = try summary.validate()
        let stored = StoredSummary(runID: runID, json: try JSONInput.canonical(summary), chunks: summary.chunks, startMs: startMs)
        let result = try await store.putSummary(stored, device: device.id)
        let missing = try await missingChunks(device: device.id, runID: runID, count: summary.chunks)
        return try JSONInput.encode(
            SummaryReply(run_id: runID, complete: missing.isEmpty, missing_chunks: missing),
            status: result == .created ? .created : .ok)
    }

    /// Chunk numbers below `count` not stored yet (the device's resume list).
    private func missingChunks(device: String, runID: String, count: Int) async throws -> [Int] {
        let present = Set(try await store.chunks(device: device, runID: runID, count: count).map(\.seq))
        return (0..<count).filter { !present.contains($0) }
    }

    func listRuns(_ request: Request, context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let limit = try integerQuery(request, "limit", default: 20, range: 1...200)
        let offset = try integerQuery(request, "offset", default: 0, range: 0...1_000_000)
        let runs = try await store.completeRuns(device: device.id, limit: limit, offset: offset)
        return try JSONInput.encode(RunList(runs: try runs.map(RunItem.init), limit: limit, offset: offset))
    }

    func showRun(context: CloudRequestContext) async throws -> Response {
        let (item, samples) = try await completeRun(context: context)
        return try JSONInput.encode(RunDetail(run_id: item.run_id, summary: item.summary, samples: samples.map(SampleOut.init)))
    }

    func runGPX(context: CloudRequestContext) async throws -> Response {
        let (item, samples) = try await completeRun(context: context)
        let gpx = GPXDocument.make(runID: item.run_id, startTime: item.summary.start_time, samples: samples)
        return Response(status: .ok, headers: [.contentType: "application/gpx+xml",
                                               .contentDisposition: "attachment; filename=\"run-\(item.run_id).gpx\""],
                        body: .init(byteBuffer: ByteBuffer(string: gpx)))
    }

    func deleteRun(context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let runID = try Identifiers.runID(context.parameters.get("run_id"))
        guard try await store.deleteRun(device: device.id, runID: runID) else { throw APIError.notFound("no run \(runID)") }
        return Response(status: .noContent)
    }

    private func completeRun(context: CloudRequestContext) async throws -> (RunItem, [TrackSample]) {
        let device = try context.requireDevice()
        let runID = try Identifiers.runID(context.parameters.get("run_id"))
        guard let stored = try await store.completeRun(device: device.id, runID: runID) else {
            throw APIError.notFound("no complete run \(runID) (unknown, or its summary or a chunk is still missing)")
        }
        var samples: [TrackSample] = []
        for chunk in try await store.chunks(device: device.id, runID: runID, count: stored.chunks) {
            let text = chunk.contentEncoding == "gzip" ? try Gzip.decompress(chunk.body) : chunk.body
            samples += try TrackChunkFormat.decode(text)
        }
        return (try RunItem(stored), samples)
    }

    func integerQuery(_ request: Request, _ name: String, default value: Int, range: ClosedRange<Int>) throws(APIError) -> Int {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw .badRequest("invalid_query", "query parameter '\(name)' is '\(text)'; expected a whole number \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }
}

struct ChunkReply: Encodable {
    var run_id: String
    var seq: Int
    /// false: this exact chunk was stored already.
    var stored: Bool
}

struct SummaryReply: Encodable {
    var run_id: String
    var complete: Bool
    var missing_chunks: [Int]
}

struct RunItem: Encodable {
    var run_id: String
    var summary: RunSummary

    init(_ stored: StoredSummary) throws {
        run_id = stored.runID
        summary = try JSONDecoder().decode(RunSummary.self, from: Data(stored.json.utf8))
    }
}

struct RunList: Encodable {
    var runs: [RunItem]
    var limit: Int
    var offset: Int
}

struct SampleOut: Encodable {
    var time: String
    var lat: Double
    var lon: Double
    var speed_mps: Double
    var distance_m: Double
    var moving: Bool
    var hr: Int?

    init(_ sample: TrackSample) {
        time = Timestamp.iso8601(milliseconds: sample.timeMs)
        lat = sample.lat
        lon = sample.lon
        speed_mps = sample.speedMps
        distance_m = sample.distanceM
        moving = sample.moving
        hr = sample.heartRate
    }
}

struct RunDetail: Encodable {
    var run_id: String
    var summary: RunSummary
    var samples: [SampleOut]
}
