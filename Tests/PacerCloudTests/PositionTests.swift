import HummingbirdTesting
import PacerCloud
import Testing

@Suite("pacer-cloud: live position", .timeLimit(.minutes(10)))
struct PositionTests {
    @Test("the newest position is kept; an older one is ignored", arguments: Backend.allCases)
    func newestWins(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7")
            #expect(try await cloud.request(.get, "/v1/position", token: token).status == .notFound)
            let newer = try await cloud.json(.put, "/v1/position", token: token,
                                             ["time": "2026-05-10T07:31:00.000Z", "lat": 45.5, "lon": 9.2, "heart_rate": 150])
            #expect(newer.status == .ok)
            #expect(newer.object["stored"] as? Bool == true)
            let older = try await cloud.json(.put, "/v1/position", token: token,
                                             ["time": "2026-05-10T07:30:00.000Z", "lat": 40.0, "lon": 8.0])
            #expect(older.status == .ok)
            #expect(older.object["stored"] as? Bool == false)
            let shown = try await cloud.request(.get, "/v1/position", token: token)
            #expect(shown.object["lat"] as? Double == 45.5)
            #expect(shown.object["heart_rate"] as? Int == 150)
            #expect(try await cloud.store.counts().positions == 1)
        }
    }
}
