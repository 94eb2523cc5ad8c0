import Logging
import NIOCore
import PacerContract
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The store in PostgreSQL, for several pacer-cloud instances sharing one database. The client
/// is a connection pool that only works while `run()` runs: it is a Service of the application
/// (or run by `withRunning`). Races between instances are settled by the database: inserts are
/// `ON CONFLICT DO NOTHING` and a transaction re-reads what won.
public final class PostgresCloudStore: CloudStore, Service {
    public let client: PostgresClient
    let logger: Logger
    /// Set when `run()` starts; the migration waits for it, since the application starts the
    /// pool and runs the migration concurrently.
    private let running = Atomic<Bool>(false)

    /// A single connection made before migrating, so that a server that cannot be reached, has
    /// no TLS, or whose certificate does not verify is one clear error at once.
    private let probe: PostgresConnection.Configuration?
    /// "user@host:port/database (sslmode=...)" for messages; never the password.
    private let describedAs: String

    public init(configuration: PostgresClient.Configuration, probe: PostgresConnection.Configuration? = nil,
                describedAs: String = "PostgreSQL", logger: Logger = Logger(label: "pacer-cloud.postgres")) {
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.probe = probe
        self.describedAs = describedAs
        self.logger = logger
    }

    private func checkConnection() async throws {
        guard let probe else { return }
        do {
            let connection = try await PostgresConnection.connect(configuration: probe, id: 0, logger: logger)
            try await connection.close()
        } catch {
            let detail = String(reflecting: error)
            let why: String
            if let error = error as? PSQLError, error.code == .sslUnsupported {
                why = "the server does not offer TLS, which the URL's sslmode requires"
            } else if detail.contains("CERTIFICATE_VERIFY_FAILED") {
                why = "its TLS certificate does not verify (not signed by sslrootcert, or the system's CAs, or not for this host)"
            } else if let error = error as? PSQLError, let underlying = error.underlying {
                why = String(describing: underlying)
            } else {
                why = detail
            }
            throw StoreError("cannot connect to PostgreSQL \(describedAs): \(why)")
        }
    }

    /// Runs the connection pool until cancelled or shut down gracefully (the HTTP server and
    /// the forwarder, started after it, stop first).
    public func run() async throws {
        running.store(true, ordering: .releasing)
        await cancelWhenGracefulShutdown { await self.client.run() }
    }

