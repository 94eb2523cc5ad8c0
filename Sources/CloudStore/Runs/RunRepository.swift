import CloudModel
import Foundation
import SQLKit

/// Runs as devices upload them (track chunks and a summary, each idempotent by its digest or
/// text), the account's view of them, and what a run's page shows, computed once.
public struct RunRepository: Sendable {
    let database: StoreDatabase

    struct SummaryRow: Decodable {
        let runId: String, summary: String, chunks: Int, startMs: Int64
        static let columns: SQLQueryString = "r.run_id, r.summary, r.chunks, r.start_ms"
        var stored: StoredSummary { StoredSummary(runID: runId, json: summary, chunks: chunks, startMs: startMs) }
    }

    struct AccountRunRow: Decodable {
        let deviceId: String, runId: String, summary: String, chunks: Int, startMs: Int64
        let sport: String, title: String?, doubt: String?, identity: String?
        static let columns: SQLQueryString = "r.device_id, r.run_id, r.summary, r.chunks, r.start_ms, r.sport, r.title, r.doubt, r.identity"
        var run: AccountRun {
            // A sport this version does not know counts as "other": never as a run.
            AccountRun(deviceID: deviceId, summary: StoredSummary(runID: runId, json: summary, chunks: chunks, startMs: startMs),
                       activity: RunActivity(sport: Sport(rawValue: sport) ?? .other, title: title, doubt: doubt, identity: identity))
        }
    }

    struct ChunkRow: Decodable {
        let runId: String, seq: Int, body: Data, contentEncoding: String?, digest: String, samples: Int?
        static let columns: SQLQueryString = "run_id, seq, body, content_encoding, digest, samples"
        var stored: StoredChunk { StoredChunk(runID: runId, seq: seq, body: Array(body), contentEncoding: contentEncoding, digest: digest, samples: samples) }
    }

    /// Complete runs: a summary, and as many chunks below its count as it names (kept in the
    /// row by `updateComplete`).
    static let complete: SQLQueryString = "r.complete"

    /// Sets the run's `complete` after one of its chunks or its summary was written, in that
    /// transaction (which took `lockRunWrites` first).
    static func updateComplete(_ db: any SQLDatabase, device: String, runID: String) async throws {
        try await db.raw("""
            UPDATE run SET complete = (chunks = (SELECT COUNT(*) FROM chunk c WHERE c.device_id = run.device_id AND c.run_id = run.run_id
                                                                                 AND c.seq < run.chunks))
            WHERE device_id = \(bind: device) AND run_id = \(bind: runID)
            """).run()
    }

    /// Begins a transaction writing the run's chunk or summary.
    private func lockRunWrites(_ db: any SQLDatabase, device: String, runID: String) async throws {
        if let lock = database.dialect.lockRunWrites(device: device, runID: runID) { try await db.raw(lock).run() }
    }

    private func read<Row: Decodable & Sendable>(_ type: Row.Type, _ query: SQLQueryString) async throws -> [Row] {
        try await database.read { try await $0.raw(query).rows(Row.self) }
    }

    /// Stores the chunk unless one with that number is; a different one there is a conflict.
    public func putChunk(_ chunk: StoredChunk, device: String) async throws -> PutResult {
        try await database.transaction { db in
            try await lockRunWrites(db, device: device, runID: chunk.runID)
            let inserted = try await db.raw("""
                INSERT INTO chunk (device_id, run_id, seq, body, content_encoding, digest, samples)
                VALUES (\(bind: device), \(bind: chunk.runID), \(bind: chunk.seq), \(bind: Data(chunk.body)), \(bind: chunk.contentEncoding),
                        \(bind: chunk.digest), \(bind: chunk.samples))
                ON CONFLICT DO NOTHING RETURNING seq
                """).first()
            if inserted != nil {
                try await Self.updateComplete(db, device: device, runID: chunk.runID)
                return .created
            }
            let stored = try await db.raw("""
                SELECT digest FROM chunk WHERE device_id = \(bind: device) AND run_id = \(bind: chunk.runID) AND seq = \(bind: chunk.seq)
                """).first()?.decode(column: "digest", as: String.self)
            return stored == chunk.digest ? .unchanged : .conflict
        }
    }

