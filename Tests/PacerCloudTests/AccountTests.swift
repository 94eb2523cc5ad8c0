import CloudModel
import CloudStore
import Foundation
import HummingbirdTesting
import PacerCloud
import PacerTestSupport
import Testing

@Suite("pacer-cloud: accounts in the store", .timeLimit(.minutes(10)))
struct AccountTests {
    /// bcrypt's minimum cost: the tests hash many times, and what is tested is the same at any cost.
    static let cost: UInt8 = 4
    static let password = "correct horse battery"

    static func create(_ cloud: Cloud, _ email: String, password: String = password) async throws -> Account {
        try await Accounts.create(store: cloud.store, email: email, password: password, displayName: nil, cost: cost)
    }

    @Test("an account's address is normalised and unique; the password is kept only as its bcrypt hash", arguments: Backend.allCases)
    func createAndAuthenticate(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let account = try await Self.create(cloud, "  Ann.Runner@Example.ORG ")
            #expect(account.email == "ann.runner@example.org")
            #expect(account.displayName == "ann.runner" && account.timezone == "UTC" && !account.confirmed)
            let stored = try #require(try await cloud.store.accounts.account(email: "ann.runner@example.org"))
            #expect(stored.account == account)
            #expect(stored.passwordHash.hasPrefix("$2") && !stored.passwordHash.contains(Self.password))

            await #expect(throws: StoreError.self) { try await Self.create(cloud, "ANN.RUNNER@example.org") }
            #expect(try await cloud.store.accounts.accounts().count == 1)

            #expect(try await Accounts.authenticate(store: cloud.store, email: "Ann.Runner@example.org", password: Self.password, cost: Self.cost) == account)
            #expect(try await Accounts.authenticate(store: cloud.store, email: account.email, password: Self.password + "!", cost: Self.cost) == nil)
            #expect(try await Accounts.authenticate(store: cloud.store, email: "nobody@example.org", password: Self.password, cost: Self.cost) == nil)
            // bcrypt stops at a NUL: the password with anything after one must not pass.
            #expect(try await Accounts.authenticate(store: cloud.store, email: account.email, password: Self.password + "\0junk", cost: Self.cost) == nil)

            #expect(try await cloud.store.accounts.confirmAccount(id: account.id))
            #expect(try await cloud.store.accounts.account(id: account.id)?.confirmed == true)
            #expect(try await !cloud.store.accounts.confirmAccount(id: "no-such-id"))
        }
    }

    @Test("bad fields are refused, each naming its field, and nothing is stored", arguments: Backend.allCases)
    func refusals(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let cases: [(email: String, password: String, name: String?, zone: String, field: String, says: String)] = [
                ("ann", Self.password, nil, "UTC", "email", "not an e-mail address"),
                ("ann@example", Self.password, nil, "UTC", "email", "not an e-mail address"),
                ("ann@example.org\r\nBcc: x@y.z", Self.password, nil, "UTC", "email", "not an e-mail address"),
                ("", Self.password, nil, "UTC", "email", "empty"),
                ("ann@example.org", "short pass", nil, "UTC", "password", "shorter than 12"),
                ("ann@example.org", "Password1234", nil, "UTC", "password", "most common"),
                ("ann@example.org", "abababababababab", nil, "UTC", "password", "most common"),
                ("ann@example.org", String(repeating: "é", count: 40), nil, "UTC", "password", "longer than 72 bytes"),
                ("ann@example.org", Self.password, "two\nlines", "UTC", "display_name", "one line"),
                ("ann@example.org", Self.password, nil, "Mars/Olympus", "timezone", "not a time zone"),
            ]
            for item in cases {
                do {
                    _ = try await Accounts.create(store: cloud.store, email: item.email, password: item.password, displayName: item.name,
                                                  timezone: item.zone, cost: Self.cost)
                    Issue.record("accepted \(item)")
                } catch let error as AccountInputError {
                    #expect(error.field == item.field, "\(item): \(error)")
                    #expect(error.message.contains(item.says), "\(item): \(error)")
                }
            }
            #expect(try await cloud.store.accounts.accounts().isEmpty)
        }
    }

    @Test("a device assigned to an account: deleting the account deletes it and its runs and alerts, and nobody else's",
          arguments: Backend.allCases)
    func deleteAccountTakesItsDevices(backend: Backend) async throws {
        try await Cloud.with(backend) { cloud in
            let ann = try await Self.create(cloud, "ann@example.org")
            let bob = try await Self.create(cloud, "bob@example.org")
            let annToken = try await cloud.addDevice("ann-pacer")
            let bobToken = try await cloud.addDevice("bob-pacer")
            #expect(try await cloud.store.devices.assignDevice(name: "ann-pacer", accountID: ann.id))
            #expect(try await cloud.store.devices.assignDevice(name: "bob-pacer", accountID: bob.id))
            #expect(try await !cloud.store.devices.assignDevice(name: "nobody", accountID: ann.id))
            #expect(try await cloud.store.devices.devices().first { $0.name == "ann-pacer" }?.accountID == ann.id)
            for token in [annToken, bobToken] {
                let runID = Track.runID()
                #expect(try await cloud.putChunk(runID, 0, Track.chunk(Track.samples(5)), token: token).status == .created)
                #expect(try await cloud.json(.put, "/v1/runs/\(runID)", token: token, Track.summary(chunks: 1)).status == .created)
                #expect(try await cloud.json(.post, "/v1/alerts", token: token, AlertTests.message(Track.runID(), 0)).status == .created)
            }
            let removed = try #require(try await cloud.store.deleteAccount(id: ann.id))
            #expect(removed.accounts == 1 && removed.devices == 1 && removed.runs == 1 && removed.chunks == 1)
            #expect(removed.alerts == 1 && removed.alertMessages == 1)
            #expect(try await cloud.store.deleteAccount(id: ann.id) == nil)
            #expect(try await cloud.request(.get, "/v1/runs", token: annToken).status == .unauthorized)
            let left = try await cloud.store.counts()
            #expect(left.accounts == 1 && left.devices == 1 && left.runs == 1 && left.alerts == 1)
            #expect(try await cloud.request(.get, "/v1/runs", token: bobToken).status == .ok)
        }
    }
}