    /// Runs `body` with the pool running, then stops it.
    public func withRunning<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    public func migrate() async throws {
        try await checkConnection()
        let deadline = ContinuousClock.now + .seconds(10)
        while !running.load(ordering: .acquiring), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try await client.withTransaction(logger: logger) { connection in
            // One instance migrates at a time: concurrent CREATE TABLE IF NOT EXISTS can collide.
            try await connection.query("SELECT pg_advisory_xact_lock(7365872)", logger: logger)
            for statement in Schema.statements(postgres: true) {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            let rows = try await connection.query("SELECT MAX(version) FROM schema_version", logger: logger)
            var version: Int?
            for try await (value) in rows.decode((Int?).self) { version = value }
            if let version, version > Schema.version {
                throw StoreError("the database has schema version \(version); this pacer-cloud knows up to \(Schema.version)")
            }
            if version != Schema.version {
                for statement in Schema.postgresUpgrades {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("DELETE FROM schema_version", logger: logger)
                try await connection.query("INSERT INTO schema_version (version) VALUES (\(Schema.version))", logger: logger)
            }
        }
        // Chunks stored before samples were counted: counted now, a batch per transaction
        // (SKIP LOCKED: instances migrating at once share the work).
        while true {
            let counted = try await client.withTransaction(logger: logger) { connection in
                let rows = try await connection.query(
                    """
                    SELECT device_id, run_id, seq, body, content_encoding FROM chunk WHERE samples IS NULL
                    LIMIT \(Schema.backfillBatch) FOR UPDATE SKIP LOCKED
                    """, logger: logger)
                var found: [(String, String, Int, ByteBuffer, String?)] = []
                for try await row in rows.decode((String, String, Int, ByteBuffer, String?).self) { found.append(row) }
                for (device, runID, seq, body, encoding) in found {
                    let samples = TrackChunkFormat.countSamples(Array(buffer: body), gzip: encoding == "gzip") ?? Int(Int32.max)
                    try await connection.query(
                        "UPDATE chunk SET samples = \(samples) WHERE device_id = \(device) AND run_id = \(runID) AND seq = \(seq)",
                        logger: logger)
                }
                return found.count
            }
            if counted < Schema.backfillBatch { break }
        }
        try await normalizeAccountEmails()
    }

    public func addDevice(_ device: Device, tokenHash: String, webhookSecret: String?) async throws {
        let rows = try await client.query(
            """
            INSERT INTO device (id, name, token_sha256, email, webhook, created_at, webhook_secret)
            VALUES (\(device.id), \(device.name), \(tokenHash), \(device.email), \(device.webhook), \(device.createdAt), \(webhookSecret))
            ON CONFLICT DO NOTHING RETURNING id
            """, logger: logger)
        if try await Self.first(rows, as: String.self) == nil {
            throw StoreError("a device named \(device.name) exists already")
        }
    }

    public func devices() async throws -> [Device] {
        let rows = try await client.query("SELECT id, name, email, webhook, created_at, token_sha256, account_id, last_seen_ms FROM device ORDER BY name", logger: logger)
        return try await Self.devices(rows)
    }

    public func devices(accountID: String) async throws -> [Device] {
        let rows = try await client.query(
            "SELECT id, name, email, webhook, created_at, token_sha256, account_id, last_seen_ms FROM device WHERE account_id = \(accountID) ORDER BY name",
            logger: logger)
        return try await Self.devices(rows)
    }

    public func device(tokenHash: String) async throws -> Device? {
        let rows = try await client.query(
            "SELECT id, name, email, webhook, created_at, token_sha256, account_id, last_seen_ms FROM device WHERE token_sha256 = \(tokenHash)", logger: logger)
        return try await Self.devices(rows).first
    }

    static func devices(_ rows: PostgresRowSequence) async throws -> [Device] {
        var devices: [Device] = []
        for try await (id, name, email, webhook, created, tokenHash, accountID, lastSeenMs)
            in rows.decode((String, String, String?, String?, String, String, String?, Int64?).self) {
            var device = Device(id: id, name: name, email: email, webhook: webhook, createdAt: created)
            device.revoked = tokenHash.hasPrefix(Device.revokedTokenMark)
            device.accountID = accountID
            device.lastSeenMs = lastSeenMs
            devices.append(device)
        }
        return devices
    }

    public func assignDevice(name: String, accountID: String?) async throws -> Bool {
        let rows = try await client.query("UPDATE device SET account_id = \(accountID) WHERE name = \(name) RETURNING id", logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }

    public func touchDevice(id: String, seenMs: Int64) async throws {
        try await client.query(
            "UPDATE device SET last_seen_ms = GREATEST(COALESCE(last_seen_ms, 0), \(seenMs)) WHERE id = \(id)", logger: logger)
    }

    public func unlinkDevice(id: String, accountID: String) async throws -> Bool {
        let rows = try await client.query(
            "UPDATE device SET token_sha256 = \(Device.revokedTokenMark) || id WHERE id = \(id) AND account_id = \(accountID) RETURNING id",
            logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }

    public func addLinkCode(hash: String, accountID: String, expiresMs: Int64, nowMs: Int64) async throws {
        let logger = logger
        let purgeBefore = nowMs - LinkCodes.keptAfterExpiryMs
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "DELETE FROM link_code WHERE (account_id = \(accountID) AND used_ms IS NULL) OR expires_ms < \(purgeBefore)", logger: logger)
            try await connection.query(
                "INSERT INTO link_code (code_sha256, account_id, expires_ms) VALUES (\(hash), \(accountID), \(expiresMs))", logger: logger)
        }
    }

    public func linkDevice(codeHash: String, nowMs: Int64, device: Device, tokenHash: String) async throws -> LinkOutcome {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection async throws -> LinkOutcome in
            // FOR UPDATE: of two instances taking one code at once, the second waits and sees it used.
            let found = try await connection.query(
                "SELECT account_id, expires_ms, used_ms FROM link_code WHERE code_sha256 = \(codeHash) FOR UPDATE", logger: logger)
            var code: (accountID: String, expiresMs: Int64, usedMs: Int64?)?
            for try await row in found.decode((String, Int64, Int64?).self) where code == nil { code = row }
            guard let code else { return .unknownCode }
            if code.usedMs != nil { return .usedCode }
            if code.expiresMs <= nowMs { return .expiredCode }
            let existing = try await Self.devices(try await connection.query(
                "SELECT id, name, email, webhook, created_at, token_sha256, account_id, last_seen_ms FROM device WHERE name = \(device.name) FOR UPDATE",
                logger: logger)).first
            var linked = device
            linked.accountID = code.accountID
            linked.lastSeenMs = nowMs
            var relinked = false
            if let existing {
                guard existing.accountID == code.accountID else { return .nameTaken }
                try await connection.query(
                    "UPDATE device SET token_sha256 = \(tokenHash), last_seen_ms = \(nowMs) WHERE id = \(existing.id)", logger: logger)
                linked = existing
                linked.revoked = false
                linked.lastSeenMs = nowMs
                relinked = true
            } else {
                let inserted = try await connection.query(
                    """
                    INSERT INTO device (id, name, token_sha256, created_at, account_id, last_seen_ms)
                    VALUES (\(device.id), \(device.name), \(tokenHash), \(device.createdAt), \(code.accountID), \(nowMs))
                    ON CONFLICT DO NOTHING RETURNING id
                    """, logger: logger)
                // Another instance made a device of that name a moment ago.
                if try await Self.first(inserted, as: String.self) == nil { return .nameTaken }
            }
            try await connection.query("UPDATE link_code SET used_ms = \(nowMs) WHERE code_sha256 = \(codeHash)", logger: logger)
            return .linked(linked, relinked: relinked)
        }
    }

    public func addAccount(_ account: Account, passwordHash: String) async throws {
        let rows = try await client.query(
            """
            INSERT INTO account (id, email, password_bcrypt, confirmed, display_name, timezone, created_at)
            VALUES (\(account.id), \(account.email), \(passwordHash), \(account.confirmed), \(account.displayName), \(account.timezone),
                    \(account.createdAt))
            ON CONFLICT DO NOTHING RETURNING id
            """, logger: logger)
        if try await Self.first(rows, as: String.self) == nil {
            throw StoreError("an account with the address \(account.email) exists already")
        }
    }

    private static let accountColumns = "id, email, password_bcrypt, confirmed, display_name, timezone, created_at, max_hr"

    public func accounts() async throws -> [Account] {
        try await Self.accounts(client.query(PostgresQuery(unsafeSQL: "SELECT \(Self.accountColumns) FROM account ORDER BY email"), logger: logger))
            .map(\.account)
    }

    public func account(email: String) async throws -> StoredAccount? {
        var query = PostgresQuery(unsafeSQL: "SELECT \(Self.accountColumns) FROM account WHERE email = $1")
        query.binds.append(email)
        return try await Self.accounts(client.query(query, logger: logger)).first
    }

    public func account(id: String) async throws -> Account? {
        var query = PostgresQuery(unsafeSQL: "SELECT \(Self.accountColumns) FROM account WHERE id = $1")
        query.binds.append(id)
        return try await Self.accounts(client.query(query, logger: logger)).first?.account
    }

    private static func accounts(_ rows: PostgresRowSequence) async throws -> [StoredAccount] {
        var accounts: [StoredAccount] = []
        for try await (id, email, hash, confirmed, name, timezone, created, maxHR)
            in rows.decode((String, String, String, Bool, String, String, String, Int?).self) {
            accounts.append(StoredAccount(
                account: Account(id: id, email: email, confirmed: confirmed, displayName: name, timezone: timezone, createdAt: created,
                                 maxHeartRate: maxHR),
                passwordHash: hash))
        }
        return accounts
    }

    public func confirmAccount(id: String) async throws -> Bool {
        let rows = try await client.query("UPDATE account SET confirmed = TRUE WHERE id = \(id) RETURNING id", logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }

    public func deleteAccount(id: String) async throws -> StoreCounts? {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection async throws -> StoreCounts? in
            let found = try await connection.query("SELECT id FROM account WHERE id = \(id) FOR UPDATE", logger: logger)
            guard try await Self.first(found, as: String.self) != nil else { return nil }
            try await connection.query("DELETE FROM run_view WHERE device_id IN (SELECT id FROM device WHERE account_id = \(id))", logger: logger)
            for table in Schema.deviceHealthTables {
                var query = PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE device_id IN (SELECT id FROM device WHERE account_id = $1)")
                query.binds.append(id)
                try await connection.query(query, logger: logger)
            }
            try await connection.query("DELETE FROM goal WHERE account_id = \(id)", logger: logger)
            var deleted: [String: Int] = [:]
            for table in StoreCounts.deviceTables {
                let owned = table == "device" ? "account_id = $1" : "device_id IN (SELECT id FROM device WHERE account_id = $1)"
                var query = PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(owned) RETURNING 1")
                query.binds.append(id)
                deleted[table] = try await Self.count(connection.query(query, logger: logger))
            }
            for table in StoreCounts.accountTables {
                var query = PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(table == "account" ? "id" : "account_id") = $1 RETURNING 1")
                query.binds.append(id)
                deleted[table] = try await Self.count(connection.query(query, logger: logger))
            }
            for statement in Schema.accountMonitoringDeletes {
                var query = PostgresQuery(unsafeSQL: Self.numbered(statement))
                query.binds.append(id)
                try await connection.query(query, logger: logger)
            }
            return StoreCounts.tabulate(StoreCounts.deviceTables + StoreCounts.accountTables) { deleted[$0] ?? 0 }
        }
    }

    public func revokeDevice(name: String) async throws -> Bool {
        let rows = try await client.query(
            "UPDATE device SET token_sha256 = \(Device.revokedTokenMark) || id WHERE name = \(name) RETURNING id", logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }

    public func removeDevice(name: String) async throws -> StoreCounts? {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection async throws -> StoreCounts? in
            let found = try await connection.query("SELECT id FROM device WHERE name = \(name) FOR UPDATE", logger: logger)
            guard let id = try await Self.first(found, as: String.self) else { return nil }
            try await connection.query("DELETE FROM run_view WHERE device_id = \(id)", logger: logger)
            for table in Schema.deviceHealthTables {
                var query = PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE device_id = $1")
                query.binds.append(id)
                try await connection.query(query, logger: logger)
            }
            var deleted: [String: Int] = [:]
            for table in StoreCounts.deviceTables {
                var query = PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(table == "device" ? "id" : "device_id") = $1 RETURNING 1")
                query.binds.append(id)
                deleted[table] = try await Self.count(connection.query(query, logger: logger))
            }
            return StoreCounts.tabulate(StoreCounts.deviceTables) { deleted[$0] ?? 0 }
        }
    }

    public func setPassword(accountID: String, passwordHash: String) async throws {
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("UPDATE account SET password_bcrypt = \(passwordHash) WHERE id = \(accountID)", logger: logger)
            try await connection.query("DELETE FROM session WHERE account_id = \(accountID)", logger: logger)
            // Every e-mailed link of the account dies with the old password: an older reset link
            // (a copy in a stolen mailbox) must not set another.
            try await connection.query("DELETE FROM account_token WHERE account_id = \(accountID)", logger: logger)
        }
    }

