import CloudModel
import HTTPTypes
import HummingbirdTesting
import PacerCloud
import Testing

@Suite("pacer-cloud: malformed requests are 4xx and store nothing", .timeLimit(.minutes(10)))
struct MalformedRequestTests {
    func expectRefused(_ name: String, _ response: TestResponse, _ status: HTTPResponse.Status, _ code: String, _ mention: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, "\(name): \(response.status) \(response.text)", sourceLocation: sourceLocation)
        #expect(response.errorCode == code, "\(name): \(response.text)", sourceLocation: sourceLocation)
        #expect(response.errorMessage.contains(mention), "\(name): '\(response.errorMessage)' should mention \(mention)",
                sourceLocation: sourceLocation)
    }

    @Test("each malformed request gets its 4xx with a JSON error naming what is wrong", arguments: Backend.allCases)
    func refused(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let run = Track.runID()
            let chunk = Track.chunk(Track.samples(5))
            var missing = Track.summary(chunks: 1)
            missing.removeValue(forKey: "start_time")
            var wrongType = Track.summary(chunks: 1)
            wrongType["distance_m"] = "far"
            var badState = Track.summary(chunks: 1)
            badState["state"] = "running"

            expectRefused("bad UUID", try await cloud.putChunk("not-a-uuid", 0, chunk, token: token), .badRequest, "invalid_run_id", "run_id")
            expectRefused("uppercase UUID", try await cloud.putChunk(run.uppercased(), 0, chunk, token: token), .badRequest, "invalid_run_id", "lowercase")
            expectRefused("bad seq", try await cloud.putChunk(run, -1, chunk, token: token), .badRequest, "invalid_seq", "seq")
            expectRefused("not gzip", try await cloud.putChunk(run, 0, chunk, token: token, gzip: true), .badRequest, "bad_gzip", "gzip")
            expectRefused("bad track", try await cloud.putChunk(run, 0, Array("1,2,3\n".utf8), token: token), .badRequest, "bad_track", "line 1")
            expectRefused("bad lat", try await cloud.putChunk(run, 0, Array("1778398200000,95.0,9.0,3.1,0.0,1,\n".utf8), token: token),
                 .badRequest, "bad_track", "lat")
            expectRefused("oversize", try await cloud.putChunk(run, 0, [UInt8](repeating: 0x31, count: (1 << 20) + 1), token: token),
                 .contentTooLarge, "too_large", "bytes")
            expectRefused("bad JSON", try await cloud.request(.put, "/v1/runs/\(run)", token: token, body: Array("{\"start_time\": ".utf8)),
                 .badRequest, "bad_json", "JSON")
            expectRefused("missing field", try await cloud.json(.put, "/v1/runs/\(run)", token: token, missing), .badRequest, "missing_field",
                 "'start_time'")
            expectRefused("wrong type", try await cloud.json(.put, "/v1/runs/\(run)", token: token, wrongType), .badRequest, "invalid_field",
                 "'distance_m'")
            expectRefused("bad state", try await cloud.json(.put, "/v1/runs/\(run)", token: token, badState), .badRequest, "invalid_field", "'state'")
            expectRefused("bad position", try await cloud.json(.put, "/v1/position", token: token, ["time": "2026-05-10T07:30:00.000Z", "lat": 91.0, "lon": 9.0]),
                 .badRequest, "invalid_field", "'lat'")
            expectRefused("position time", try await cloud.json(.put, "/v1/position", token: token, ["time": "yesterday", "lat": 45.0, "lon": 9.0]),
                 .badRequest, "invalid_field", "'time'")
            expectRefused("alert missing", try await cloud.json(.post, "/v1/alerts", token: token, ["alert_id": Track.runID(), "sequence": 0]),
                 .badRequest, "missing_field", "'type'")
            expectRefused("alert nested", try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(
                    Track.runID(), 0, position: ["lat": "north", "lon": 9.0])), .badRequest, "invalid_field", "'position.lat'")
            var counts = try await cloud.store.counts()
            counts.devices = 0
            #expect(counts == StoreCounts())
        }
    }
}
