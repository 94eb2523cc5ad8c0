import Foundation
import GRDB
import PacerContract

/// The store in one SQLite file (WAL): what `pacer-cloud serve --database sqlite:PATH` uses.
/// GRDB serializes writers, so each method's read-then-write is one transaction without races.
public final class SQLiteCloudStore: CloudStore {
    let pool: DatabasePool
    /// Each statement's time, for /metrics.
    public let queries: QueryObserver

    public init(path: String) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let queries = QueryObserver()
        Self.observe(&configuration, queries)
        self.queries = queries
        pool = try DatabasePool(path: path, configuration: configuration)
    }

    public func migrate() async throws {
        try await pool.write { db in
            for statement in Schema.statements(postgres: false) { try db.execute(sql: statement) }
            let version = try Int.fetchOne(db, sql: "SELECT MAX(version) FROM schema_version")
            if let version, version > Schema.version {
                throw StoreError("the database has schema version \(version); this pacer-cloud knows up to \(Schema.version)")
            }
            for (table, column, type) in Schema.sqliteAddedColumns where try !db.columns(in: table).contains(where: { $0.name == column }) {
                try db.execute(sql: "ALTER TABLE \(table) ADD COLUMN \(column) \(type)")
            }
            if version != Schema.version {
                try db.execute(sql: "DELETE FROM schema_version")
                try db.execute(sql: "INSERT INTO schema_version (version) VALUES (?)", arguments: [Schema.version])
            }
        }
        // Chunks stored before samples were counted: counted now, a batch per transaction.
        while true {
            let counted = try await pool.write { db -> Int in
                let rows = try Row.fetchAll(
                    db, sql: "SELECT device_id, run_id, seq, body, content_encoding FROM chunk WHERE samples IS NULL LIMIT ?",
                    arguments: [Schema.backfillBatch])
                for row in rows {
                    let body: Data = row["body"]
                    let encoding: String? = row["content_encoding"]
                    let samples = TrackChunkFormat.countSamples(Array(body), gzip: encoding == "gzip") ?? Int(Int32.max)
                    let device: String = row["device_id"], runID: String = row["run_id"], seq: Int = row["seq"]
                    try db.execute(sql: "UPDATE chunk SET samples = ? WHERE device_id = ? AND run_id = ? AND seq = ?",
                                   arguments: [samples, device, runID, seq])
                }
                return rows.count
            }
            if counted < Schema.backfillBatch { break }
        }
        try await normalizeAccountEmails()
    }

    public func addDevice(_ device: Device, tokenHash: String, webhookSecret: String?) async throws {
        try await pool.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM device WHERE name = ?", arguments: [device.name]) != nil {
                throw StoreError("a device named \(device.name) exists already")
            }
            try db.execute(
                sql: "INSERT INTO device (id, name, token_sha256, email, webhook, created_at, webhook_secret) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [device.id, device.name, tokenHash, device.email, device.webhook, device.createdAt, webhookSecret])
        }
    }

    public func devices() async throws -> [Device] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM device ORDER BY name").map(Self.device)
        }
    }

    public func devices(accountID: String) async throws -> [Device] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM device WHERE account_id = ? ORDER BY name", arguments: [accountID]).map(Self.device)
        }
    }

    public func device(tokenHash: String) async throws -> Device? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM device WHERE token_sha256 = ?", arguments: [tokenHash]).map(Self.device)
        }
    }

    static func device(_ row: Row) -> Device {
        var device = Device(id: row["id"], name: row["name"], email: row["email"], webhook: row["webhook"], createdAt: row["created_at"])
        device.revoked = (row["token_sha256"] as String).hasPrefix(Device.revokedTokenMark)
        device.accountID = row["account_id"]
        device.lastSeenMs = row["last_seen_ms"]
        return device
    }

    public func touchDevice(id: String, seenMs: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE device SET last_seen_ms = MAX(COALESCE(last_seen_ms, 0), ?) WHERE id = ?", arguments: [seenMs, id])
        }
    }

    public func unlinkDevice(id: String, accountID: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE device SET token_sha256 = ? || id WHERE id = ? AND account_id = ?",
                           arguments: [Device.revokedTokenMark, id, accountID])
            return db.changesCount > 0
        }
    }

    public func addLinkCode(hash: String, accountID: String, expiresMs: Int64, nowMs: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM link_code WHERE (account_id = ? AND used_ms IS NULL) OR expires_ms < ?",
                           arguments: [accountID, nowMs - LinkCodes.keptAfterExpiryMs])
            try db.execute(sql: "INSERT INTO link_code (code_sha256, account_id, expires_ms) VALUES (?, ?, ?)", arguments: [hash, accountID, expiresMs])
        }
    }

    public func linkDevice(codeHash: String, nowMs: Int64, device: Device, tokenHash: String) async throws -> LinkOutcome {
        try await pool.write { db in
            guard let code = try Row.fetchOne(db, sql: "SELECT * FROM link_code WHERE code_sha256 = ?", arguments: [codeHash]) else {
                return .unknownCode
            }
            if (code["used_ms"] as Int64?) != nil { return .usedCode }
            if (code["expires_ms"] as Int64) <= nowMs { return .expiredCode }
            let accountID: String = code["account_id"]
            var linked = device
            linked.accountID = accountID
            linked.lastSeenMs = nowMs
            var relinked = false
            if let existing = try Row.fetchOne(db, sql: "SELECT * FROM device WHERE name = ?", arguments: [device.name]).map(Self.device) {
                guard existing.accountID == accountID else { return .nameTaken }
                try db.execute(sql: "UPDATE device SET token_sha256 = ?, last_seen_ms = ? WHERE id = ?", arguments: [tokenHash, nowMs, existing.id])
                linked = existing
                linked.revoked = false
                linked.lastSeenMs = nowMs
                relinked = true
            } else {
                try db.execute(
                    sql: "INSERT INTO device (id, name, token_sha256, created_at, account_id, last_seen_ms) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [device.id, device.name, tokenHash, device.createdAt, accountID, nowMs])
            }
            try db.execute(sql: "UPDATE link_code SET used_ms = ? WHERE code_sha256 = ?", arguments: [nowMs, codeHash])
            return .linked(linked, relinked: relinked)
        }
    }

    public func assignDevice(name: String, accountID: String?) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE device SET account_id = ? WHERE name = ?", arguments: [accountID, name])
            return db.changesCount > 0
        }
    }

    public func addAccount(_ account: Account, passwordHash: String) async throws {
        try await pool.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE email = ?", arguments: [account.email]) != nil {
                throw StoreError("an account with the address \(account.email) exists already")
            }
            try db.execute(
                sql: """
                    INSERT INTO account (id, email, password_bcrypt, confirmed, display_name, timezone, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [account.id, account.email, passwordHash, account.confirmed, account.displayName, account.timezone, account.createdAt])
        }
    }

    public func accounts() async throws -> [Account] {
        try await pool.read { db in try Row.fetchAll(db, sql: "SELECT * FROM account ORDER BY email").map { Self.account($0).account } }
    }

    public func account(email: String) async throws -> StoredAccount? {
        try await pool.read { db in try Row.fetchOne(db, sql: "SELECT * FROM account WHERE email = ?", arguments: [email]).map(Self.account) }
    }

    public func account(id: String) async throws -> Account? {
        try await pool.read { db in try Row.fetchOne(db, sql: "SELECT * FROM account WHERE id = ?", arguments: [id]).map { Self.account($0).account } }
    }

    private static func account(_ row: Row) -> StoredAccount {
        StoredAccount(
            account: Account(id: row["id"], email: row["email"], confirmed: row["confirmed"], displayName: row["display_name"],
                             timezone: row["timezone"], createdAt: row["created_at"], maxHeartRate: row["max_hr"]),
            passwordHash: row["password_bcrypt"])
    }

    public func confirmAccount(id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE account SET confirmed = 1 WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func deleteAccount(id: String) async throws -> StoreCounts? {
        try await pool.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE id = ?", arguments: [id]) != nil else { return nil }
            try db.execute(sql: "DELETE FROM run_view WHERE device_id IN (SELECT id FROM device WHERE account_id = ?)", arguments: [id])
            for table in Schema.deviceHealthTables {
                try db.execute(sql: "DELETE FROM \(table) WHERE device_id IN (SELECT id FROM device WHERE account_id = ?)", arguments: [id])
            }
            try db.execute(sql: "DELETE FROM goal WHERE account_id = ?", arguments: [id])
            var deleted: [String: Int] = [:]
            for table in StoreCounts.deviceTables {
                let owned = table == "device" ? "account_id = ?" : "device_id IN (SELECT id FROM device WHERE account_id = ?)"
                try db.execute(sql: "DELETE FROM \(table) WHERE \(owned)", arguments: [id])
                deleted[table] = db.changesCount
            }
            for table in StoreCounts.accountTables {
                try db.execute(sql: "DELETE FROM \(table) WHERE \(table == "account" ? "id" : "account_id") = ?", arguments: [id])
                deleted[table] = db.changesCount
            }
            for statement in Schema.accountMonitoringDeletes { try db.execute(sql: statement, arguments: [id]) }
            return StoreCounts.tabulate(StoreCounts.deviceTables + StoreCounts.accountTables) { deleted[$0] ?? 0 }
        }
    }

    public func revokeDevice(name: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE device SET token_sha256 = ? || id WHERE name = ?", arguments: [Device.revokedTokenMark, name])
            return db.changesCount > 0
        }
    }

    public func removeDevice(name: String) async throws -> StoreCounts? {
        try await pool.write { db in
            guard let id = try String.fetchOne(db, sql: "SELECT id FROM device WHERE name = ?", arguments: [name]) else { return nil }
            try db.execute(sql: "DELETE FROM run_view WHERE device_id = ?", arguments: [id])
            for table in Schema.deviceHealthTables { try db.execute(sql: "DELETE FROM \(table) WHERE device_id = ?", arguments: [id]) }
            var deleted: [String: Int] = [:]
            for table in StoreCounts.deviceTables {
                try db.execute(sql: "DELETE FROM \(table) WHERE \(table == "device" ? "id" : "device_id") = ?", arguments: [id])
                deleted[table] = db.changesCount
            }
            return StoreCounts.tabulate(StoreCounts.deviceTables) { deleted[$0] ?? 0 }
        }
    }

    public func setPassword(accountID: String, passwordHash: String) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE account SET password_bcrypt = ? WHERE id = ?", arguments: [passwordHash, accountID])
            try db.execute(sql: "DELETE FROM session WHERE account_id = ?", arguments: [accountID])
            // Every e-mailed link of the account dies with the old password: an older reset link
            // (a copy in a stolen mailbox) must not set another.
            try db.execute(sql: "DELETE FROM account_token WHERE account_id = ?", arguments: [accountID])
        }
    }

    public func addSession(_ session: StoredSession) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO session (id_sha256, account_id, csrf, created_ms, seen_ms) VALUES (?, ?, ?, ?, ?)",
                           arguments: [session.idHash, session.accountID, session.csrf, session.createdMs, session.seenMs])
        }
    }

    public func session(idHash: String) async throws -> StoredSession? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM session WHERE id_sha256 = ?", arguments: [idHash]).map { row in
                StoredSession(idHash: row["id_sha256"], accountID: row["account_id"], csrf: row["csrf"], createdMs: row["created_ms"],
                              seenMs: row["seen_ms"])
            }
        }
    }

    public func touchSession(idHash: String, seenMs: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE session SET seen_ms = MAX(seen_ms, ?) WHERE id_sha256 = ?", arguments: [seenMs, idHash])
        }
    }

    public func deleteSession(idHash: String) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM session WHERE id_sha256 = ?", arguments: [idHash]) }
    }

    public func deleteExpiredSessions(idleBeforeMs: Int64, createdBeforeMs: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM session WHERE seen_ms < ? OR created_ms < ?", arguments: [idleBeforeMs, createdBeforeMs])
        }
    }

    public func addAccountToken(_ token: AccountToken, mail: OutboxMail) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO account_token (token_sha256, account_id, purpose, expires_ms) VALUES (?, ?, ?, ?)",
                           arguments: [token.hash, token.accountID, token.purpose, token.expiresMs])
            try Self.queueMail(mail, in: db)
        }
    }

    public func queueMail(_ mail: OutboxMail) async throws {
        try await pool.write { db in try Self.queueMail(mail, in: db) }
    }

    private static func queueMail(_ mail: OutboxMail, in db: Database) throws {
        try db.execute(sql: "INSERT INTO outbox (channel, target, payload, next_attempt_ms) VALUES ('email', ?, ?, 0)",
                       arguments: [mail.to, mail.payload])
    }

    public func takeAccountToken(hash: String, purpose: String, nowMs: Int64) async throws -> String? {
        try await pool.write { db in
            let row = try Row.fetchOne(db, sql: "SELECT account_id, purpose, expires_ms FROM account_token WHERE token_sha256 = ?", arguments: [hash])
            // Links nobody followed in time go here, at the rate links are followed.
            try db.execute(sql: "DELETE FROM account_token WHERE expires_ms <= ? AND token_sha256 <> ?", arguments: [nowMs, hash])
            guard let row else { return nil }
            try db.execute(sql: "DELETE FROM account_token WHERE token_sha256 = ?", arguments: [hash])
            let expires: Int64 = row["expires_ms"]
            return row["purpose"] == purpose && expires > nowMs ? row["account_id"] : nil
        }
    }

    public func putChunk(_ chunk: StoredChunk, device: String) async throws -> PutResult {
        try await pool.write { db in
            if let digest = try String.fetchOne(
                db, sql: "SELECT digest FROM chunk WHERE device_id = ? AND run_id = ? AND seq = ?",
                arguments: [device, chunk.runID, chunk.seq]) {
                return digest == chunk.digest ? .unchanged : .conflict
            }
            try db.execute(
                sql: "INSERT INTO chunk (device_id, run_id, seq, body, content_encoding, digest, samples) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [device, chunk.runID, chunk.seq, Data(chunk.body), chunk.contentEncoding, chunk.digest, chunk.samples])
            return .created
        }
    }

    public func putSummary(_ summary: StoredSummary, device: String) async throws -> PutResult {
        try await pool.write { db in
            let stored = try String.fetchOne(
                db, sql: "SELECT summary FROM run WHERE device_id = ? AND run_id = ?", arguments: [device, summary.runID])
            if stored == summary.json { return .unchanged }
            for statement in Schema.runFigureDeletes { try db.execute(sql: statement, arguments: [device, summary.runID]) }
            try db.execute(
                sql: """
                    INSERT INTO run (device_id, run_id, summary, chunks, start_ms) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (device_id, run_id) DO UPDATE SET summary = excluded.summary, chunks = excluded.chunks,
                    start_ms = excluded.start_ms
                    """,
                arguments: [device, summary.runID, summary.json, summary.chunks, summary.startMs])
            return stored == nil ? .created : .replaced
        }
    }

    public func completeRuns(device: String, limit: Int, offset: Int) async throws -> [StoredSummary] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT r.run_id, r.summary, r.chunks, r.start_ms FROM run r
                    WHERE r.device_id = ? AND \(Schema.completeRunCondition)
                    ORDER BY r.start_ms DESC, r.run_id DESC LIMIT ? OFFSET ?
                    """,
                arguments: [device, limit, offset]
            ).map(Self.summary)
        }
    }

    public func completeRun(device: String, runID: String) async throws -> StoredSummary? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT r.run_id, r.summary, r.chunks, r.start_ms FROM run r
                    WHERE r.device_id = ? AND r.run_id = ? AND \(Schema.completeRunCondition)
                    """,
                arguments: [device, runID]
            ).map(Self.summary)
        }
    }

    private static func summary(_ row: Row) -> StoredSummary {
        StoredSummary(runID: row["run_id"], json: row["summary"], chunks: row["chunks"], startMs: row["start_ms"])
    }

    public func chunks(device: String, runID: String, count: Int) async throws -> [StoredChunk] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT run_id, seq, body, content_encoding, digest, samples FROM chunk
                    WHERE device_id = ? AND run_id = ? AND seq < ? ORDER BY seq
                    """,
                arguments: [device, runID, count]
            ).map(Self.chunk)
        }
    }

    public func chunk(device: String, runID: String, seq: Int) async throws -> StoredChunk? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT run_id, seq, body, content_encoding, digest, samples FROM chunk WHERE device_id = ? AND run_id = ? AND seq = ?",
                arguments: [device, runID, seq]
            ).map(Self.chunk)
        }
    }

    private static func chunk(_ row: Row) -> StoredChunk {
        let body: Data = row["body"]
        return StoredChunk(runID: row["run_id"], seq: row["seq"], body: Array(body), contentEncoding: row["content_encoding"],
                           digest: row["digest"], samples: row["samples"])
    }

    public func chunkNumbers(device: String, runID: String, below count: Int) async throws -> [Int] {
        try await pool.read { db in
            try Int.fetchAll(db, sql: "SELECT seq FROM chunk WHERE device_id = ? AND run_id = ? AND seq < ? ORDER BY seq",
                             arguments: [device, runID, count])
        }
    }

    public func storedSamples(device: String, runID: String, below count: Int, excluding: Int?) async throws -> Int {
        try await pool.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COALESCE(SUM(samples), 0) FROM chunk WHERE device_id = ? AND run_id = ? AND seq < ? AND seq <> ?",
                arguments: [device, runID, count, excluding ?? -1]) ?? 0
        }
    }

    public func deleteRun(device: String, runID: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM run_view WHERE device_id = ? AND run_id = ?", arguments: [device, runID])
            for statement in Schema.runFigureDeletes { try db.execute(sql: statement, arguments: [device, runID]) }
            try db.execute(sql: "DELETE FROM run WHERE device_id = ? AND run_id = ?", arguments: [device, runID])
            let runs = db.changesCount
            try db.execute(sql: "DELETE FROM chunk WHERE device_id = ? AND run_id = ?", arguments: [device, runID])
            return runs + db.changesCount > 0
        }
    }

    public func accountRuns(accountID: String, fromMs: Int64?, toMs: Int64?, limit: Int, offset: Int) async throws -> [AccountRun] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT r.device_id, r.run_id, r.summary, r.chunks, r.start_ms FROM run r JOIN device d ON d.id = r.device_id
                    WHERE d.account_id = ? AND r.start_ms >= ? AND r.start_ms < ? AND \(Schema.completeRunCondition)
                    ORDER BY r.start_ms DESC, r.run_id DESC LIMIT ? OFFSET ?
                    """,
                arguments: [accountID, fromMs ?? Int64.min, toMs ?? Int64.max, limit, offset]
            ).map { AccountRun(deviceID: $0["device_id"], summary: Self.summary($0)) }
        }
    }

    public func accountRun(accountID: String, runID: String) async throws -> AccountRun? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT r.device_id, r.run_id, r.summary, r.chunks, r.start_ms FROM run r JOIN device d ON d.id = r.device_id
                    WHERE d.account_id = ? AND r.run_id = ? AND \(Schema.completeRunCondition) ORDER BY r.device_id LIMIT 1
                    """,
                arguments: [accountID, runID]
            ).map { AccountRun(deviceID: $0["device_id"], summary: Self.summary($0)) }
        }
    }

    public func runView(device: String, runID: String, source: String) async throws -> String? {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT body FROM run_view WHERE device_id = ? AND run_id = ? AND source = ?",
                                arguments: [device, runID, source])
        }
    }

    public func putRunView(device: String, runID: String, source: String, body: String, records: String) async throws {
        try await pool.write { db in
            // Only for a run still stored: a view computed while the run was deleted is dropped.
            try db.execute(
                sql: """
                    INSERT INTO run_view (device_id, run_id, source, body, records)
                    SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM run WHERE device_id = ? AND run_id = ?)
                    ON CONFLICT (device_id, run_id) DO UPDATE SET source = excluded.source, body = excluded.body, records = excluded.records
                    """,
                arguments: [device, runID, source, body, records, device, runID])
        }
    }

    public func runRecords(accountID: String) async throws -> [String: (source: String, records: String)] {
        try await pool.read { db in
            var records: [String: (source: String, records: String)] = [:]
            let rows = try Row.fetchAll(
                db, sql: "SELECT v.run_id, v.source, v.records FROM run_view v JOIN device d ON d.id = v.device_id WHERE d.account_id = ?",
                arguments: [accountID])
            for row in rows { records[row["run_id"]] = (row["source"], row["records"]) }
            return records
        }
    }

    public func setAccountSettings(id: String, timezone: String, maxHeartRate: Int?) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE account SET timezone = ?, max_hr = ? WHERE id = ?", arguments: [timezone, maxHeartRate, id])
        }
    }

    public func goals(accountID: String) async throws -> [Goal] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM goal WHERE account_id = ? ORDER BY period DESC, distance_m, id", arguments: [accountID])
                .compactMap { row in
                    Goal.Period(rawValue: row["period"]).map { Goal(id: row["id"], accountID: row["account_id"], period: $0, distanceM: row["distance_m"]) }
                }
        }
    }

    public func addGoal(_ goal: Goal) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO goal (id, account_id, period, distance_m) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                           arguments: [goal.id, goal.accountID, goal.period.rawValue, goal.distanceM])
            return db.changesCount > 0
        }
    }

    public func updateGoal(_ goal: Goal) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "UPDATE goal SET period = ?, distance_m = ? WHERE id = ? AND account_id = ?",
                           arguments: [goal.period.rawValue, goal.distanceM, goal.id, goal.accountID])
            return db.changesCount > 0
        }
    }

    public func deleteGoal(accountID: String, id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM goal WHERE id = ? AND account_id = ?", arguments: [id, accountID])
            return db.changesCount > 0
        }
    }

    public func putPosition(device: String, timeMs: Int64, json: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO position (device_id, time_ms, body) VALUES (?, ?, ?)
                    ON CONFLICT (device_id) DO UPDATE SET time_ms = excluded.time_ms, body = excluded.body
                    WHERE excluded.time_ms >= position.time_ms
                    """,
                arguments: [device, timeMs, json])
            return db.changesCount > 0
        }
    }

    public func position(device: String) async throws -> String? {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT body FROM position WHERE device_id = ?", arguments: [device])
        }
    }

    public func recordAlertMessage(_ message: AlertMessageInput) async throws -> AlertRecordResult {
        try await pool.write { db in
            let state = AlertState(messageType: message.type) ?? .open
            try db.execute(
                sql: """
                    INSERT INTO alert (device_id, alert_id, secret, state, kind, test, created_ms, latest_sequence, latest_body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """,
                arguments: [message.device, message.alertID, message.newSecret, state.rawValue, message.kind, message.test,
                            message.receivedMs, message.sequence, message.json])
            guard let row = try Row.fetchOne(
                db, sql: "SELECT secret, latest_sequence FROM alert WHERE device_id = ? AND alert_id = ?",
                arguments: [message.device, message.alertID])
            else { throw StoreError("alert \(message.alertID) vanished while being recorded") }
            let secret: String = row["secret"]
            let latest: Int = row["latest_sequence"]
            try db.execute(
                sql: """
                    INSERT INTO alert_message (device_id, alert_id, sequence, type, body, received_ms)
                    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """,
                arguments: [message.device, message.alertID, message.sequence, message.type, message.json, message.receivedMs])
            guard db.changesCount > 0 else {
                let stored = try String.fetchOne(
                    db, sql: "SELECT body FROM alert_message WHERE device_id = ? AND alert_id = ? AND sequence = ?",
                    arguments: [message.device, message.alertID, message.sequence])
                return stored == message.json ? .repeated(secret: secret) : .conflict(secret: secret)
            }
            if message.sequence > latest {
                try db.execute(
                    sql: "UPDATE alert SET state = ?, latest_sequence = ?, latest_body = ? WHERE device_id = ? AND alert_id = ?",
                    arguments: [state.rawValue, message.sequence, message.json, message.device, message.alertID])
            }
            for target in message.forward {
                try db.execute(
                    sql: "INSERT INTO outbox (channel, target, payload, next_attempt_ms, device_id) VALUES (?, ?, ?, ?, ?)",
                    arguments: [target.channel, target.target, target.payload(secret), message.receivedMs, message.device])
            }
            return .created(secret: secret)
        }
    }

    // Every alert read has a LIMIT (issue 31): a device's many alerts or an alert's many
    // messages never come into memory at once.
    public func alerts(device: String, state: AlertState?, before: AlertCursor?, limit: Int) async throws -> [StoredAlert] {
        try await pool.read { db in
            var sql = "SELECT * FROM alert WHERE device_id = ?"
            var arguments: StatementArguments = [device]
            if let state {
                sql += " AND state = ?"
                arguments += [state.rawValue]
            }
            if let before {
                sql += " AND (created_ms < ? OR (created_ms = ? AND alert_id > ?))"
                arguments += [before.createdMs, before.createdMs, before.alertID]
            }
            arguments += [max(0, limit)]
            return try Row.fetchAll(db, sql: sql + " ORDER BY created_ms DESC, alert_id LIMIT ?", arguments: arguments).map(Self.alert)
        }
    }

    public func alert(device: String, alertID: String) async throws -> StoredAlert? {
        // A path parameter may hold a NUL (%00), which PostgreSQL text cannot: no alert has one.
        guard !alertID.utf8.contains(0) else { return nil }
        return try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM alert WHERE device_id = ? AND alert_id = ?", arguments: [device, alertID]).map(Self.alert)
        }
    }

    public func alert(secret: String, messages limit: Int) async throws -> AlertMessages? {
        try await pool.read { db in
            guard let alert = try Row.fetchOne(db, sql: "SELECT * FROM alert WHERE secret = ?", arguments: [secret]).map(Self.alert)
            else { return nil }
            let key: StatementArguments = [alert.device, alert.alertID]
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM alert_message WHERE device_id = ? AND alert_id = ?", arguments: key) ?? 0
            // The first message (where and when it was raised) and the newest others.
            let rows = try Row.fetchAll(
                db, sql: """
                    SELECT sequence, body FROM (SELECT sequence, body FROM alert_message WHERE device_id = ?1 AND alert_id = ?2
                                                ORDER BY sequence LIMIT 1)
                    UNION
                    SELECT sequence, body FROM (SELECT sequence, body FROM alert_message WHERE device_id = ?1 AND alert_id = ?2
                                                ORDER BY sequence DESC LIMIT ?3)
                    ORDER BY sequence
                    """,
                arguments: [alert.device, alert.alertID, max(0, limit - 1)])
            return AlertMessages(alert: alert, messages: rows.map { $0["body"] }, count: count)
        }
    }

    private static func alert(_ row: Row) -> StoredAlert {
        StoredAlert(alertID: row["alert_id"], device: row["device_id"], secret: row["secret"],
                    state: AlertState(rawValue: row["state"]) ?? .open, kind: row["kind"], test: row["test"],
                    createdMs: row["created_ms"], latestSequence: row["latest_sequence"], latestJSON: row["latest_body"])
    }

    public func addNotice(_ notice: StoredNotice) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO notice (id, device_id, text, created_ms, delivered_ms) VALUES (?, ?, ?, ?, ?)",
                           arguments: [notice.id, notice.device, notice.text, notice.createdMs, notice.deliveredMs])
        }
    }

    public func pendingNotices(device: String, limit: Int) async throws -> [StoredNotice] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM notice WHERE device_id = ? AND delivered_ms IS NULL ORDER BY created_ms, id LIMIT ?",
                             arguments: [device, limit]).map(Self.notice)
        }
    }

    public func notices(device: String) async throws -> [StoredNotice] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM notice WHERE device_id = ? ORDER BY created_ms, id", arguments: [device]).map(Self.notice)
        }
    }

    private static func notice(_ row: Row) -> StoredNotice {
        StoredNotice(id: row["id"], device: row["device_id"], text: row["text"], createdMs: row["created_ms"], deliveredMs: row["delivered_ms"])
    }

    public func acknowledgeNotices(device: String, ids: [String], nowMs: Int64) async throws -> [String] {
        try await pool.write { db in
            var unknown: [String] = []
            for id in ids where try Bool.fetchOne(db, sql: "SELECT 1 FROM notice WHERE id = ? AND device_id = ?", arguments: [id, device]) == nil {
                unknown.append(id)
            }
            guard unknown.isEmpty else { return unknown }
            for id in ids {
                try db.execute(sql: "UPDATE notice SET delivered_ms = ? WHERE id = ? AND device_id = ? AND delivered_ms IS NULL",
                               arguments: [nowMs, id, device])
            }
            return []
        }
    }

    public func deviceState(device: String) async throws -> StoredDeviceState? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT received_ms, body FROM device_state WHERE device_id = ?", arguments: [device]).map { row in
                StoredDeviceState(receivedMs: row["received_ms"], json: row["body"])
            }
        }
    }

    public func claimOutbox(nowMs: Int64, leaseUntilMs: Int64, limit: Int) async throws -> [OutboxItem] {
        try await pool.write { db in
            let items = try Row.fetchAll(
                db,
                sql: "\(Self.outboxSelect) WHERE delivered_ms IS NULL AND next_attempt_ms <= ? ORDER BY id LIMIT ?",
                arguments: [nowMs, limit]
            ).map(Self.outboxItem)
            for item in items {
                try db.execute(sql: "UPDATE outbox SET next_attempt_ms = ? WHERE id = ?", arguments: [leaseUntilMs, item.id])
            }
            return items
        }
    }

    public func outboxDelivered(id: Int64, nowMs: Int64) async throws {
        try await pool.write { db in
            // An account's e-mail held a single-use link: once sent, only that it was sent stays.
            try db.execute(sql: """
                UPDATE outbox SET attempts = attempts + 1, delivered_ms = ?, last_error = NULL,
                    payload = CASE WHEN device_id IS NULL THEN '' ELSE payload END WHERE id = ?
                """,
                           arguments: [nowMs, id])
        }
    }

    public func outboxFailed(id: Int64, error: String, nextAttemptMs: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE outbox SET attempts = attempts + 1, last_error = ?, next_attempt_ms = ? WHERE id = ?",
                           arguments: [error, nextAttemptMs, id])
        }
    }

    public func outbox() async throws -> [OutboxItem] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "\(Self.outboxSelect) ORDER BY id").map(Self.outboxItem)
        }
    }

    /// Outbox rows with the webhook secret of their device (gone with the device: unsigned).
    private static let outboxSelect = """
        SELECT outbox.*, (SELECT webhook_secret FROM device WHERE device.id = outbox.device_id) AS signing_secret FROM outbox
        """

    private static func outboxItem(_ row: Row) -> OutboxItem {
        OutboxItem(id: row["id"], channel: row["channel"], target: row["target"], payload: row["payload"],
                   attempts: row["attempts"], deliveredMs: row["delivered_ms"], lastError: row["last_error"],
                   signingSecret: row["signing_secret"])
    }

    public func counts() async throws -> StoreCounts {
        try await pool.read { db in
            try StoreCounts.tabulate { table in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0 }
        }
    }
}