    public func addSession(_ session: StoredSession) async throws {
        try await client.query(
            """
            INSERT INTO session (id_sha256, account_id, csrf, created_ms, seen_ms)
            VALUES (\(session.idHash), \(session.accountID), \(session.csrf), \(session.createdMs), \(session.seenMs))
            """, logger: logger)
    }

    public func session(idHash: String) async throws -> StoredSession? {
        let rows = try await client.query(
            "SELECT id_sha256, account_id, csrf, created_ms, seen_ms FROM session WHERE id_sha256 = \(idHash)", logger: logger)
        for try await (hash, account, csrf, created, seen) in rows.decode((String, String, String, Int64, Int64).self) {
            return StoredSession(idHash: hash, accountID: account, csrf: csrf, createdMs: created, seenMs: seen)
        }
        return nil
    }

    public func touchSession(idHash: String, seenMs: Int64) async throws {
        try await client.query("UPDATE session SET seen_ms = GREATEST(seen_ms, \(seenMs)) WHERE id_sha256 = \(idHash)", logger: logger)
    }

    public func deleteSession(idHash: String) async throws {
        try await client.query("DELETE FROM session WHERE id_sha256 = \(idHash)", logger: logger)
    }

    public func deleteExpiredSessions(idleBeforeMs: Int64, createdBeforeMs: Int64) async throws {
        try await client.query("DELETE FROM session WHERE seen_ms < \(idleBeforeMs) OR created_ms < \(createdBeforeMs)", logger: logger)
    }

