@testable import CloudModel
@testable import CloudStore
import PacerTestSupport
import Testing
@testable import PacerCloud

/// The device repository written once (issue 32), on both backends: the link code's five
/// outcomes, revocation, and the last-seen time that never moves back.
@Suite(.timeLimit(.minutes(10))) struct DeviceRepositoryTests {
    /// A migrated database of each kind, for the body's time.
    static func withDatabase(_ backend: Backend, _ body: @Sendable (StoreDatabase) async throws -> Void) async throws {
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory()
            let database = try await StoreDatabase.sqlite(path: directory.file("cloud.db"))
            try await Migrator.migrate(database, nowMs: 0)
            try await body(database)
            await database.close()
        case .postgres:
            let database = try await DatabaseURL(try await Cloud.freshPostgresDatabase()).openDatabase()
            try await database.withRunning {
                try await Migrator.migrate(database, nowMs: 0)
                try await body(database)
            }
        }
    }

    @Test("a link code links once, before it expires, and never gives away another account's device name", arguments: Backend.allCases)
    func linkOutcomes(_ backend: Backend) async throws {
        try await Self.withDatabase(backend) { database in
            let devices = DeviceRepository(database: database)
            let watch = Device(id: "d1", name: "ann-watch", email: nil, webhook: nil, createdAt: "2026-01-01T00:00:00Z")
            #expect(try await devices.linkDevice(codeHash: "nope", nowMs: 10, device: watch, tokenHash: "t1") == .unknownCode)

            try await devices.addLinkCode(hash: "c1", accountID: "ann", expiresMs: 100, nowMs: 0)
            #expect(try await devices.linkDevice(codeHash: "c1", nowMs: 100, device: watch, tokenHash: "t1") == .expiredCode)
            guard case .linked(let linked, relinked: false) = try await devices.linkDevice(codeHash: "c1", nowMs: 50, device: watch, tokenHash: "t1") else {
                Issue.record("not linked")
                return
            }
            #expect(linked.accountID == "ann" && linked.lastSeenMs == 50)
            #expect(try await devices.linkDevice(codeHash: "c1", nowMs: 60, device: watch, tokenHash: "t2") == .usedCode)
            #expect(try await devices.device(tokenHash: "t1")?.name == "ann-watch")

            // Ann links the same name again: a new token for her own device.
            try await devices.addLinkCode(hash: "c2", accountID: "ann", expiresMs: 1000, nowMs: 70)
            let again = try await devices.linkDevice(codeHash: "c2", nowMs: 80, device: Device(id: "d2", name: "ann-watch", email: nil, webhook: nil,
                                                                                            createdAt: "x"), tokenHash: "t3")
            #expect(again == .linked(try #require(try await devices.device(tokenHash: "t3")), relinked: true))
            #expect(try await devices.device(tokenHash: "t1") == nil, "the old token is gone")

            // Bob's code cannot take Ann's device name, and stays unused.
            try await devices.addLinkCode(hash: "c3", accountID: "bob", expiresMs: 1000, nowMs: 90)
            #expect(try await devices.linkDevice(codeHash: "c3", nowMs: 95, device: watch, tokenHash: "t4") == .nameTaken)
            let bobs = Device(id: "d3", name: "bob-watch", email: nil, webhook: nil, createdAt: "x")
            guard case .linked = try await devices.linkDevice(codeHash: "c3", nowMs: 96, device: bobs, tokenHash: "t5") else {
                Issue.record("bob's code was used up by the refused attempt")
                return
            }
            #expect(try await devices.devices().map(\.name) == ["ann-watch", "bob-watch"])
            #expect(try await devices.devices(accountID: "bob").map(\.id) == ["d3"])
        }
    }

    @Test("revoking and unlinking make the token useless; last seen never moves back", arguments: Backend.allCases)
    func revocationAndLastSeen(_ backend: Backend) async throws {
        try await Self.withDatabase(backend) { database in
            let devices = DeviceRepository(database: database)
            let device = Device(id: "d1", name: "pacer-1", email: "ann@example.org", webhook: nil, createdAt: "2026-01-01T00:00:00Z")
            try await devices.addDevice(device, tokenHash: "t1", webhookSecret: "s")
            await #expect(throws: StoreError.self) { try await devices.addDevice(device, tokenHash: "t2", webhookSecret: nil) }
            try await devices.touchDevice(id: "d1", seenMs: 500)
            try await devices.touchDevice(id: "d1", seenMs: 400)
            #expect(try await devices.device(tokenHash: "t1")?.lastSeenMs == 500)

            #expect(try await devices.assignDevice(name: "pacer-1", accountID: "ann"))
            #expect(try await !devices.assignDevice(name: "pacer-2", accountID: "ann"))
            #expect(try await !devices.unlinkDevice(id: "d1", accountID: "bob"))
            #expect(try await devices.unlinkDevice(id: "d1", accountID: "ann"))
            #expect(try await devices.device(tokenHash: "t1") == nil)
            #expect(try await devices.devices().first?.revoked == true)
            #expect(try await !devices.revokeDevice(name: "pacer-2"))
        }
    }

    @Test("a record's property names read the store's column names, as SQLKit's snake-case conversion reads them")
    func columnNames() {
        for (key, column) in [("startMs", "start_ms"), ("hrSeconds", "hr_seconds"), ("runID", "run_id"), ("lastURLPath", "last_url_path"),
                              ("id", "id"), ("restingBpm", "resting_bpm"), ("URL", "url")] {
            #expect(SnakeCaseColumns.snakeCase(key) == column, "\(key)")
        }
    }
}