@Suite("pacer-cloud: schema upgrade to accounts", .timeLimit(.minutes(10)))
struct AccountUpgradeTests {
    /// A version 3 database (before accounts): its device table, one device, its version.
    static let version3 = [
        """
        CREATE TABLE device (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL UNIQUE, email TEXT, webhook TEXT,
                             created_at TEXT NOT NULL, webhook_secret TEXT)
        """,
        "INSERT INTO device (id, name, token_sha256, created_at) VALUES ('d1', 'pacer-7', 'abc', '2026-05-10T07:30:00.000Z')",
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        "INSERT INTO schema_version (version) VALUES (3)",
    ]

    @Test("a version 3 database gains accounts, sessions and device.account_id; its device is kept, owned by nobody",
          arguments: Backend.allCases)
    func upgrade(backend: Backend) async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-upgrade")
        let store: CloudStore
        switch backend {
        case .sqlite:
            let path = directory.file("cloud.db")
            let made = try await offPool { try DaemonFixture.runBlocking("/usr/bin/sqlite3", [path, Self.version3.joined(separator: ";\n")]) }
            #expect(made.status == 0, "\(made.stderr)")
            store = try await CloudStore.open(.sqlite(path: path))
        case .postgres:
            let url = try await Cloud.freshPostgresDatabase()
            let made = try await offPool {
                try DaemonFixture.runBlocking("/usr/lib/postgresql/15/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-c", Self.version3.joined(separator: ";\n")])
            }
            #expect(made.status == 0, "\(made.stderr)")
            store = try await CloudStore.open(DatabaseURL(url))
        }
        let check: @Sendable () async throws -> Void = {
            try await store.migrate()
            let devices = try await store.devices.devices()
            #expect(devices.map(\.name) == ["pacer-7"] && devices.first?.accountID == nil)
            let account = try await Accounts.create(store: store, email: "ann@example.org", password: AccountTests.password, displayName: nil,
                                                    cost: AccountTests.cost)
            #expect(try await store.devices.assignDevice(name: "pacer-7", accountID: account.id))
            #expect(try await store.devices.devices().first?.accountID == account.id)
            try await store.accounts.addSession(StoredSession(idHash: "h", accountID: account.id, csrf: "c", createdMs: 1, seenMs: 1))
            #expect(try await store.accounts.session(idHash: "h")?.accountID == account.id)
            // Schema 6: device.last_seen_ms and link codes.
            try await store.devices.touchDevice(id: "d1", seenMs: 5_000)
            #expect(try await store.devices.devices().first?.lastSeenMs == 5_000)
            try await store.devices.addLinkCode(hash: "code", accountID: account.id, expiresMs: 10, nowMs: 1)
            #expect(try await store.counts().linkCodes == 1)
            // Migrating again changes nothing.
            try await store.migrate()
            #expect(try await store.counts().accounts == 1)
        }
        try await store.withRunning(check)
    }
}
