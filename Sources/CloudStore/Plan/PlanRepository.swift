import CloudModel
import SQLKit

/// An account's training plan (sessions, and the occurrences done by a run or by hand) and its
/// distance goals.
public struct PlanRepository: Sendable {
    let database: StoreDatabase

    struct SessionRow: Decodable {
        let id: String, accountId: String, name: String, steps: String, startDate: String, weekdays: Int, weeks: Int
        static let columns: SQLQueryString = "id, account_id, name, steps, start_date, weekdays, weeks"
        var session: PlanSession {
            PlanSession(id: id, accountID: accountId, name: name, stepsJSON: steps, startDate: startDate, weekdays: weekdays, weeks: weeks)
        }
    }

    private func sessions(_ query: SQLQueryString) async throws -> [PlanSession] {
        try await database.read { try await $0.raw(query).rows(SessionRow.self).map(\.session) }
    }

    /// The account's sessions that can fall within `from...through` ("YYYY-MM-DD"), by start date.
    public func planSessions(accountID: String, from: String, through: String) async throws -> [PlanSession] {
        try await sessions("""
            SELECT \(SessionRow.columns) FROM plan_session
            WHERE account_id = \(bind: accountID) AND start_date <= \(bind: through) AND end_date >= \(bind: from)
            ORDER BY start_date, id LIMIT \(bind: PlanSession.maxPerAccount)
            """)
    }

    public func planSession(accountID: String, id: String) async throws -> PlanSession? {
        try await sessions("SELECT \(SessionRow.columns) FROM plan_session WHERE id = \(bind: id) AND account_id = \(bind: accountID)").first
    }

    /// Adds the session; false when its id is taken or the account has `limit` sessions already.
    public func addPlanSession(_ session: PlanSession, limit: Int) async throws -> Bool {
        let lock = database.dialect.forUpdate
        return try await database.transaction { db in
            // The account's row locked: two instances adding at once cannot both pass the limit.
            try await db.raw("SELECT id FROM account WHERE id = \(bind: session.accountID)\(unsafeRaw: lock)").run()
            let count = try await db.raw("SELECT COUNT(*) AS n FROM plan_session WHERE account_id = \(bind: session.accountID)")
                .first()?.decode(column: "n", as: Int.self) ?? 0
            guard count < limit else { return false }
            return try await db.raw("""
                INSERT INTO plan_session (id, account_id, name, steps, start_date, weekdays, weeks, end_date)
                VALUES (\(bind: session.id), \(bind: session.accountID), \(bind: session.name), \(bind: session.stepsJSON), \(bind: session.startDate),
                        \(bind: session.weekdays), \(bind: session.weeks), \(bind: session.endDate))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """).first() != nil
        }
    }

    /// Changes the account's session with this id (its done marks stay, by date); false when the account has none.
    public func updatePlanSession(_ session: PlanSession) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE plan_session SET name = \(bind: session.name), steps = \(bind: session.stepsJSON), start_date = \(bind: session.startDate),
                    weekdays = \(bind: session.weekdays), weeks = \(bind: session.weeks), end_date = \(bind: session.endDate)
                WHERE id = \(bind: session.id) AND account_id = \(bind: session.accountID) RETURNING id
                """).first() != nil
        }
    }

    /// Deletes the session with its done marks; false when the account has no session with that id.
    public func deletePlanSession(accountID: String, id: String) async throws -> Bool {
        try await database.transaction { db in
            guard try await db.raw("DELETE FROM plan_session WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING id").first() != nil
            else { return false }
            try await db.raw("DELETE FROM plan_done WHERE session_id = \(bind: id) AND account_id = \(bind: accountID)").run()
            return true
        }
    }

    /// The account's done marks on dates within `from...through`.
    public func planDone(accountID: String, from: String, through: String) async throws -> [PlanDone] {
        struct Row: Decodable { let sessionId: String, date: String, accountId: String, runDeviceId: String?, runId: String?, doneMs: Int64 }
        return try await database.read { db in
            try await db.raw("""
                SELECT session_id, date, account_id, run_device_id, run_id, done_ms FROM plan_done
                WHERE account_id = \(bind: accountID) AND date >= \(bind: from) AND date <= \(bind: through)
                """).rows(Row.self).map {
                PlanDone(sessionID: $0.sessionId, date: $0.date, accountID: $0.accountId, runDeviceID: $0.runDeviceId, runID: $0.runId, doneMs: $0.doneMs)
            }
        }
    }

    /// Marks the occurrence done. A run's mark replaces one made by hand; nothing replaces a
    /// run's. True when something was stored.
    public func markPlanDone(_ done: PlanDone) async throws -> Bool {
        try await database.transaction { db in
            // Only the account's own session can be marked.
            guard try await db.raw("SELECT id FROM plan_session WHERE id = \(bind: done.sessionID) AND account_id = \(bind: done.accountID)")
                .first() != nil else { return false }
            return try await db.raw("""
                INSERT INTO plan_done (session_id, date, account_id, occurrence_id, run_device_id, run_id, done_ms)
                VALUES (\(bind: done.sessionID), \(bind: done.date), \(bind: done.accountID), \(bind: done.occurrenceID), \(bind: done.runDeviceID),
                        \(bind: done.runID), \(bind: done.doneMs))
                ON CONFLICT (session_id, date) DO UPDATE SET run_device_id = excluded.run_device_id, run_id = excluded.run_id,
                    done_ms = excluded.done_ms
                WHERE plan_done.run_id IS NULL AND excluded.run_id IS NOT NULL
                RETURNING session_id
                """).first() != nil
        }
    }

    /// Takes the mark off the account's occurrence; false when it had none.
    public func unmarkPlanDone(accountID: String, sessionID: String, date: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                DELETE FROM plan_done WHERE session_id = \(bind: sessionID) AND date = \(bind: date) AND account_id = \(bind: accountID)
                RETURNING session_id
                """).first() != nil
        }
    }

    // MARK: Goals

    public func goals(accountID: String) async throws -> [Goal] {
        struct Row: Decodable { let id: String, accountId: String, period: String, distanceM: Double }
        return try await database.read { db in
            try await db.raw("""
                SELECT id, account_id, period, distance_m FROM goal WHERE account_id = \(bind: accountID) ORDER BY period DESC, distance_m, id
                """).rows(Row.self).compactMap { row in
                Goal.Period(rawValue: row.period).map { Goal(id: row.id, accountID: row.accountId, period: $0, distanceM: row.distanceM) }
            }
        }
    }

    /// Adds the goal; false when its id is taken.
    public func addGoal(_ goal: Goal) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO goal (id, account_id, period, distance_m) VALUES (\(bind: goal.id), \(bind: goal.accountID), \(bind: goal.period.rawValue),
                \(bind: goal.distanceM)) ON CONFLICT (id) DO NOTHING RETURNING id
                """).first() != nil
        }
    }

    /// Changes the account's goal with this id; false when the account has none.
    public func updateGoal(_ goal: Goal) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE goal SET period = \(bind: goal.period.rawValue), distance_m = \(bind: goal.distanceM)
                WHERE id = \(bind: goal.id) AND account_id = \(bind: goal.accountID) RETURNING id
                """).first() != nil
        }
    }

    /// False when the account has no goal with that id.
    public func deleteGoal(accountID: String, id: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("DELETE FROM goal WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING id").first() != nil
        }
    }
}
