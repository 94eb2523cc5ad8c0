import CloudModel
import CloudStore
import HummingbirdTesting
import PacerCloud
import Testing

@Suite("pacer-cloud: authentication", .timeLimit(.minutes(10)))
struct AuthTests {
    @Test("a /v1 route without a token or with a wrong one is 401 with a JSON error", arguments: Backend.allCases)
    func unauthorized(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            _ = try await cloud.addDevice("pacer-7")
            for token in [nil, "not-a-token"] as [String?] {
                let response = try await cloud.request(.get, "/v1/runs", token: token)
                #expect(response.status == .unauthorized)
                #expect(response.errorCode == "unauthorized")
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
            }
            let malformed = try await cloud.request(.get, "/v1/runs", token: nil, headers: [.authorization: "Basic eDp5"])
            #expect(malformed.status == .unauthorized)
            #expect(malformed.errorMessage.contains("Bearer"))
            let health = try await cloud.request(.get, "/health", token: nil)
            #expect(health.status == .ok)
        }
    }

    @Test("a device's token does not reach another device's runs", arguments: Backend.allCases)
    func devicesAreSeparate(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let a = try await cloud.addDevice("a")
            let b = try await cloud.addDevice("b")
            let run = Track.runID()
            #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(5)), token: a).status == .created)
            #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: a, Track.summary(chunks: 1)).status == .created)
            #expect(try await cloud.request(.get, "/v1/runs/\(run)", token: a).status == .ok)

            #expect(try await cloud.request(.get, "/v1/runs/\(run)", token: b).status == .notFound)
            #expect(try await cloud.request(.get, "/v1/runs/\(run)/gpx", token: b).status == .notFound)
            #expect(try await cloud.request(.delete, "/v1/runs/\(run)", token: b).status == .notFound)
            let list = try await cloud.request(.get, "/v1/runs", token: b)
            #expect((list.object["runs"] as? [Any])?.count == 0)
            // B may use the same run id for a run of its own without touching A's.
            #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(3)), token: b).status == .created)
            #expect(try await cloud.request(.get, "/v1/runs/\(run)", token: a).status == .ok)
        }
    }

    @Test("tokens are stored hashed, and device names are unique", arguments: Backend.allCases)
    func tokensHashed(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let token = try await cloud.addDevice("pacer-7", email: "a@example.org")
            #expect(token.count >= 43)
            #expect(try await cloud.store.devices.device(tokenHash: token) == nil)
            #expect(try await cloud.store.devices.device(tokenHash: Tokens.hash(token))?.name == "pacer-7")
            await #expect(throws: StoreError.self) { _ = try await cloud.addDevice("pacer-7") }
            #expect(try await cloud.store.devices.devices().map(\.name) == ["pacer-7"])
        }
    }
}
