import FoundationEssentials
import SQLite
import PacerCore

/// The upload outbox: a finished run becomes its chunks and its summary, written in one
/// transaction, so what is sent is fixed (a retry sends the same bytes; the server de-duplicates
/// by run UUID and sequence). Rows go when acknowledged; the run is `uploaded` with its summary.
extension RunStore {
    /// Finished or interrupted runs not yet in the outbox, oldest first.
    public func runsToEnqueue() throws(StoreError) -> [StoredRun] {
        try read("reading runs to upload") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM run WHERE upload_state = 'pending' AND state != 'recording' ORDER BY id")
                .map(Self.storedRun)
        }
    }

    /// Puts a run's chunks and summary in the outbox and marks it `uploading`.
    public func enqueue(runID: Int64, chunks: [[UInt8]], summary: [UInt8], at time: Timestamp) throws(StoreError) {
        try write("queueing run \(runID) for upload") { db in
            let state = try String.fetchOne(db, sql: "SELECT upload_state FROM run WHERE id = ?", arguments: [runID])
            guard let state else { throw StoreError.noSuchRun(runID) }
            guard state == "pending" else { return }
            for (sequence, chunk) in chunks.enumerated() {
                try db.execute(sql: "INSERT INTO outbox (kind, run_id, sequence, payload, created_ms) VALUES ('run', ?, ?, ?, ?)",
                               arguments: [runID, sequence, Data(chunk), time.milliseconds])
            }
            try db.execute(sql: "INSERT INTO outbox (kind, run_id, sequence, payload, created_ms) VALUES ('run', ?, -1, ?, ?)",
                           arguments: [runID, Data(summary), time.milliseconds])
            try db.execute(sql: "UPDATE run SET upload_state = 'uploading' WHERE id = ?", arguments: [runID])
        }
    }

    /// Replaces the live position waiting (only the newest matters).
    public func setLivePosition(_ payload: [UInt8], at time: Timestamp) throws(StoreError) {
        try write("queueing the live position") { db in
            try db.execute(sql: "DELETE FROM outbox WHERE kind = 'position'")
            try db.execute(sql: "INSERT INTO outbox (kind, run_id, sequence, payload, created_ms) VALUES ('position', NULL, 0, ?, ?)",
                           arguments: [Data(payload), time.milliseconds])
        }
    }

    /// The next thing to send: the live position first, then the oldest run's lowest chunk, its
    /// summary last. Items set aside are skipped.
    public func nextOutboxItem() throws(StoreError) -> OutboxItem? {
        try read("reading the outbox") { db in
            let sql = """
                SELECT o.id, o.kind, o.run_id, o.sequence, o.payload, o.attempts, o.last_error, r.uuid
                FROM outbox o LEFT JOIN run r ON r.id = o.run_id
                WHERE o.refused_ms IS NULL
                ORDER BY o.kind = 'run', o.run_id, o.sequence < 0, o.sequence
                LIMIT 1
                """
            guard let row = try Row.fetchOne(db, sql: sql) else { return nil }
            let kind: OutboxItem.Kind
            if row["kind"] as String == "position" {
                kind = .position
            } else {
                let sequence: Int = row["sequence"]
                let uuid: String = row["uuid"]
                if sequence >= 0 {
                    kind = .chunk(runUUID: uuid, sequence: sequence)
                } else {
                    // Ordered last of its run: first only once no chunk of it is left.
                    kind = .summary(runUUID: uuid)
                }
            }
            let payload: Data = row["payload"]
            return OutboxItem(id: row["id"], kind: kind, runID: row["run_id"], payload: [UInt8](payload), attempts: row["attempts"],
                              lastError: row["last_error"])
        }
    }

    /// The server has it: gone from the outbox; a summary makes the run `uploaded`.
    public func acknowledge(_ item: OutboxItem, at time: Timestamp) throws(StoreError) {
        try write("noting an upload") { db in
            try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [item.id])
            if case .summary = item.kind, let runID = item.runID {
                try db.execute(sql: "UPDATE run SET upload_state = 'uploaded', uploaded_ms = ? WHERE id = ?", arguments: [time.milliseconds, runID])
            }
        }
    }

    public func uploadFailed(_ item: OutboxItem, error: String) throws(StoreError) {
        try write("noting a failed upload") { db in
            try db.execute(sql: "UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?", arguments: [error, item.id])
        }
    }

    /// The server refused it for good (`error` says how): kept for `pacerctl status`, never sent
    /// again. A refused live position goes with the next one (`setLivePosition`).
    public func setAside(_ item: OutboxItem, error: String, at time: Timestamp) throws(StoreError) {
        try write("setting aside a refused upload") { db in
            try db.execute(sql: "UPDATE outbox SET attempts = attempts + 1, last_error = ?, refused_ms = ? WHERE id = ?",
                           arguments: [error, time.milliseconds, item.id])
        }
    }

    /// Items set aside, oldest refusal first: at most `limit`, and how many there are in all.
    public func refusedUploads(limit: Int) throws(StoreError) -> (items: [RefusedUpload], total: Int) {
        try read("listing refused uploads") { db in
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE refused_ms IS NOT NULL") ?? 0
            let rows = try Row.fetchAll(db, sql: """
                SELECT kind, run_id, sequence, last_error, refused_ms FROM outbox WHERE refused_ms IS NOT NULL
                ORDER BY refused_ms, id LIMIT ?
                """, arguments: [limit])
            let items = rows.map { row in
                let sequence: Int = row["sequence"]
                let what: RefusedUpload.What = row["kind"] as String == "position" ? .position : sequence < 0 ? .summary : .chunk(sequence)
                return RefusedUpload(what: what, runID: row["run_id"], error: row["last_error"] ?? "",
                                     refusedAt: Timestamp(milliseconds: row["refused_ms"]))
            }
            return (items, total)
        }
    }

    public func outboxCounts() throws(StoreError) -> OutboxCounts {
        try read("counting the outbox") { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(DISTINCT run_id) AS runs, COUNT(*) AS items, COALESCE(SUM(LENGTH(payload)), 0) AS bytes,
                       SUM(kind = 'position') AS positions
                FROM outbox WHERE refused_ms IS NULL
                """)
            let pending = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM run WHERE upload_state = 'pending' AND state != 'recording'") ?? 0
            return OutboxCounts(runs: (row?["runs"] ?? 0) + pending, items: row?["items"] ?? 0, bytes: row?["bytes"] ?? 0,
                                position: (row?["positions"] as Int? ?? 0) > 0)
        }
    }

}