    /// Stores the summary; another summary of the run replaces it (and its figures go, to be
    /// computed again).
    public func putSummary(_ summary: StoredSummary, device: String) async throws -> PutResult {
        let lock = database.dialect.forUpdate
        return try await database.transaction { db in
            try await lockRunWrites(db, device: device, runID: summary.runID)
            let stored = try await db.raw("""
                SELECT summary FROM run WHERE device_id = \(bind: device) AND run_id = \(bind: summary.runID)\(unsafeRaw: lock)
                """).first()?.decode(column: "summary", as: String.self)
            if stored == summary.json { return .unchanged }
            try await Self.deleteFigures(db, device: device, runID: summary.runID)
            try await db.raw("""
                INSERT INTO run (device_id, run_id, summary, chunks, start_ms)
                VALUES (\(bind: device), \(bind: summary.runID), \(bind: summary.json), \(bind: summary.chunks), \(bind: summary.startMs))
                ON CONFLICT (device_id, run_id) DO UPDATE SET summary = excluded.summary, chunks = excluded.chunks, start_ms = excluded.start_ms
                """).run()
            try await Self.updateComplete(db, device: device, runID: summary.runID)
            return stored == nil ? .created : .replaced
        }
    }

    /// What a run's figures are kept in, deleted with the run or a new summary.
    static func deleteFigures(_ db: any SQLDatabase, device: String, runID: String) async throws {
        for table in ["run_figures", "run_best_effort"] {
            try await db.raw("DELETE FROM \(ident: table) WHERE device_id = \(bind: device) AND run_id = \(bind: runID)").run()
        }
    }

    /// Complete runs only, newest first.
    public func completeRuns(device: String, limit: Int, offset: Int) async throws -> [StoredSummary] {
        try await read(SummaryRow.self, """
            SELECT \(SummaryRow.columns) FROM run r WHERE r.device_id = \(bind: device) AND \(Self.complete)
            ORDER BY r.start_ms DESC, r.run_id DESC LIMIT \(bind: limit) OFFSET \(bind: offset)
            """).map(\.stored)
    }

    /// The run's summary when the run is complete.
    public func completeRun(device: String, runID: String) async throws -> StoredSummary? {
        try await read(SummaryRow.self, """
            SELECT \(SummaryRow.columns) FROM run r WHERE r.device_id = \(bind: device) AND r.run_id = \(bind: runID) AND \(Self.complete)
            """).first?.stored
    }

    /// The complete run with what it is (its sport, title, doubt), by device.
    public func completeActivity(device: String, runID: String) async throws -> AccountRun? {
        try await read(AccountRunRow.self, """
            SELECT \(AccountRunRow.columns) FROM run r WHERE r.device_id = \(bind: device) AND r.run_id = \(bind: runID) AND \(Self.complete)
            """).first?.run
    }

