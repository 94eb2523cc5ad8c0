import PostgresNIO

extension PostgresCloudStore {
    public func addMonitorInvite(_ invite: MonitorInvite, mail: OutboxMail) async throws {
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO monitor_invite (token_sha256, runner_id, email, created_ms, expires_ms)
                VALUES (\(invite.hash), \(invite.runnerID), \(invite.email), \(invite.createdMs), \(invite.expiresMs))
                """, logger: logger)
            try await connection.query(
                "INSERT INTO outbox (channel, target, payload, next_attempt_ms) VALUES ('email', \(mail.to), \(mail.payload), 0)", logger: logger)
        }
    }

    public func monitorInvite(hash: String, nowMs: Int64) async throws -> MonitorInvite? {
        try await Self.invites(client.query(
            """
            SELECT token_sha256, runner_id, email, created_ms, expires_ms FROM monitor_invite
            WHERE token_sha256 = \(hash) AND expires_ms > \(nowMs)
            """, logger: logger)).first
    }

    public func monitorInvites(runnerID: String, nowMs: Int64) async throws -> [MonitorInvite] {
        try await Self.invites(client.query(
            """
            SELECT token_sha256, runner_id, email, created_ms, expires_ms FROM monitor_invite
            WHERE runner_id = \(runnerID) AND expires_ms > \(nowMs) ORDER BY created_ms DESC
            """, logger: logger))
    }

    private static func invites(_ rows: PostgresRowSequence) async throws -> [MonitorInvite] {
        var invites: [MonitorInvite] = []
        for try await (hash, runner, email, created, expires) in rows.decode((String, String, String, Int64, Int64).self) {
            invites.append(MonitorInvite(hash: hash, runnerID: runner, email: email, createdMs: created, expiresMs: expires))
        }
        return invites
    }

    public func acceptMonitorInvite(hash: String, monitorID: String, nowMs: Int64) async throws -> String? {
        let logger = logger
        return try await client.withTransaction(logger: logger) { connection -> String? in
            // DELETE ... RETURNING: of two instances taking one invitation at once, one gets the row.
            let rows = try await connection.query(
                "DELETE FROM monitor_invite WHERE token_sha256 = \(hash) RETURNING runner_id, expires_ms", logger: logger)
            var found: (String, Int64)?
            for try await row in rows.decode((String, Int64).self) { found = row }
            guard let (runnerID, expires) = found, expires > nowMs else { return nil }
            try await connection.query(
                """
                INSERT INTO monitor_consent (runner_id, monitor_id, created_ms) VALUES (\(runnerID), \(monitorID), \(nowMs))
                ON CONFLICT DO NOTHING
                """, logger: logger)
            return runnerID
        }
    }

    public func endConsent(runnerID: String, monitorID: String) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM monitor_consent WHERE runner_id = \(runnerID) AND monitor_id = \(monitorID) RETURNING 1", logger: logger)
        return try await Self.count(rows) > 0
    }

    public func monitors(runnerID: String) async throws -> [Account] {
        try await consentedAccounts(client.query(
            "SELECT monitor_id FROM monitor_consent WHERE runner_id = \(runnerID) ORDER BY created_ms", logger: logger))
    }

    public func watchedRunners(monitorID: String) async throws -> [Account] {
        try await consentedAccounts(client.query(
            "SELECT runner_id FROM monitor_consent WHERE monitor_id = \(monitorID) ORDER BY created_ms", logger: logger))
    }

    private func consentedAccounts(_ rows: PostgresRowSequence) async throws -> [Account] {
        var ids: [String] = []
        for try await (id) in rows.decode(String.self) { ids.append(id) }
        var accounts: [Account] = []
        for id in ids { if let account = try await account(id: id) { accounts.append(account) } }
        return accounts
    }

    public func isMonitor(_ monitorID: String, of runnerID: String) async throws -> Bool {
        try await Self.count(client.query(
            "SELECT 1 FROM monitor_consent WHERE runner_id = \(runnerID) AND monitor_id = \(monitorID)", logger: logger)) > 0
    }

    public func device(id: String) async throws -> Device? {
        try await Self.devices(client.query(
            "SELECT id, name, email, webhook, created_at, token_sha256, account_id, last_seen_ms FROM device WHERE id = \(id)", logger: logger)).first
    }

    public func addAlertAnswer(_ answer: AlertAnswer) async throws -> AlertAnswer {
        let rows = try await client.query(
            """
            INSERT INTO alert_answer (device_id, alert_id, monitor_id, monitor_name, kind, text, created_ms)
            VALUES (\(answer.device), \(answer.alertID), \(answer.monitorID), \(answer.monitorName), \(answer.kind), \(answer.text),
                    \(answer.createdMs))
            RETURNING id
            """, logger: logger)
        var stored = answer
        stored.id = try await Self.first(rows, as: Int64.self) ?? 0
        return stored
    }

    private static let answerColumns = "id, device_id, alert_id, monitor_id, monitor_name, kind, text, created_ms"

    public func alertAnswers(device: String, alertID: String) async throws -> [AlertAnswer] {
        try await Self.answers(client.query(
            """
            SELECT \(unescaped: Self.answerColumns) FROM alert_answer WHERE device_id = \(device) AND alert_id = \(alertID) ORDER BY id
            """, logger: logger))
    }

    public func alertAnswers(device: String, alertID: String, newest limit: Int) async throws -> [AlertAnswer] {
        try await Self.answers(client.query(
            """
            SELECT \(unescaped: Self.answerColumns) FROM (SELECT \(unescaped: Self.answerColumns) FROM alert_answer
                WHERE device_id = \(device) AND alert_id = \(alertID) ORDER BY id DESC LIMIT \(max(0, limit))) AS newest ORDER BY id
            """, logger: logger))
    }

    public func alertAnswers(device: String, after: Int64, limit: Int) async throws -> [AlertAnswer] {
        try await Self.answers(client.query(
            """
            SELECT \(unescaped: Self.answerColumns) FROM alert_answer WHERE device_id = \(device) AND id > \(after) ORDER BY id LIMIT \(limit)
            """, logger: logger))
    }

    private static func answers(_ rows: PostgresRowSequence) async throws -> [AlertAnswer] {
        var answers: [AlertAnswer] = []
        for try await (id, device, alertID, monitorID, name, kind, text, created)
            in rows.decode((Int64, String, String, String, String, String, String?, Int64).self) {
            answers.append(AlertAnswer(id: id, device: device, alertID: alertID, monitorID: monitorID, monitorName: name, kind: kind,
                                       text: text, createdMs: created))
        }
        return answers
    }

    public func addTrailPoint(device: String, runID: String, point: TrailPoint, forgetBeforeMs: Int64) async throws {
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO position_trail (device_id, run_id, time_ms, lat, lon)
                VALUES (\(device), \(runID), \(point.timeMs), \(point.lat), \(point.lon)) ON CONFLICT DO NOTHING
                """, logger: logger)
            try await connection.query("DELETE FROM position_trail WHERE device_id = \(device) AND time_ms < \(forgetBeforeMs)", logger: logger)
        }
    }

    public func addTrailBreak(device: String, runID: String, timeMs: Int64) async throws {
        try await client.query(
            """
            INSERT INTO position_trail (device_id, run_id, time_ms, lat, lon)
            VALUES (\(device), \(runID + TrailBreak.suffix), \(timeMs), 0, 0) ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    public func trail(device: String, runID: String, limit: Int) async throws -> [TrailPoint] {
        let rows = try await client.query(
            """
            SELECT time_ms, lat, lon, run_id FROM position_trail WHERE device_id = \(device) AND run_id IN (\(runID), \(runID + TrailBreak.suffix))
            ORDER BY time_ms DESC LIMIT \(limit)
            """, logger: logger)
        var points: [TrailPoint] = []
        for try await (time, lat, lon, id) in rows.decode((Int64, Double, Double, String).self) {
            points.append(TrailPoint(timeMs: time, lat: lat, lon: lon, isBreak: id != runID))
        }
        return points.reversed()
    }

    public func clearTrail(device: String) async throws {
        try await client.query("DELETE FROM position_trail WHERE device_id = \(device)", logger: logger)
    }

    public func forgetPosition(device: String) async throws {
        try await client.query("DELETE FROM position WHERE device_id = \(device)", logger: logger)
    }
}