    public func addAccountToken(_ token: AccountToken, mail: OutboxMail) async throws {
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO account_token (token_sha256, account_id, purpose, expires_ms)
                VALUES (\(token.hash), \(token.accountID), \(token.purpose), \(token.expiresMs))
                """, logger: logger)
            try await connection.query(Self.queueing(mail), logger: logger)
        }
    }

    public func queueMail(_ mail: OutboxMail) async throws {
        try await client.query(Self.queueing(mail), logger: logger)
    }

    private static func queueing(_ mail: OutboxMail) -> PostgresQuery {
        "INSERT INTO outbox (channel, target, payload, next_attempt_ms) VALUES ('email', \(mail.to), \(mail.payload), 0)"
    }

    public func takeAccountToken(hash: String, purpose: String, nowMs: Int64) async throws -> String? {
        // Links nobody followed in time go here, at the rate links are followed.
        try await client.query("DELETE FROM account_token WHERE expires_ms <= \(nowMs) AND token_sha256 <> \(hash)", logger: logger)
        // DELETE ... RETURNING: of two instances taking one token at once, one gets the row.
        let rows = try await client.query(
            "DELETE FROM account_token WHERE token_sha256 = \(hash) RETURNING account_id, purpose, expires_ms", logger: logger)
        for try await (account, storedPurpose, expires) in rows.decode((String, String, Int64).self) {
            return storedPurpose == purpose && expires > nowMs ? account : nil
        }
        return nil
    }

    public func putChunk(_ chunk: StoredChunk, device: String) async throws -> PutResult {
        let rows = try await client.query(
            """
            INSERT INTO chunk (device_id, run_id, seq, body, content_encoding, digest, samples)
            VALUES (\(device), \(chunk.runID), \(chunk.seq), \(ByteBuffer(bytes: chunk.body)), \(chunk.contentEncoding), \(chunk.digest),
                    \(chunk.samples))
            ON CONFLICT DO NOTHING RETURNING seq
            """, logger: logger)
        if try await Self.first(rows, as: Int.self) != nil { return .created }
        let stored = try await Self.first(
            client.query(
                "SELECT digest FROM chunk WHERE device_id = \(device) AND run_id = \(chunk.runID) AND seq = \(chunk.seq)",
                logger: logger),
            as: String.self)
        return stored == chunk.digest ? .unchanged : .conflict
    }

    public func putSummary(_ summary: StoredSummary, device: String) async throws -> PutResult {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "SELECT summary FROM run WHERE device_id = \(device) AND run_id = \(summary.runID) FOR UPDATE", logger: logger)
            let stored = try await Self.first(rows, as: String.self)
            if stored == summary.json { return PutResult.unchanged }
            try await Self.deleteFigures(connection, device: device, runID: summary.runID, logger: logger)
            try await connection.query(
                """
                INSERT INTO run (device_id, run_id, summary, chunks, start_ms)
                VALUES (\(device), \(summary.runID), \(summary.json), \(summary.chunks), \(summary.startMs))
                ON CONFLICT (device_id, run_id) DO UPDATE SET summary = excluded.summary, chunks = excluded.chunks,
                start_ms = excluded.start_ms
                """, logger: logger)
            return stored == nil ? PutResult.created : PutResult.replaced
        }
    }

    public func completeRuns(device: String, limit: Int, offset: Int) async throws -> [StoredSummary] {
        var query: PostgresQuery = "SELECT r.run_id, r.summary, r.chunks, r.start_ms FROM run r WHERE r.device_id = \(device) AND "
        query.sql += Schema.completeRunCondition
        query.sql += " ORDER BY r.start_ms DESC, r.run_id DESC LIMIT \(limit) OFFSET \(offset)"
        return try await Self.summaries(client.query(query, logger: logger))
    }

    public func completeRun(device: String, runID: String) async throws -> StoredSummary? {
        var query: PostgresQuery =
            "SELECT r.run_id, r.summary, r.chunks, r.start_ms FROM run r WHERE r.device_id = \(device) AND r.run_id = \(runID) AND "
        query.sql += Schema.completeRunCondition
        return try await Self.summaries(client.query(query, logger: logger)).first
    }

    private static func summaries(_ rows: PostgresRowSequence) async throws -> [StoredSummary] {
        var summaries: [StoredSummary] = []
        for try await (runID, json, chunks, startMs) in rows.decode((String, String, Int, Int64).self) {
            summaries.append(StoredSummary(runID: runID, json: json, chunks: chunks, startMs: startMs))
        }
        return summaries
    }

    public func chunks(device: String, runID: String, count: Int) async throws -> [StoredChunk] {
        try await Self.chunks(client.query(
            """
            SELECT run_id, seq, body, content_encoding, digest, samples FROM chunk
            WHERE device_id = \(device) AND run_id = \(runID) AND seq < \(count) ORDER BY seq
            """, logger: logger))
    }

    public func chunk(device: String, runID: String, seq: Int) async throws -> StoredChunk? {
        try await Self.chunks(client.query(
            """
            SELECT run_id, seq, body, content_encoding, digest, samples FROM chunk
            WHERE device_id = \(device) AND run_id = \(runID) AND seq = \(seq)
            """, logger: logger)).first
    }

    private static func chunks(_ rows: PostgresRowSequence) async throws -> [StoredChunk] {
        var chunks: [StoredChunk] = []
        for try await (runID, seq, body, encoding, digest, samples) in rows.decode((String, Int, ByteBuffer, String?, String, Int?).self) {
            chunks.append(StoredChunk(runID: runID, seq: seq, body: Array(buffer: body), contentEncoding: encoding, digest: digest,
                                      samples: samples))
        }
        return chunks
    }

    public func chunkNumbers(device: String, runID: String, below count: Int) async throws -> [Int] {
        let rows = try await client.query(
            "SELECT seq FROM chunk WHERE device_id = \(device) AND run_id = \(runID) AND seq < \(count) ORDER BY seq", logger: logger)
        var numbers: [Int] = []
        for try await (seq) in rows.decode(Int.self) { numbers.append(seq) }
        return numbers
    }

    public func storedSamples(device: String, runID: String, below count: Int, excluding: Int?) async throws -> Int {
        let rows = try await client.query(
            """
            SELECT COALESCE(SUM(samples), 0)::BIGINT FROM chunk
            WHERE device_id = \(device) AND run_id = \(runID) AND seq < \(count) AND seq <> \(excluding ?? -1)
            """, logger: logger)
        return try await Self.first(rows, as: Int.self) ?? 0
    }

    public func deleteRun(device: String, runID: String) async throws -> Bool {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            try await connection.query("DELETE FROM run_view WHERE device_id = \(device) AND run_id = \(runID)", logger: logger)
            try await Self.deleteFigures(connection, device: device, runID: runID, logger: logger)
            let runs = try await connection.query(
                "DELETE FROM run WHERE device_id = \(device) AND run_id = \(runID) RETURNING run_id", logger: logger)
            let chunks = try await connection.query(
                "DELETE FROM chunk WHERE device_id = \(device) AND run_id = \(runID) RETURNING seq", logger: logger)
            let deletedRuns = try await Self.count(runs)
            let deletedChunks = try await Self.count(chunks)
            return deletedRuns + deletedChunks > 0
        }
    }

    public func accountRuns(accountID: String, fromMs: Int64?, toMs: Int64?, limit: Int, offset: Int) async throws -> [AccountRun] {
        var query: PostgresQuery = """
            SELECT r.device_id, r.run_id, r.summary, r.chunks, r.start_ms FROM run r JOIN device d ON d.id = r.device_id
            WHERE d.account_id = \(accountID) AND r.start_ms >= \(fromMs ?? Int64.min) AND r.start_ms < \(toMs ?? Int64.max) AND
            """
        query.sql += " " + Schema.completeRunCondition
        query.sql += " ORDER BY r.start_ms DESC, r.run_id DESC LIMIT \(limit) OFFSET \(offset)"
        return try await Self.accountRuns(client.query(query, logger: logger))
    }

    public func accountRun(accountID: String, runID: String) async throws -> AccountRun? {
        var query: PostgresQuery = """
            SELECT r.device_id, r.run_id, r.summary, r.chunks, r.start_ms FROM run r JOIN device d ON d.id = r.device_id
            WHERE d.account_id = \(accountID) AND r.run_id = \(runID) AND
            """
        query.sql += " " + Schema.completeRunCondition + " ORDER BY r.device_id LIMIT 1"
        return try await Self.accountRuns(client.query(query, logger: logger)).first
    }

    private static func accountRuns(_ rows: PostgresRowSequence) async throws -> [AccountRun] {
        var runs: [AccountRun] = []
        for try await (device, runID, json, chunks, startMs) in rows.decode((String, String, String, Int, Int64).self) {
            runs.append(AccountRun(deviceID: device, summary: StoredSummary(runID: runID, json: json, chunks: chunks, startMs: startMs)))
        }
        return runs
    }

    public func runView(device: String, runID: String, source: String) async throws -> String? {
        try await Self.first(
            client.query("SELECT body FROM run_view WHERE device_id = \(device) AND run_id = \(runID) AND source = \(source)", logger: logger),
            as: String.self)
    }

    public func putRunView(device: String, runID: String, source: String, body: String, records: String) async throws {
        // Only for a run still stored: a view computed while the run was deleted is dropped.
        try await client.query(
            """
            INSERT INTO run_view (device_id, run_id, source, body, records)
            SELECT \(device), \(runID), \(source), \(body), \(records)
            WHERE EXISTS (SELECT 1 FROM run WHERE device_id = \(device) AND run_id = \(runID))
            ON CONFLICT (device_id, run_id) DO UPDATE SET source = excluded.source, body = excluded.body, records = excluded.records
            """, logger: logger)
    }

    public func runRecords(accountID: String) async throws -> [String: (source: String, records: String)] {
        let rows = try await client.query(
            "SELECT v.run_id, v.source, v.records FROM run_view v JOIN device d ON d.id = v.device_id WHERE d.account_id = \(accountID)",
            logger: logger)
        var records: [String: (source: String, records: String)] = [:]
        for try await (runID, source, text) in rows.decode((String, String, String).self) { records[runID] = (source, text) }
        return records
    }

    public func setAccountSettings(id: String, timezone: String, maxHeartRate: Int?) async throws {
        try await client.query("UPDATE account SET timezone = \(timezone), max_hr = \(maxHeartRate) WHERE id = \(id)", logger: logger)
    }

    public func goals(accountID: String) async throws -> [Goal] {
        let rows = try await client.query(
            "SELECT id, account_id, period, distance_m FROM goal WHERE account_id = \(accountID) ORDER BY period DESC, distance_m, id",
            logger: logger)
        var goals: [Goal] = []
        for try await (id, account, period, distance) in rows.decode((String, String, String, Double).self) {
            if let period = Goal.Period(rawValue: period) { goals.append(Goal(id: id, accountID: account, period: period, distanceM: distance)) }
        }
        return goals
    }

    public func addGoal(_ goal: Goal) async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO goal (id, account_id, period, distance_m) VALUES (\(goal.id), \(goal.accountID), \(goal.period.rawValue), \(goal.distanceM))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """, logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }

