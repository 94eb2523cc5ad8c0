import GRDB

/// The training plan in SQLite (`CloudStore`'s plan methods).
extension SQLiteCloudStore {
    public func planSessions(accountID: String, from: String, through: String) async throws -> [PlanSession] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: """
                    SELECT * FROM plan_session WHERE account_id = ? AND start_date <= ? AND end_date >= ?
                    ORDER BY start_date, id LIMIT ?
                    """,
                arguments: [accountID, through, from, PlanSession.maxPerAccount]
            ).map(Self.planSessionRow)
        }
    }

    public func planSession(accountID: String, id: String) async throws -> PlanSession? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM plan_session WHERE id = ? AND account_id = ?", arguments: [id, accountID]).map(Self.planSessionRow)
        }
    }

    static func planSessionRow(_ row: Row) -> PlanSession {
        PlanSession(id: row["id"], accountID: row["account_id"], name: row["name"], stepsJSON: row["steps"], startDate: row["start_date"],
                    weekdays: row["weekdays"], weeks: row["weeks"])
    }

    public func addPlanSession(_ session: PlanSession, limit: Int) async throws -> Bool {
        try await pool.write { db in
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM plan_session WHERE account_id = ?", arguments: [session.accountID]) ?? 0
            guard count < limit else { return false }
            try db.execute(
                sql: """
                    INSERT INTO plan_session (id, account_id, name, steps, start_date, weekdays, weeks, end_date)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
                    """,
                arguments: [session.id, session.accountID, session.name, session.stepsJSON, session.startDate, session.weekdays, session.weeks,
                            session.endDate])
            return db.changesCount > 0
        }
    }

    public func updatePlanSession(_ session: PlanSession) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE plan_session SET name = ?, steps = ?, start_date = ?, weekdays = ?, weeks = ?, end_date = ?
                    WHERE id = ? AND account_id = ?
                    """,
                arguments: [session.name, session.stepsJSON, session.startDate, session.weekdays, session.weeks, session.endDate,
                            session.id, session.accountID])
            return db.changesCount > 0
        }
    }

    public func deletePlanSession(accountID: String, id: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM plan_session WHERE id = ? AND account_id = ?", arguments: [id, accountID])
            guard db.changesCount > 0 else { return false }
            try db.execute(sql: "DELETE FROM plan_done WHERE session_id = ? AND account_id = ?", arguments: [id, accountID])
            return true
        }
    }

    public func planDone(accountID: String, from: String, through: String) async throws -> [PlanDone] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM plan_done WHERE account_id = ? AND date >= ? AND date <= ?",
                             arguments: [accountID, from, through]).map { row in
                PlanDone(sessionID: row["session_id"], date: row["date"], accountID: row["account_id"], runDeviceID: row["run_device_id"],
                         runID: row["run_id"], doneMs: row["done_ms"])
            }
        }
    }

    public func markPlanDone(_ done: PlanDone) async throws -> Bool {
        try await pool.write { db in
            // Only the account's own session can be marked.
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM plan_session WHERE id = ? AND account_id = ?",
                                    arguments: [done.sessionID, done.accountID]) != nil else { return false }
            try db.execute(sql: Self.markDone, arguments: [done.sessionID, done.date, done.accountID, done.occurrenceID, done.runDeviceID,
                                                           done.runID, done.doneMs])
            return db.changesCount > 0
        }
    }

    /// A run's mark replaces a hand mark; nothing replaces a run's.
    static let markDone = """
        INSERT INTO plan_done (session_id, date, account_id, occurrence_id, run_device_id, run_id, done_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
        ON CONFLICT (session_id, date) DO UPDATE SET run_device_id = excluded.run_device_id, run_id = excluded.run_id, done_ms = excluded.done_ms
        WHERE plan_done.run_id IS NULL AND excluded.run_id IS NOT NULL
        """

    public func unmarkPlanDone(accountID: String, sessionID: String, date: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM plan_done WHERE session_id = ? AND date = ? AND account_id = ?", arguments: [sessionID, date, accountID])
            return db.changesCount > 0
        }
    }
}