    /// Sets what the imported file says the run is (its sport, name and identity) and whether it
    /// is believed: written at import time, after its summary.
    public func setActivity(device: String, runID: String, _ activity: RunActivity) async throws {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE run SET sport = \(bind: activity.sport.rawValue), title = \(bind: activity.title), doubt = \(bind: activity.doubt),
                identity = \(bind: activity.identity) WHERE device_id = \(bind: device) AND run_id = \(bind: runID)
                """).run()
        }
    }

    /// The device's run that `identity` recognises (the same activity from another file).
    public func runID(device: String, identity: String) async throws -> String? {
        try await database.read { db in
            try await db.raw("""
                SELECT run_id FROM run WHERE device_id = \(bind: device) AND identity = \(bind: identity) ORDER BY run_id LIMIT 1
                """).first()?.decode(column: "run_id", as: String.self)
        }
    }

    /// Chunks 0..<count in order.
    public func chunks(device: String, runID: String, count: Int) async throws -> [StoredChunk] {
        try await read(ChunkRow.self, """
            SELECT \(ChunkRow.columns) FROM chunk WHERE device_id = \(bind: device) AND run_id = \(bind: runID) AND seq < \(bind: count) ORDER BY seq
            """).map(\.stored)
    }

    /// One chunk (a run is read back one chunk at a time).
    public func chunk(device: String, runID: String, seq: Int) async throws -> StoredChunk? {
        try await read(ChunkRow.self, """
            SELECT \(ChunkRow.columns) FROM chunk WHERE device_id = \(bind: device) AND run_id = \(bind: runID) AND seq = \(bind: seq)
            """).first?.stored
    }

    /// The numbers of the stored chunks below `count`, without their bodies.
    public func chunkNumbers(device: String, runID: String, below count: Int) async throws -> [Int] {
        try await database.read { db in
            try await db.raw("""
                SELECT seq FROM chunk WHERE device_id = \(bind: device) AND run_id = \(bind: runID) AND seq < \(bind: count) ORDER BY seq
                """).all().map { try $0.decode(column: "seq", as: Int.self) }
        }
    }

    /// Samples in the run's chunks below `count`, leaving out chunk `excluding`.
    public func storedSamples(device: String, runID: String, below count: Int, excluding: Int?) async throws -> Int {
        try await database.read { db in
            try await db.raw("""
                SELECT CAST(COALESCE(SUM(samples), 0) AS BIGINT) AS samples FROM chunk
                WHERE device_id = \(bind: device) AND run_id = \(bind: runID) AND seq < \(bind: count) AND seq <> \(bind: excluding ?? -1)
                """).first()?.decode(column: "samples", as: Int.self) ?? 0
        }
    }

    /// Deletes the summary, every chunk, the view, the figures and the plan's "done" marks the run
    /// made (a mark by hand stays); false when nothing of that run is stored.
    public func deleteRun(device: String, runID: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("DELETE FROM run_view WHERE device_id = \(bind: device) AND run_id = \(bind: runID)").run()
            try await db.raw("DELETE FROM plan_done WHERE run_device_id = \(bind: device) AND run_id = \(bind: runID)").run()
            try await Self.deleteFigures(db, device: device, runID: runID)
            let runs = try await db.raw("DELETE FROM run WHERE device_id = \(bind: device) AND run_id = \(bind: runID) RETURNING run_id").all().count
            let chunks = try await db.raw("DELETE FROM chunk WHERE device_id = \(bind: device) AND run_id = \(bind: runID) RETURNING seq").all().count
            return runs + chunks > 0
        }
    }

    // MARK: The runner's pages

    /// Complete runs of the account's devices starting in [fromMs, toMs), newest first.
    public func accountRuns(accountID: String, fromMs: Int64?, toMs: Int64?, limit: Int, offset: Int) async throws -> [AccountRun] {
        try await read(AccountRunRow.self, """
            SELECT \(AccountRunRow.columns) FROM run r JOIN device d ON d.id = r.device_id
            WHERE d.account_id = \(bind: accountID) AND r.start_ms >= \(bind: fromMs ?? Int64.min) AND r.start_ms < \(bind: toMs ?? Int64.max)
            AND \(Self.complete)
            ORDER BY r.start_ms DESC, r.run_id DESC LIMIT \(bind: limit) OFFSET \(bind: offset)
            """).map(\.run)
    }

    /// One complete run of the account's devices; nil for another account's run as for none.
    public func accountRun(accountID: String, runID: String) async throws -> AccountRun? {
        try await read(AccountRunRow.self, """
            SELECT \(AccountRunRow.columns) FROM run r JOIN device d ON d.id = r.device_id
            WHERE d.account_id = \(bind: accountID) AND r.run_id = \(bind: runID) AND \(Self.complete) ORDER BY r.device_id LIMIT 1
            """).first?.run
    }

    /// A run's stored view (`RunView`) when it was computed from `source`.
    public func runView(device: String, runID: String, source: String) async throws -> String? {
        try await database.read { db in
            try await db.raw("""
                SELECT body FROM run_view WHERE device_id = \(bind: device) AND run_id = \(bind: runID) AND source = \(bind: source)
                """).first()?.decode(column: "body", as: String.self)
        }
    }

    /// Stores the view, only for a run still stored: one computed while the run was deleted is
    /// dropped. `doubt`: the view's verdict on the run (`RunDoubt`), kept in `run.doubt` for the list.
    public func putRunView(device: String, runID: String, source: String, body: String, records: String, doubt: String? = nil) async throws {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE run SET doubt = \(bind: doubt) WHERE device_id = \(bind: device) AND run_id = \(bind: runID)
                """).run()
            try await db.raw("""
                INSERT INTO run_view (device_id, run_id, source, body, records)
                SELECT \(bind: device), \(bind: runID), \(bind: source), \(bind: body), \(bind: records)
                WHERE EXISTS (SELECT 1 FROM run WHERE device_id = \(bind: device) AND run_id = \(bind: runID))
                ON CONFLICT (device_id, run_id) DO UPDATE SET source = excluded.source, body = excluded.body, records = excluded.records
                """).run()
        }
    }

    /// The records part of every stored view of the account's runs, by run id, with its source.
    public func runRecords(accountID: String) async throws -> [String: (source: String, records: String)] {
        struct Row: Decodable { let runId: String, source: String, records: String }
        let rows = try await read(Row.self, """
            SELECT v.run_id, v.source, v.records FROM run_view v JOIN device d ON d.id = v.device_id WHERE d.account_id = \(bind: accountID)
            """)
        var records: [String: (source: String, records: String)] = [:]
        for row in rows { records[row.runId] = (row.source, row.records) }
        return records
    }
}