    public func updateGoal(_ goal: Goal) async throws -> Bool {
        let rows = try await client.query(
            """
            UPDATE goal SET period = \(goal.period.rawValue), distance_m = \(goal.distanceM)
            WHERE id = \(goal.id) AND account_id = \(goal.accountID) RETURNING id
            """, logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }

    public func deleteGoal(accountID: String, id: String) async throws -> Bool {
        let rows = try await client.query("DELETE FROM goal WHERE id = \(id) AND account_id = \(accountID) RETURNING id", logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }

    public func putPosition(device: String, timeMs: Int64, json: String) async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO position (device_id, time_ms, body) VALUES (\(device), \(timeMs), \(json))
            ON CONFLICT (device_id) DO UPDATE SET time_ms = excluded.time_ms, body = excluded.body
            WHERE excluded.time_ms >= position.time_ms RETURNING time_ms
            """, logger: logger)
        return try await Self.first(rows, as: Int64.self) != nil
    }

    public func position(device: String) async throws -> String? {
        try await Self.first(client.query("SELECT body FROM position WHERE device_id = \(device)", logger: logger), as: String.self)
    }

    public func recordAlertMessage(_ message: AlertMessageInput) async throws -> AlertRecordResult {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            let state = (AlertState(messageType: message.type) ?? .open).rawValue
            try await connection.query(
                """
                INSERT INTO alert (device_id, alert_id, secret, state, kind, test, created_ms, latest_sequence, latest_body)
                VALUES (\(message.device), \(message.alertID), \(message.newSecret), \(state), \(message.kind), \(message.test),
                        \(message.receivedMs), \(message.sequence), \(message.json))
                ON CONFLICT DO NOTHING
                """, logger: logger)
            // FOR UPDATE: two instances recording messages of one alert take turns from here.
            let rows = try await connection.query(
                """
                SELECT secret, latest_sequence FROM alert
                WHERE device_id = \(message.device) AND alert_id = \(message.alertID) FOR UPDATE
                """, logger: logger)
            var found: (String, Int)?
            for try await row in rows.decode((String, Int).self) { found = row }
            guard let (secret, latest) = found else { throw StoreError("alert \(message.alertID) vanished while being recorded") }
            let inserted = try await connection.query(
                """
                INSERT INTO alert_message (device_id, alert_id, sequence, type, body, received_ms)
                VALUES (\(message.device), \(message.alertID), \(message.sequence), \(message.type), \(message.json), \(message.receivedMs))
                ON CONFLICT DO NOTHING RETURNING sequence
                """, logger: logger)
            guard try await Self.first(inserted, as: Int.self) != nil else {
                let stored = try await Self.first(connection.query(
                    """
                    SELECT body FROM alert_message
                    WHERE device_id = \(message.device) AND alert_id = \(message.alertID) AND sequence = \(message.sequence)
                    """, logger: logger), as: String.self)
                return stored == message.json ? AlertRecordResult.repeated(secret: secret) : AlertRecordResult.conflict(secret: secret)
            }
            if message.sequence > latest {
                try await connection.query(
                    """
                    UPDATE alert SET state = \(state), latest_sequence = \(message.sequence), latest_body = \(message.json)
                    WHERE device_id = \(message.device) AND alert_id = \(message.alertID)
                    """, logger: logger)
            }
            for target in message.forward {
                try await connection.query(
                    """
                    INSERT INTO outbox (channel, target, payload, next_attempt_ms, device_id)
                    VALUES (\(target.channel), \(target.target), \(target.payload(secret)), \(message.receivedMs), \(message.device))
                    """, logger: logger)
            }
            return AlertRecordResult.created(secret: secret)
        }
    }

    private static let alertColumns = "alert_id, device_id, secret, state, kind, test, created_ms, latest_sequence, latest_body"

    // Every alert read has a LIMIT (issue 31): a device's many alerts or an alert's many
    // messages never come into memory at once.
    public func alerts(device: String, state: AlertState?, before: AlertCursor?, limit: Int) async throws -> [StoredAlert] {
        let limit = max(0, limit)
        let states = state.map { [$0.rawValue] } ?? AlertState.allCases.map(\.rawValue)
        let query: PostgresQuery
        if let before {
            query = """
                SELECT \(unescaped: Self.alertColumns) FROM alert WHERE device_id = \(device) AND state = ANY(\(states))
                AND (created_ms < \(before.createdMs) OR (created_ms = \(before.createdMs) AND alert_id > \(before.alertID)))
                ORDER BY created_ms DESC, alert_id LIMIT \(limit)
                """
        } else {
            query = """
                SELECT \(unescaped: Self.alertColumns) FROM alert WHERE device_id = \(device) AND state = ANY(\(states))
                ORDER BY created_ms DESC, alert_id LIMIT \(limit)
                """
        }
        return try await Self.alerts(client.query(query, logger: logger))
    }

    public func alert(device: String, alertID: String) async throws -> StoredAlert? {
        // A path parameter may hold a NUL (%00), which PostgreSQL text cannot: no alert has one.
        guard !alertID.utf8.contains(0) else { return nil }
        return try await Self.alerts(client.query(
            "SELECT \(unescaped: Self.alertColumns) FROM alert WHERE device_id = \(device) AND alert_id = \(alertID)", logger: logger)).first
    }

    public func alert(secret: String, messages limit: Int) async throws -> AlertMessages? {
        let rows = try await client.query(
            "SELECT \(unescaped: Self.alertColumns) FROM alert WHERE secret = \(secret)", logger: logger)
        guard let alert = try await Self.alerts(rows).first else { return nil }
        var count = 0
        for try await (total) in try await client.query(
            "SELECT COUNT(*) FROM alert_message WHERE device_id = \(alert.device) AND alert_id = \(alert.alertID)", logger: logger
        ).decode(Int64.self) { count = Int(total) }
        // The first message (where and when it was raised) and the newest others.
        let messageRows = try await client.query(
            """
            SELECT sequence, body FROM (SELECT sequence, body FROM alert_message WHERE device_id = \(alert.device) AND alert_id = \(alert.alertID)
                                        ORDER BY sequence LIMIT 1) AS first
            UNION
            SELECT sequence, body FROM (SELECT sequence, body FROM alert_message WHERE device_id = \(alert.device) AND alert_id = \(alert.alertID)
                                        ORDER BY sequence DESC LIMIT \(max(0, limit - 1))) AS newest
            ORDER BY sequence
            """, logger: logger)
        var messages: [String] = []
        for try await (_, body) in messageRows.decode((Int64, String).self) { messages.append(body) }
        return AlertMessages(alert: alert, messages: messages, count: count)
    }

    private static func alerts(_ rows: PostgresRowSequence) async throws -> [StoredAlert] {
        var alerts: [StoredAlert] = []
        for try await (alertID, device, secret, state, kind, test, created, sequence, body)
            in rows.decode((String, String, String, String, String, Bool, Int64, Int, String).self) {
            alerts.append(StoredAlert(alertID: alertID, device: device, secret: secret, state: AlertState(rawValue: state) ?? .open,
                                      kind: kind, test: test, createdMs: created, latestSequence: sequence, latestJSON: body))
        }
        return alerts
    }

    public func addNotice(_ notice: StoredNotice) async throws {
        try await client.query(
            """
            INSERT INTO notice (id, device_id, text, created_ms, delivered_ms)
            VALUES (\(notice.id), \(notice.device), \(notice.text), \(notice.createdMs), \(notice.deliveredMs))
            """, logger: logger)
    }

    public func pendingNotices(device: String, limit: Int) async throws -> [StoredNotice] {
        try await Self.notices(client.query(
            """
            SELECT id, device_id, text, created_ms, delivered_ms FROM notice WHERE device_id = \(device) AND delivered_ms IS NULL
            ORDER BY created_ms, id LIMIT \(limit)
            """, logger: logger))
    }

    public func notices(device: String) async throws -> [StoredNotice] {
        try await Self.notices(client.query(
            "SELECT id, device_id, text, created_ms, delivered_ms FROM notice WHERE device_id = \(device) ORDER BY created_ms, id",
            logger: logger))
    }

    private static func notices(_ rows: PostgresRowSequence) async throws -> [StoredNotice] {
        var notices: [StoredNotice] = []
        for try await (id, device, text, created, delivered) in rows.decode((String, String, String, Int64, Int64?).self) {
            notices.append(StoredNotice(id: id, device: device, text: text, createdMs: created, deliveredMs: delivered))
        }
        return notices
    }

    public func acknowledgeNotices(device: String, ids: [String], nowMs: Int64) async throws -> [String] {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            let found = try await connection.query(
                "SELECT id FROM notice WHERE device_id = \(device) AND id = ANY(\(ids)) FOR UPDATE", logger: logger)
            var known: Set<String> = []
            for try await (id) in found.decode(String.self) { known.insert(id) }
            let unknown = ids.filter { !known.contains($0) }
            guard unknown.isEmpty else { return unknown }
            try await connection.query(
                "UPDATE notice SET delivered_ms = \(nowMs) WHERE device_id = \(device) AND id = ANY(\(ids)) AND delivered_ms IS NULL",
                logger: logger)
            return []
        }
    }

    public func deviceState(device: String) async throws -> StoredDeviceState? {
        let rows = try await client.query("SELECT received_ms, body FROM device_state WHERE device_id = \(device)", logger: logger)
        for try await (received, body) in rows.decode((Int64, String).self) {
            return StoredDeviceState(receivedMs: received, json: body)
        }
        return nil
    }

    /// With the webhook secret of the item's device (gone with the device: unsigned).
    private static let outboxColumns = """
        id, channel, target, payload, attempts, delivered_ms, last_error,
        (SELECT webhook_secret FROM device WHERE device.id = outbox.device_id)
        """

    public func claimOutbox(nowMs: Int64, leaseUntilMs: Int64, limit: Int) async throws -> [OutboxItem] {
        // SKIP LOCKED: instances polling at once each take different items.
        let rows = try await client.query(
            """
            UPDATE outbox SET next_attempt_ms = \(leaseUntilMs) WHERE id IN (
                SELECT id FROM outbox WHERE delivered_ms IS NULL AND next_attempt_ms <= \(nowMs)
                ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: Self.outboxColumns)
            """, logger: logger)
        return try await Self.outboxItems(rows).sorted { $0.id < $1.id }
    }

    public func outboxDelivered(id: Int64, nowMs: Int64) async throws {
        try await client.query(
            // An account's e-mail held a single-use link: once sent, only that it was sent stays.
            """
            UPDATE outbox SET attempts = attempts + 1, delivered_ms = \(nowMs), last_error = NULL,
                payload = CASE WHEN device_id IS NULL THEN '' ELSE payload END WHERE id = \(id)
            """, logger: logger)
    }

    public func outboxFailed(id: Int64, error: String, nextAttemptMs: Int64) async throws {
        try await client.query(
            """
            UPDATE outbox SET attempts = attempts + 1, last_error = \(error), next_attempt_ms = \(nextAttemptMs) WHERE id = \(id)
            """, logger: logger)
    }

    public func outbox() async throws -> [OutboxItem] {
        try await Self.outboxItems(client.query("SELECT \(unescaped: Self.outboxColumns) FROM outbox ORDER BY id", logger: logger))
    }

    private static func outboxItems(_ rows: PostgresRowSequence) async throws -> [OutboxItem] {
        var items: [OutboxItem] = []
        for try await (id, channel, target, payload, attempts, delivered, error, signingSecret)
            in rows.decode((Int64, String, String, String, Int, Int64?, String?, String?).self) {
            items.append(OutboxItem(id: id, channel: channel, target: target, payload: payload, attempts: attempts,
                                    deliveredMs: delivered, lastError: error, signingSecret: signingSecret))
        }
        return items
    }

    public func counts() async throws -> StoreCounts {
        func count(_ table: String) async throws -> Int {
            try await Self.first(client.query(PostgresQuery(unsafeSQL: "SELECT COUNT(*) FROM \(table)"), logger: logger), as: Int.self) ?? 0
        }
        var rows: [String: Int] = [:]
        for table in StoreCounts.allTables { rows[table] = try await count(table) }
        return StoreCounts.tabulate { rows[$0] ?? 0 }
    }

    /// A statement both stores share, written with SQLite's `?N`, as PostgreSQL's `$N`.
    static func numbered(_ sql: String) -> String {
        sql.replacing(/\?(\d+)/) { "$\($0.1)" }
    }

    static func first<T: PostgresDecodable & Sendable>(_ rows: PostgresRowSequence, as type: T.Type) async throws -> T? {
        var value: T?
        for try await (decoded) in rows.decode(T.self) where value == nil { value = decoded }
        return value
    }

    static func count(_ rows: PostgresRowSequence) async throws -> Int {
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }
}
