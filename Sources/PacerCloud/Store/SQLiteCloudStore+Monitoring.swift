import GRDB

extension SQLiteCloudStore {
    public func addMonitorInvite(_ invite: MonitorInvite, mail: OutboxMail) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO monitor_invite (token_sha256, runner_id, email, created_ms, expires_ms) VALUES (?, ?, ?, ?, ?)",
                arguments: [invite.hash, invite.runnerID, invite.email, invite.createdMs, invite.expiresMs])
            try db.execute(sql: "INSERT INTO outbox (channel, target, payload, next_attempt_ms) VALUES ('email', ?, ?, 0)",
                           arguments: [mail.to, mail.payload])
        }
    }

    public func monitorInvite(hash: String, nowMs: Int64) async throws -> MonitorInvite? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM monitor_invite WHERE token_sha256 = ? AND expires_ms > ?", arguments: [hash, nowMs])
                .map(Self.invite)
        }
    }

    public func monitorInvites(runnerID: String, nowMs: Int64) async throws -> [MonitorInvite] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM monitor_invite WHERE runner_id = ? AND expires_ms > ? ORDER BY created_ms DESC",
                             arguments: [runnerID, nowMs]).map(Self.invite)
        }
    }

    private static func invite(_ row: Row) -> MonitorInvite {
        MonitorInvite(hash: row["token_sha256"], runnerID: row["runner_id"], email: row["email"], createdMs: row["created_ms"],
                      expiresMs: row["expires_ms"])
    }

    public func acceptMonitorInvite(hash: String, monitorID: String, nowMs: Int64) async throws -> String? {
        try await pool.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT runner_id, expires_ms FROM monitor_invite WHERE token_sha256 = ?", arguments: [hash])
            else { return nil }
            try db.execute(sql: "DELETE FROM monitor_invite WHERE token_sha256 = ?", arguments: [hash])
            let runnerID: String = row["runner_id"], expires: Int64 = row["expires_ms"]
            guard expires > nowMs else { return nil }
            try db.execute(sql: "INSERT OR IGNORE INTO monitor_consent (runner_id, monitor_id, created_ms) VALUES (?, ?, ?)",
                           arguments: [runnerID, monitorID, nowMs])
            return runnerID
        }
    }

    public func endConsent(runnerID: String, monitorID: String) async throws -> Bool {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM monitor_consent WHERE runner_id = ? AND monitor_id = ?", arguments: [runnerID, monitorID])
            return db.changesCount > 0
        }
    }

    public func monitors(runnerID: String) async throws -> [Account] {
        try await consentedAccounts(joinOn: "monitor_id", where: "runner_id", runnerID)
    }

    public func watchedRunners(monitorID: String) async throws -> [Account] {
        try await consentedAccounts(joinOn: "runner_id", where: "monitor_id", monitorID)
    }

    private func consentedAccounts(joinOn column: String, where key: String, _ id: String) async throws -> [Account] {
        let ids = try await pool.read { db in
            try String.fetchAll(db, sql: "SELECT \(column) FROM monitor_consent WHERE \(key) = ? ORDER BY created_ms", arguments: [id])
        }
        var accounts: [Account] = []
        for id in ids { if let account = try await account(id: id) { accounts.append(account) } }
        return accounts
    }

    public func isMonitor(_ monitorID: String, of runnerID: String) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM monitor_consent WHERE runner_id = ? AND monitor_id = ?", arguments: [runnerID, monitorID])
                != nil
        }
    }

    public func device(id: String) async throws -> Device? {
        try await pool.read { db in try Row.fetchOne(db, sql: "SELECT * FROM device WHERE id = ?", arguments: [id]).map(Self.device) }
    }

    public func addAlertAnswer(_ answer: AlertAnswer) async throws -> AlertAnswer {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO alert_answer (device_id, alert_id, monitor_id, monitor_name, kind, text, created_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [answer.device, answer.alertID, answer.monitorID, answer.monitorName, answer.kind, answer.text, answer.createdMs])
            var stored = answer
            stored.id = db.lastInsertedRowID
            return stored
        }
    }

    public func alertAnswers(device: String, alertID: String) async throws -> [AlertAnswer] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM alert_answer WHERE device_id = ? AND alert_id = ? ORDER BY id", arguments: [device, alertID])
                .map(Self.answer)
        }
    }

    public func alertAnswers(device: String, alertID: String, newest limit: Int) async throws -> [AlertAnswer] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM (SELECT * FROM alert_answer WHERE device_id = ? AND alert_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id
                """, arguments: [device, alertID, max(0, limit)]).map(Self.answer)
        }
    }

    public func alertAnswers(device: String, after: Int64, limit: Int) async throws -> [AlertAnswer] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM alert_answer WHERE device_id = ? AND id > ? ORDER BY id LIMIT ?",
                             arguments: [device, after, limit]).map(Self.answer)
        }
    }

    private static func answer(_ row: Row) -> AlertAnswer {
        AlertAnswer(id: row["id"], device: row["device_id"], alertID: row["alert_id"], monitorID: row["monitor_id"],
                    monitorName: row["monitor_name"], kind: row["kind"], text: row["text"], createdMs: row["created_ms"])
    }

    public func addTrailPoint(device: String, runID: String, point: TrailPoint, forgetBeforeMs: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO position_trail (device_id, run_id, time_ms, lat, lon) VALUES (?, ?, ?, ?, ?)",
                           arguments: [device, runID, point.timeMs, point.lat, point.lon])
            try db.execute(sql: "DELETE FROM position_trail WHERE device_id = ? AND time_ms < ?", arguments: [device, forgetBeforeMs])
        }
    }

    public func addTrailBreak(device: String, runID: String, timeMs: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO position_trail (device_id, run_id, time_ms, lat, lon) VALUES (?, ?, ?, 0, 0)",
                           arguments: [device, runID + TrailBreak.suffix, timeMs])
        }
    }

    public func trail(device: String, runID: String, limit: Int) async throws -> [TrailPoint] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: """
                    SELECT time_ms, lat, lon, run_id FROM position_trail WHERE device_id = ? AND run_id IN (?, ?)
                    ORDER BY time_ms DESC LIMIT ?
                    """,
                arguments: [device, runID, runID + TrailBreak.suffix, limit]
            ).map { TrailPoint(timeMs: $0["time_ms"], lat: $0["lat"], lon: $0["lon"], isBreak: ($0["run_id"] as String) != runID) }.reversed()
        }
    }

    public func clearTrail(device: String) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM position_trail WHERE device_id = ?", arguments: [device]) }
    }

    public func forgetPosition(device: String) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM position WHERE device_id = ?", arguments: [device]) }
    }
}
