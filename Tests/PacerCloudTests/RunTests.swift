import Gzip
import HummingbirdTesting
import PacerCloud
import Testing

@Suite("pacer-cloud: runs", .timeLimit(.minutes(10)))
struct RunTests {
    @Test("the same chunk twice is stored once; another body for that seq is 409", arguments: Backend.allCases)
    func chunkIdempotency(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let run = Track.runID()
            let body = try Gzip.compress(Track.chunk(Track.samples(10)))
            let first = try await cloud.putChunk(run, 0, body, token: token, gzip: true)
            #expect(first.status == .created)
            #expect(first.object["stored"] as? Bool == true)
            let again = try await cloud.putChunk(run, 0, body, token: token, gzip: true)
            #expect(again.status == .ok)
            #expect(again.object["stored"] as? Bool == false)
            #expect(try await cloud.store.counts().chunks == 1)

            let other = try await cloud.putChunk(run, 0, Gzip.compress(Track.chunk(Track.samples(11))), token: token, gzip: true)
            #expect(other.status == .conflict)
            #expect(other.errorCode == "conflict")
            #expect(try await cloud.store.counts().chunks == 1)
            #expect(try await cloud.store.runs.chunks(device: cloud.store.devices.devices()[0].id, runID: run, count: 1).first?.body == body)
        }
    }

    @Test("a run is complete once its summary and every chunk are there", arguments: Backend.allCases)
    func completeness(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let run = Track.runID()
            #expect(try await cloud.putChunk(run, 1, Track.chunk(Track.samples(4, from: 6)), token: token).status == .created)
            let summary = try await cloud.json(.put, "/v1/runs/\(run)", token: token, Track.summary(chunks: 2))
            #expect(summary.status == .created)
            #expect(summary.object["complete"] as? Bool == false)
            #expect(summary.object["missing_chunks"] as? [Int] == [0])
            #expect(try await cloud.request(.get, "/v1/runs/\(run)", token: token).status == .notFound)
            #expect((try await cloud.request(.get, "/v1/runs", token: token).object["runs"] as? [Any])?.count == 0)

            // The first chunk gzipped, the second plain: both as received.
            #expect(try await cloud.putChunk(run, 0, Gzip.compress(Track.chunk(Track.samples(6))), token: token, gzip: true).status == .created)
            let repeated = try await cloud.json(.put, "/v1/runs/\(run)", token: token, Track.summary(chunks: 2))
            #expect(repeated.status == .ok)
            #expect(repeated.object["complete"] as? Bool == true)
            let shown = try await cloud.request(.get, "/v1/runs/\(run)", token: token)
            #expect(shown.status == .ok)
            let samples = shown.object["samples"] as? [[String: Any]] ?? []
            #expect(samples.count == 10)
            #expect(samples.first?["time"] as? String == "2026-05-10T07:30:00.000Z")
            #expect(samples.first?["lat"] as? Double == 45.5035034)
            #expect(samples.last?["hr"] as? Int == 149)
            #expect((shown.object["summary"] as? [String: Any])?["distance_m"] as? Double == 3002.9)
        }
    }

    @Test("runs are listed newest first and paged; shown as GPX; deleted with their chunks", arguments: Backend.allCases)
    func listShowGPXDelete(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            let older = Track.runID()
            let newer = Track.runID()
            for (run, start) in [(older, "2026-05-09T07:30:00.000Z"), (newer, "2026-05-10T07:30:00.000Z")] {
                #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(3)), token: token).status == .created)
                var summary = Track.summary(chunks: 1, start: start)
                summary["end_time"] = "2026-05-10T08:00:00.000Z"
                #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: token, summary).status == .created)
            }
            let list = try await cloud.request(.get, "/v1/runs", token: token)
            let runs = list.object["runs"] as? [[String: Any]] ?? []
            #expect(runs.compactMap { $0["run_id"] as? String } == [newer, older])
            #expect((runs.first?["summary"] as? [String: Any])?["state"] as? String == "finished")
            let page = try await cloud.request(.get, "/v1/runs?limit=1&offset=1", token: token)
            #expect((page.object["runs"] as? [[String: Any]])?.compactMap { $0["run_id"] as? String } == [older])
            #expect(try await cloud.request(.get, "/v1/runs?limit=0", token: token).errorMessage.contains("'limit'"))

            let gpx = try await cloud.request(.get, "/v1/runs/\(newer)/gpx", token: token)
            #expect(gpx.status == .ok)
            #expect(gpx.headers[.contentType] == "application/gpx+xml")
            #expect(gpx.text.contains(#"<gpx version="1.1""#))
            #expect(gpx.text.components(separatedBy: "<trkpt ").count - 1 == 3)
            // Export's GPXWriter, the one GPX writer (pacerctl export writes the same).
            #expect(gpx.text.contains(#"<trkpt lat="45.5035034" lon="9.1794900">"# + "\n        <time>2026-05-10T07:30:00.000Z</time>"))
            #expect(gpx.text.contains("<gpxtpx:hr>140</gpxtpx:hr>"))

            #expect(try await cloud.request(.delete, "/v1/runs/\(newer)", token: token).status == .noContent)
            #expect(try await cloud.request(.get, "/v1/runs/\(newer)", token: token).status == .notFound)
            #expect(try await cloud.request(.delete, "/v1/runs/\(newer)", token: token).status == .notFound)
            let counts = try await cloud.store.counts()
            #expect(counts.runs == 1)
            #expect(counts.chunks == 1)
        }
    }
}
