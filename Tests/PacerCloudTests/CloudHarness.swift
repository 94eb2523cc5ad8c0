import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PacerCloud
import PacerContract
import PacerTestSupport
import Synchronization
import Testing

/// The two stores every API test runs against.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }
}

/// pacer-cloud in process (HummingbirdTesting's router client) on a fresh store: a SQLite file
/// in a temporary directory, or a fresh database of its own on one private PostgreSQL server
/// that the process's tests share (started once, stopped by PID when the test process exits:
/// thirty servers starting at once in a parallel run starved every other suite of CPU).
/// PostgreSQL missing is a failure: tools/setup installs it.
struct Cloud: Sendable {
    private static let sharedServer: Result<PostgresServer, ChildProcessError> = Result { () throws(ChildProcessError) in
        // Every test's pool may hold a few connections at once: room for all of them.
        let server = try PostgresServer(settings: ["max_connections=1000"])
        sharedServerPID.withLock { $0 = server }
        // A static is never deinitialised: stop it and remove its data directory (most of a
        // gigabyte once the suites have run) here, or every test run leaves one in /tmp.
        atexit {
            guard let server = Cloud.sharedServerPID.withLock({ $0 }) else { return }
            server.stop()
            server.directory.remove()
        }
        return server
    }
    private static let sharedServerPID = Mutex<PostgresServer?>(nil)

    /// A new database on the shared server, for one test.
    static func freshPostgresDatabase() async throws -> String {
        try await offPool {
            let server = try sharedServer.get()
            let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            try server.createDatabase(name)
            return server.url(database: name)
        }
    }

    let client: any TestClientProtocol
    let store: CloudStore
    /// The SQLite file (nil for PostgreSQL), for tests that break it on purpose.
    var databasePath: String? = nil

    static func with(_ backend: Backend, configuration: CloudConfiguration = CloudConfiguration(),
                     logger: Logger = Logger(label: "pacer-cloud"), now: @escaping @Sendable () -> Duration = RateLimiter.monotonicNow,
                     wallClock: @escaping @Sendable () -> Int64 = SessionSettings.systemClock, testing: TestingSetup = .router,
                     postgresURL: String? = nil, fixture: String = #function, _ body: @Sendable (Cloud) async throws -> Void) async throws {
        let progress = ProgressBoard.enter("Cloud.with(\(backend)) in \(fixture)", phase: "opening the store")
        defer { ProgressBoard.leave(progress) }
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-test")
        let store: CloudStore
        switch backend {
        case .sqlite:
            store = try await CloudStore.open(.sqlite(path: directory.file("cloud.db")))
        case .postgres:
            // A few connections each: some hundred fixtures share one server (max_connections
            // 1000) in the start burst, and PostgresNIO's default of 20 each could exhaust it.
            // `postgresURL`: a database the test prepared (streets loaded), else a fresh one.
            let url = if let postgresURL { postgresURL } else { try await freshPostgresDatabase() }
            store = try await CloudStore.open(DatabaseURL(url + "?pool_max_conns=4"))
        }
        ProgressBoard.step(progress, "starting the application (services, migration)")
        // HummingbirdTesting's live client opens its connection when the test starts; a test
        // that first spent seconds on bcrypt in a loaded run left it silent past the 10 s
        // header timeout, and the server rightly closed it ("I/O on closed channel"). The
        // timeouts are ConnectionLimitTests' to test, against a live process of their own.
        var configuration = configuration
        if configuration.connections.headerTimeout == ConnectionLimits.defaults.headerTimeout {
            configuration.connections.headerTimeout = .seconds(600)
        }
        if configuration.connections.idleTimeout == ConnectionLimits.defaults.idleTimeout {
            configuration.connections.idleTimeout = .seconds(600)
        }
        let app = try CloudApplication.make(store: store, configuration: configuration, logger: logger, now: now, wallClock: wallClock)
        let path = backend == .sqlite ? directory.file("cloud.db") : nil
        do {
            try await app.test(testing) { client in
                ProgressBoard.step(progress, "in the test's body")
                try await body(Cloud(client: client, store: store, databasePath: path))
                ProgressBoard.step(progress, "stopping the application (services)")
            }
        } catch {
            ProgressBoard.step(progress, "closing the store after \(error)")
            await store.database.close()
            throw error
        }
        ProgressBoard.step(progress, "closing the store")
        await store.database.close()
    }

    /// Registers a device; its bearer token.
    func addDevice(_ name: String, email: String? = nil, webhook: String? = nil) async throws -> String {
        try await CloudApplication.addDevice(store: store, name: name, email: email, webhook: webhook).1
    }

    @discardableResult
    func request(_ method: HTTPRequest.Method, _ uri: String, token: String?, body: [UInt8]? = nil,
                 headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) })
    }

    func json(_ method: HTTPRequest.Method, _ uri: String, token: String?, _ object: [String: Any],
              headers: HTTPFields = [:]) async throws -> TestResponse {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        var headers = headers
        headers[.contentType] = "application/json"
        return try await request(method, uri, token: token, body: Array(data), headers: headers)
    }

    func putChunk(_ runID: String, _ seq: Int, _ body: [UInt8], token: String, gzip: Bool = false) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/x-pacer-track"]
        if gzip { headers[.contentEncoding] = "gzip" }
        return try await request(.put, "/v1/runs/\(runID)/chunks/\(seq)", token: token, body: body, headers: headers)
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }

    /// The body as a JSON object (empty when it is not one).
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
    }

    /// `error.code` and `error.message` of an API error.
    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String { (object["error"] as? [String: Any])?["message"] as? String ?? "" }
}

/// Track data as a device makes it.
enum Track {
    static let start: Int64 = 1_778_398_200_000  // 2026-05-10T07:30:00Z

    static func samples(_ count: Int, from first: Int = 0, heartRate: Bool = true) -> [ChunkSample] {
        (first..<first + count).map { (i: Int) -> ChunkSample in
            let step = Double(i)
            let time: Int64 = start + Int64(i) * 1000
            let lat: Double = 45.5035034 + step * 0.00001
            let lon: Double = 9.1794900 + step * 0.00001
            let hr: Int? = heartRate ? 140 + i % 10 : nil
            return ChunkSample(timeMs: time, lat: lat, lon: lon, speedMps: 3.1, distanceM: step * 3.1, moving: i > 0, heartRate: hr)
        }
    }

    static func chunk(_ samples: [ChunkSample]) -> [UInt8] {
        Array(samples.map(TrackChunkFormat.line).map { $0 + "\n" }.joined().utf8)
    }

    static func summary(chunks: Int, start: String = "2026-05-10T07:30:00.000Z", distance: Double = 3002.9) -> [String: Any] {
        ["start_time": start, "end_time": "2026-05-10T07:47:00.000Z", "distance_m": distance, "moving_time_s": 941.0,
         "elapsed_time_s": 1015.0, "avg_pace_s_per_km": 313.4, "max_speed_mps": 3.537, "hr_avg": 148.2, "hr_max": 171,
         "chunks": chunks, "state": "finished"]
    }

    static func runID() -> String { UUID().uuidString.lowercased() }
}
