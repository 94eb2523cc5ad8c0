import CloudModel
import CloudStore
import Foundation
import Gzip
import Hummingbird
import PacerContract

/// A device's runs (`/v1/runs`): chunks and the summary uploaded, the complete runs listed,
/// read back (JSON, GPX) and deleted. Always the calling device's own.
struct DeviceRunsController: Sendable {
    let runs: RunRepository
    /// A complete run's figures, computed after the answer.
    let analysis: RunAnalysis
    /// A complete run that names a planned session marks it done.
    let following: PlanFollowing

    func addRoutes(to device: PolicedRoutes<CloudRequestContext>) {
        device.on(.put, "runs/:run_id/chunks/:seq", DeviceAccess()) { request, context in try await putChunk(request, context: context) }
        device.on(.put, "runs/:run_id", DeviceAccess()) { request, context in try await putSummary(request, context: context) }
        device.on(.get, "runs", DeviceAccess()) { request, context in try await listRuns(request, context: context) }
        device.on(.get, "runs/:run_id", DeviceAccess()) { _, context in try await showRun(context: context) }
        device.on(.get, "runs/:run_id/gpx", DeviceAccess()) { _, context in try await runGPX(context: context) }
        device.on(.delete, "runs/:run_id", DeviceAccess()) { _, context in try await deleteRun(context: context) }
    }

    private func putChunk(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let runID = try Identifiers.runID(context.parameters.get("run_id"))
        let seqText = context.parameters.get("seq") ?? ""
        guard let seq = Int(seqText), seq >= 0, seq < CloudLimits.maxChunksPerRun, String(seq) == seqText else {
            throw APIError.badRequest("invalid_seq", "seq \(WireLimits.quoted(seqText)) is not a chunk number 0, 1, 2, …")
        }
        if let type = request.headers[.contentType], !type.lowercased().hasPrefix(TrackChunkFormat.contentType) {
            throw APIError(.unsupportedMediaType, "unsupported_media_type",
                           "Content-Type is \(WireLimits.quoted(type)); a chunk is \(TrackChunkFormat.contentType)")
        }
        let encoding: String?
        switch request.headers[.contentEncoding]?.lowercased().trimmingSpaces {
        case nil, "", "identity": encoding = nil
        case "gzip": encoding = "gzip"
        case let other?:
            throw APIError(.unsupportedMediaType, "unsupported_encoding", "Content-Encoding \(WireLimits.quoted(other)) is not taken; use gzip or none")
        }
        let body = try await JSONInput.body(of: request, context: context)
        let samples = try Self.checkChunk(body, gzip: encoding == "gzip", seq: seq)
        let elsewhere = try await runs.storedSamples(device: device.id, runID: runID, below: CloudLimits.maxChunksPerRun, excluding: seq)
        guard elsewhere + samples <= TrackChunkFormat.maxSamplesPerRun else {
            throw APIError(.contentTooLarge, "run_too_large",
                           "run \(runID) would have \(elsewhere + samples) samples with chunk \(seq); a run has at most \(TrackChunkFormat.maxSamplesPerRun)")
        }
        // The encoding is part of what was received: the same bytes with another encoding differ.
        let digest = Tokens.digest(Array((encoding ?? "identity").utf8) + [0] + body)
        let chunk = StoredChunk(runID: runID, seq: seq, body: body, contentEncoding: encoding, digest: digest, samples: samples)
        let result = try await runs.putChunk(chunk, device: device.id)
        if result != .conflict {
            // The last chunk may be what completes a run that followed a planned session (a
            // resent one too: the first answer may have been lost after the chunk was stored).
            try await following.markFollowedSession(device: device, runID: runID)
        }
        switch result {
        case .created, .replaced:
            analysis.figuresIfComplete(device: device.id, runID: runID)
            return try JSONInput.encode(ChunkReply(run_id: runID, seq: seq, stored: true), status: .created)
        case .unchanged:
            return try JSONInput.encode(ChunkReply(run_id: runID, seq: seq, stored: false))
        case .conflict:
            throw APIError(.conflict, "conflict", "chunk \(seq) of run \(runID) is stored already with a different body")
        }
    }

    /// Parses the chunk as a stream (gunzipping as it goes) within the caps; its sample count.
    static func checkChunk(_ body: [UInt8], gzip: Bool, seq: Int) throws(APIError) -> Int {
        var samples = 0
        do {
            try TrackChunkFormat.read(body, gzip: gzip) { _ in samples += 1 }
        } catch let error as Gzip.Failure {
            throw APIError.badRequest("bad_gzip", "the body is sent with Content-Encoding: gzip but \(error)")
        } catch let error as TrackChunkFormat.Failure where error.tooManyLines {
            throw APIError(.contentTooLarge, "too_large", "chunk \(seq): \(error)")
        } catch {
            throw APIError.badRequest("bad_track", "chunk \(seq): \(error)")
        }
        return samples
    }

