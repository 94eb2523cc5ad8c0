import Logging
import NIOCore
import NIOPosix
import PostgresKit
import PostgresNIO
import SQLiteKit
import SQLKit
import ServiceLifecycle
import Synchronization

/// The database pacer-cloud keeps everything in, SQLite or PostgreSQL, through SQLKit: a query is
/// written once (SQLKit binds its values in each dialect's placeholders and decodes rows by column
/// name), and what the two dialects spell differently is `Dialect`'s.
///
/// Every write is a `transaction`: all of it or none. SQLite has one writer connection, taken in
/// turn (`BEGIN IMMEDIATE`: a writer holds the lock from its first statement, so two never
/// deadlock upgrading a read lock), and a few reader connections (WAL: reads never wait for the
/// writer). PostgreSQL takes a pooled connection for each; races between instances are settled
/// by the database (row locks, `ON CONFLICT`).
public final class StoreDatabase: Service, Sendable {
    public let dialect: Dialect
    private let backend: Backend
    let logger: Logger
    /// Each read's and transaction's time, for /metrics.
    public let queries = QueryObserver()
    /// Set when `run()` starts: PostgreSQL's pool answers only then, and the application starts
    /// it and migrates at the same time.
    private let running = Atomic<Bool>(false)

    private enum Backend: Sendable {
        case sqlite(SQLiteConnections)
        /// `probe`: a single connection made before migrating, so that a server that cannot be
        /// reached, has no TLS, or whose certificate does not verify is one clear error at once
        /// (the pool would only retry until its circuit breaker trips). `describedAs`:
        /// "user@host:port/database (sslmode=...)" for messages, never the password.
        case postgres(PostgresClient, probe: PostgresConnection.Configuration?, describedAs: String)
    }

    /// An SQLite file (created when missing), in WAL mode.
    public static func sqlite(path: String, readers: Int = 4, logger: Logger = Logger(label: "pacer-cloud.sqlite")) async throws -> StoreDatabase {
        StoreDatabase(dialect: .sqlite, backend: .sqlite(try await SQLiteConnections.open(path: path, readers: readers, logger: logger)), logger: logger)
    }

    /// A PostgreSQL pool; its connections work only while `run()` runs (a Service of the application).
    public static func postgres(_ client: PostgresClient, probe: PostgresConnection.Configuration? = nil, describedAs: String = "PostgreSQL",
                                logger: Logger = Logger(label: "pacer-cloud.postgres")) -> StoreDatabase {
        StoreDatabase(dialect: .postgres, backend: .postgres(client, probe: probe, describedAs: describedAs), logger: logger)
    }

    private init(dialect: Dialect, backend: Backend, logger: Logger) {
        self.dialect = dialect
        self.backend = backend
        self.logger = logger
    }

    /// PostgreSQL's pool, for what talks to the server itself (LISTEN/NOTIFY); nil on SQLite.
    public var postgresClient: PostgresClient? {
        if case .postgres(let client, _, _) = backend { return client }
        return nil
    }

    /// Runs PostgreSQL's pool until cancelled or shut down gracefully (the HTTP server and the
    /// forwarder, started after it, stop first).
    public func run() async throws {
        running.store(true, ordering: .releasing)
        switch backend {
        case .sqlite:
            // Nothing runs: the connections stay open until `close()` (or the last reference goes).
            try? await gracefulShutdown()
        case .postgres(let client, _, _):
            await cancelWhenGracefulShutdown { await client.run() }
        }
    }

