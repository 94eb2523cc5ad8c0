import PostgresNIO

/// The training plan in PostgreSQL (`CloudStore`'s plan methods).
extension PostgresCloudStore {
    private static let sessionColumns = "id, account_id, name, steps, start_date, weekdays, weeks"

    private static func planSessions(_ rows: PostgresRowSequence) async throws -> [PlanSession] {
        var sessions: [PlanSession] = []
        for try await (id, account, name, steps, start, weekdays, weeks) in rows.decode((String, String, String, String, String, Int, Int).self) {
            sessions.append(PlanSession(id: id, accountID: account, name: name, stepsJSON: steps, startDate: start, weekdays: weekdays, weeks: weeks))
        }
        return sessions
    }

    public func planSessions(accountID: String, from: String, through: String) async throws -> [PlanSession] {
        var query: PostgresQuery = "SELECT "
        query.sql += Self.sessionColumns
        query.sql += " FROM plan_session WHERE account_id = $1 AND start_date <= $2 AND end_date >= $3 ORDER BY start_date, id LIMIT $4"
        query.binds.append(accountID)
        query.binds.append(through)
        query.binds.append(from)
        query.binds.append(PlanSession.maxPerAccount)
        return try await Self.planSessions(client.query(query, logger: logger))
    }

    public func planSession(accountID: String, id: String) async throws -> PlanSession? {
        var query: PostgresQuery = "SELECT "
        query.sql += Self.sessionColumns + " FROM plan_session WHERE id = $1 AND account_id = $2"
        query.binds.append(id)
        query.binds.append(accountID)
        return try await Self.planSessions(client.query(query, logger: logger)).first
    }

    public func addPlanSession(_ session: PlanSession, limit: Int) async throws -> Bool {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            // The account's row locked: two instances adding at once cannot both pass the limit.
            try await connection.query("SELECT id FROM account WHERE id = \(session.accountID) FOR UPDATE", logger: logger)
            let counted = try await connection.query("SELECT COUNT(*)::BIGINT FROM plan_session WHERE account_id = \(session.accountID)",
                                                     logger: logger)
            guard try await Self.first(counted, as: Int64.self) ?? 0 < Int64(limit) else { return false }
            let rows = try await connection.query(
                """
                INSERT INTO plan_session (id, account_id, name, steps, start_date, weekdays, weeks, end_date)
                VALUES (\(session.id), \(session.accountID), \(session.name), \(session.stepsJSON), \(session.startDate), \(session.weekdays),
                \(session.weeks), \(session.endDate)) ON CONFLICT (id) DO NOTHING RETURNING id
                """, logger: logger)
            return try await Self.first(rows, as: String.self) != nil
        }
    }

    public func updatePlanSession(_ session: PlanSession) async throws -> Bool {
        let rows = try await client.query(
            """
            UPDATE plan_session SET name = \(session.name), steps = \(session.stepsJSON), start_date = \(session.startDate),
            weekdays = \(session.weekdays), weeks = \(session.weeks), end_date = \(session.endDate)
            WHERE id = \(session.id) AND account_id = \(session.accountID) RETURNING id
            """, logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }

    public func deletePlanSession(accountID: String, id: String) async throws -> Bool {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query("DELETE FROM plan_session WHERE id = \(id) AND account_id = \(accountID) RETURNING id", logger: logger)
            guard try await Self.first(rows, as: String.self) != nil else { return false }
            try await connection.query("DELETE FROM plan_done WHERE session_id = \(id) AND account_id = \(accountID)", logger: logger)
            return true
        }
    }

    public func planDone(accountID: String, from: String, through: String) async throws -> [PlanDone] {
        let rows = try await client.query(
            """
            SELECT session_id, date, account_id, run_device_id, run_id, done_ms FROM plan_done
            WHERE account_id = \(accountID) AND date >= \(from) AND date <= \(through)
            """, logger: logger)
        var done: [PlanDone] = []
        for try await (session, date, account, device, run, ms) in rows.decode((String, String, String, String?, String?, Int64).self) {
            done.append(PlanDone(sessionID: session, date: date, accountID: account, runDeviceID: device, runID: run, doneMs: ms))
        }
        return done
    }

    public func markPlanDone(_ done: PlanDone) async throws -> Bool {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection in
            let owned = try await connection.query(
                "SELECT id FROM plan_session WHERE id = \(done.sessionID) AND account_id = \(done.accountID)", logger: logger)
            guard try await Self.first(owned, as: String.self) != nil else { return false }
            var query = PostgresQuery(unsafeSQL: Self.numbered(SQLiteCloudStore.markDone) + " RETURNING session_id")
            query.binds.append(done.sessionID)
            query.binds.append(done.date)
            query.binds.append(done.accountID)
            query.binds.append(done.occurrenceID)
            query.binds.append(done.runDeviceID)
            query.binds.append(done.runID)
            query.binds.append(done.doneMs)
            return try await Self.first(connection.query(query, logger: logger), as: String.self) != nil
        }
    }

    public func unmarkPlanDone(accountID: String, sessionID: String, date: String) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM plan_done WHERE session_id = \(sessionID) AND date = \(date) AND account_id = \(accountID) RETURNING session_id",
            logger: logger)
        return try await Self.first(rows, as: String.self) != nil
    }
}