    private func putSummary(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let runID = try Identifiers.runID(context.parameters.get("run_id"))
        let summary = try JSONInput.decode(RunSummaryBody.self, from: try await JSONInput.jsonBody(of: request, context: context))
        let startMs = try summary.validate()
        let stored = StoredSummary(runID: runID, json: try JSONInput.canonical(summary), chunks: summary.chunks, startMs: startMs)
        let result = try await runs.putSummary(stored, device: device.id)
        let missing = try await missingChunks(device: device.id, runID: runID, count: summary.chunks)
        if missing.isEmpty, summary.planned_session_id != nil { try await following.markFollowedSession(device: device, runID: runID) }
        if missing.isEmpty, result != .unchanged { analysis.figuresIfComplete(device: device.id, runID: runID) }
        return try JSONInput.encode(
            SummaryReply(run_id: runID, complete: missing.isEmpty, missing_chunks: missing),
            status: result == .created ? .created : .ok)
    }

    /// Chunk numbers below `count` not stored yet (the device's resume list).
    private func missingChunks(device: String, runID: String, count: Int) async throws -> [Int] {
        let present = Set(try await runs.chunkNumbers(device: device, runID: runID, below: count))
        return (0..<count).filter { !present.contains($0) }
    }

    private func listRuns(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let limit = try integerQuery(request, "limit", default: 20, range: 1...200)
        let offset = try integerQuery(request, "offset", default: 0, range: 0...1_000_000)
        let runs = try await runs.completeRuns(device: device.id, limit: limit, offset: offset)
        return try JSONInput.encode(RunList(runs: try runs.map(RunItem.init), limit: limit, offset: offset))
    }

    private func showRun(context: DeviceContext) async throws -> Response {
        let (item, chunks) = try await completeRun(context: context)
        // The item's JSON without its closing brace, then the samples.
        let head = String(try JSONInput.canonical(item).dropLast()) + #","samples":["#
        let json = TrackStream { SampleOut(head: head) }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: json.body(runs: runs, chunks: chunks))
    }

    private func runGPX(context: DeviceContext) async throws -> Response {
        let (item, chunks) = try await completeRun(context: context)
        let (runID, summary) = (item.run_id, item.summary)
        let gpx = TrackStream { ExportTrackDocument(format: .gpx, runID: runID, summary: summary) }
        return Response(status: .ok, headers: [.contentType: "application/gpx+xml",
                                               .contentDisposition: "attachment; filename=\"run-\(item.run_id).gpx\""],
                        body: gpx.body(runs: runs, chunks: chunks))
    }

    private func deleteRun(context: DeviceContext) async throws -> Response {
        let device = context.device
        let runID = try Identifiers.runID(context.parameters.get("run_id"))
        guard try await runs.deleteRun(device: device.id, runID: runID) else { throw APIError.notFound("no run \(runID)") }
        return Response(status: .noContent)
    }

    /// The run's summary and where its chunks are, once it is known to be complete and within
    /// the cap (a run stored before the caps may not be).
    private func completeRun(context: DeviceContext) async throws -> (RunItem, TrackStream.Chunks) {
        let device = context.device
        let runID = try Identifiers.runID(context.parameters.get("run_id"))
        guard let stored = try await runs.completeRun(device: device.id, runID: runID) else {
            throw APIError.notFound("no complete run \(runID) (unknown, or its summary or a chunk is still missing)")
        }
        let samples = try await runs.storedSamples(device: device.id, runID: runID, below: stored.chunks, excluding: nil)
        guard samples <= TrackChunkFormat.maxSamplesPerRun else {
            throw APIError(.contentTooLarge, "run_too_large",
                           "run \(runID) has \(samples) samples; at most \(TrackChunkFormat.maxSamplesPerRun) are served")
        }
        return (try RunItem(stored), TrackStream.Chunks(device: device.id, runID: runID, count: stored.chunks))
    }

    private func integerQuery(_ request: Request, _ name: String, default value: Int, range: ClosedRange<Int>) throws(APIError) -> Int {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw .badRequest("invalid_query", "query parameter '\(name)' is \(WireLimits.quoted(text)); expected a whole number \(range.lowerBound)...\(range.upperBound)")
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
    var summary: RunSummaryBody

    init(_ stored: StoredSummary) throws {
        run_id = stored.runID
        summary = try JSONDecoder().decode(RunSummaryBody.self, from: Data(stored.json.utf8))
    }
}

struct RunList: Encodable {
    var runs: [RunItem]
    var limit: Int
    var offset: Int
}

/// `GET /v1/runs/{run_id}`: the run's item, then its samples, each written by hand (sorted
/// keys, as JSONEncoder would), since a run is streamed sample by sample.
struct SampleOut: TrackDocument {
    var head: String
    private var first = true

    init(head: String) {
        self.head = head
    }

    func start() -> [UInt8] { Array(head.utf8) }

    func end() -> [UInt8] { Array("]}".utf8) }

    mutating func add(_ sample: ChunkSample) -> [UInt8] {
        defer { first = false }
        return Array(((first ? "" : ",") + Self.json(sample)).utf8)
    }

    static func json(_ sample: ChunkSample) -> String {
        var out = #"{"#
        if let altitude = sample.altitudeM { out += #""alt_m":\#(altitude),"# }
        out += #""distance_m":\#(sample.distanceM),"#
        if let hr = sample.heartRate { out += #""hr":\#(hr),"# }
        out += #""lat":\#(sample.lat),"lon":\#(sample.lon),"moving":\#(sample.moving),"speed_mps":\#(sample.speedMps),"#
        out += #""time":"\#(WireTime.text(milliseconds: sample.timeMs))"}"#
        return out
    }
}