    /// Runs `body` with the database running, then stops it.
    public func withRunning<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// PostgreSQL: the server reached with the URL's TLS (one clear error if not), and the pool
    /// running. Called before migrating.
    func checkReachable() async throws {
        guard case .postgres(_, let probe, let describedAs) = backend else { return }
        if let probe {
            do {
                let connection = try await PostgresConnection.connect(configuration: probe, id: 0, logger: logger)
                try await connection.close()
            } catch {
                throw StoreError("cannot connect to PostgreSQL \(describedAs): \(Self.why(error))")
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !running.load(ordering: .acquiring), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    private static func why(_ error: any Error) -> String {
        let detail = String(reflecting: error)
        if let error = error as? PSQLError, error.code == .sslUnsupported {
            return "the server does not offer TLS, which the URL's sslmode requires"
        } else if detail.contains("CERTIFICATE_VERIFY_FAILED") {
            return "its TLS certificate does not verify (not signed by sslrootcert, or the system's CAs, or not for this host)"
        } else if let error = error as? PSQLError, let underlying = error.underlying {
            return String(describing: underlying)
        }
        return detail
    }

    /// Reads outside a transaction: each statement sees committed data.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        defer { queries.record(store: dialect.rawValue, duration: .now - started) }
        switch backend {
        case .sqlite(let connections):
            return try await connections.withReader { try await body($0.sql(queryLogLevel: nil)) }
        case .postgres(let client, _, _):
            return try await client.withConnection { try await body($0.sql(queryLogLevel: nil)) }
        }
    }

    /// A connection of either kind, for reads past SQLKit (`readColumns`).
    enum ReadConnection {
        case sqlite(SQLiteConnection)
        case postgres(PostgresConnection)
    }

    /// As `read`, with the connection itself.
    func readConnection<T: Sendable>(_ body: @escaping @Sendable (ReadConnection) async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        defer { queries.record(store: dialect.rawValue, duration: .now - started) }
        switch backend {
        case .sqlite(let connections):
            return try await connections.withReader { try await body(.sqlite($0)) }
        case .postgres(let client, _, _):
            return try await client.withConnection { try await body(.postgres($0)) }
        }
    }

    /// One transaction: committed when `body` returns, rolled back when it throws.
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let started = ContinuousClock.now
        defer { queries.record(store: dialect.rawValue, duration: .now - started) }
        switch backend {
        case .sqlite(let connections):
            return try await connections.withWriter { connection in
                let database = connection.sql(queryLogLevel: nil)
                try await database.raw("BEGIN IMMEDIATE").run()
                do {
                    let value = try await body(database)
                    try await database.raw("COMMIT").run()
                    return value
                } catch {
                    try? await database.raw("ROLLBACK").run()
                    throw error
                }
            }
        case .postgres(let client, _, _):
            return try await client.withTransaction(logger: logger) { try await body($0.sql(queryLogLevel: nil)) }
        }
    }

    /// Closes SQLite's connections; PostgreSQL's pool stops with `run()`.
    public func close() async {
        if case .sqlite(let connections) = backend { await connections.close() }
    }
}

/// The SQLite file's connections: one writer, lent to one transaction at a time, and up to
/// `maxReaders` readers, opened when reads overlap (each is three descriptors: the file, its WAL
/// and shared memory; a process holding many stores, as the tests do, must not open them all).
///
/// Every SQLite call blocks its thread, for up to the busy timeout while another process holds
/// the lock, so the connections run on threads of their own, one per connection that can be
/// lent at once: on SQLiteNIO's default, NIO's shared blocking pool (one thread per core), two
/// waiting connections held every other store and NIO's file I/O with them.
final class SQLiteConnections: Sendable {
    private let path: String
    private let logger: Logger
    private let threads: NIOThreadPool
    private let writer: SQLiteConnection
    private let writerGate = AsyncGate(permits: 1)
    private let readerGate: AsyncGate
    /// Every reader opened, and those not lent out.
    private let readers = Mutex<(all: [SQLiteConnection], idle: [SQLiteConnection])>(([], []))
    private let closed = Atomic<Bool>(false)

    private init(path: String, logger: Logger, threads: NIOThreadPool, writer: SQLiteConnection, maxReaders: Int) {
        self.path = path
        self.logger = logger
        self.threads = threads
        self.writer = writer
        readerGate = AsyncGate(permits: max(1, maxReaders))
    }

    deinit {
        // SQLiteNIO asserts that a connection is closed before it goes: closed here when nobody
        // called close(), by a task that holds them (and their threads) until they are.
        guard !closed.load(ordering: .acquiring) else { return }
        let (connections, threads) = ([writer] + readers.withLock { $0.all }, threads)
        Task {
            for connection in connections { try? await connection.close() }
            try? await threads.shutdownGracefully()
        }
    }

    static func open(path: String, readers maxReaders: Int, logger: Logger) async throws -> SQLiteConnections {
        let threads = NIOThreadPool(numberOfThreads: 1 + max(1, maxReaders))
        threads.start()
        let writer: SQLiteConnection
        do {
            writer = try await open(path: path, threads: threads, logger: logger)
        } catch {
            try? await threads.shutdownGracefully()
            throw error
        }
        do {
            // WAL: readers see the last commit while the writer writes.
            for pragma in ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"] {
                try await writer.sql().raw(SQLQueryString(pragma)).run()
            }
            return SQLiteConnections(path: path, logger: logger, threads: threads, writer: writer, maxReaders: maxReaders)
        } catch {
            try? await writer.close()
            try? await threads.shutdownGracefully()
            throw error
        }
    }

    /// A connection on the store's threads, with a busy timeout: it replaces SQLiteNIO's handler
    /// that retries at once, forever; another process (a backup, the sqlite3 shell) makes it
    /// wait up to 10 s, then fail with "database is locked".
    private static func open(path: String, threads: NIOThreadPool, logger: Logger) async throws -> SQLiteConnection {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), threadPool: threads, logger: logger,
                                                         on: MultiThreadedEventLoopGroup.singleton.any())
        do {
            try await connection.sql().raw("PRAGMA busy_timeout = 10000").run()
            return connection
        } catch {
            try? await connection.close()
            throw error
        }
    }

    func withWriter<T: Sendable>(_ body: @Sendable (SQLiteConnection) async throws -> T) async throws -> T {
        try await writerGate.enter()
        defer { writerGate.leave() }
        return try await body(writer)
    }

    func withReader<T: Sendable>(_ body: @Sendable (SQLiteConnection) async throws -> T) async throws -> T {
        try await readerGate.enter()
        defer { readerGate.leave() }
        let reader: SQLiteConnection
        if let idle = readers.withLock({ $0.idle.popLast() }) {
            reader = idle
        } else {
            reader = try await Self.open(path: path, threads: threads, logger: logger)
            readers.withLock { $0.all.append(reader) }
        }
        defer { readers.withLock { $0.idle.append(reader) } }
        return try await body(reader)
    }

    /// Closes every connection, once.
    func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        for connection in [writer] + readers.withLock({ $0.all }) { try? await connection.close() }
        try? await threads.shutdownGracefully()
    }
}
