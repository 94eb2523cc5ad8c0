import CloudModel
import SQLKit

/// Field SOS monitoring: invitations (by SHA-256) from runners, consents runner -> monitor,
/// monitors' answers to alerts, and the trail of live positions of the current run.
public struct MonitoringRepository: Sendable {
    let database: StoreDatabase

    struct InviteRow: Decodable {
        let tokenSha256: String, runnerId: String, email: String, createdMs: Int64, expiresMs: Int64
        static let columns: SQLQueryString = "token_sha256, runner_id, email, created_ms, expires_ms"
        var invite: MonitorInvite { MonitorInvite(hash: tokenSha256, runnerID: runnerId, email: email, createdMs: createdMs, expiresMs: expiresMs) }
    }

    struct AnswerRow: Decodable {
        let id: Int64, deviceId: String, alertId: String, monitorId: String, monitorName: String, kind: String, text: String?, createdMs: Int64
        static let columns: SQLQueryString = "id, device_id, alert_id, monitor_id, monitor_name, kind, text, created_ms"
        var answer: AlertAnswer {
            AlertAnswer(id: id, device: deviceId, alertID: alertId, monitorID: monitorId, monitorName: monitorName, kind: kind, text: text,
                        createdMs: createdMs)
        }
    }

    private func read<Row: Decodable & Sendable>(_ type: Row.Type, _ query: SQLQueryString) async throws -> [Row] {
        try await database.read { try await $0.raw(query).rows(Row.self) }
    }

    /// Stores the invitation and queues its e-mail in one transaction.
    public func addMonitorInvite(_ invite: MonitorInvite, mail: OutboxMail) async throws {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO monitor_invite (token_sha256, runner_id, email, created_ms, expires_ms)
                VALUES (\(bind: invite.hash), \(bind: invite.runnerID), \(bind: invite.email), \(bind: invite.createdMs), \(bind: invite.expiresMs))
                """).run()
            try await OutboxRepository.queue(mail, in: db)
        }
    }

    public func monitorInvite(hash: String, nowMs: Int64) async throws -> MonitorInvite? {
        try await read(InviteRow.self, """
            SELECT \(InviteRow.columns) FROM monitor_invite WHERE token_sha256 = \(bind: hash) AND expires_ms > \(bind: nowMs)
            """).first?.invite
    }

    public func monitorInvites(runnerID: String, nowMs: Int64) async throws -> [MonitorInvite] {
        try await read(InviteRow.self, """
            SELECT \(InviteRow.columns) FROM monitor_invite WHERE runner_id = \(bind: runnerID) AND expires_ms > \(bind: nowMs) ORDER BY created_ms DESC
            """).map(\.invite)
    }

    /// Takes the invitation (once: DELETE ... RETURNING) and, when it has not expired, records
    /// the consent; the runner's id, or nil.
    public func acceptMonitorInvite(hash: String, monitorID: String, nowMs: Int64) async throws -> String? {
        struct Row: Decodable { let runnerId: String, expiresMs: Int64 }
        return try await database.transaction { db in
            guard let invite = try await db.raw("DELETE FROM monitor_invite WHERE token_sha256 = \(bind: hash) RETURNING runner_id, expires_ms")
                .row(Row.self), invite.expiresMs > nowMs else { return nil }
            try await db.raw("""
                INSERT INTO monitor_consent (runner_id, monitor_id, created_ms) VALUES (\(bind: invite.runnerId), \(bind: monitorID), \(bind: nowMs))
                ON CONFLICT DO NOTHING
                """).run()
            return invite.runnerId
        }
    }

    public func endConsent(runnerID: String, monitorID: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                DELETE FROM monitor_consent WHERE runner_id = \(bind: runnerID) AND monitor_id = \(bind: monitorID) RETURNING runner_id
                """).first() != nil
        }
    }

    /// The runner's monitors, in the order they accepted.
    public func monitors(runnerID: String) async throws -> [Account] {
        try await read(AccountRepository.Row.self, """
            SELECT \(AccountRepository.Row.columns(prefix: "a")) FROM monitor_consent c JOIN account a ON a.id = c.monitor_id
            WHERE c.runner_id = \(bind: runnerID) ORDER BY c.created_ms
            """).map(\.stored.account)
    }

    /// The runners the monitor watches, in the order they were accepted.
    public func watchedRunners(monitorID: String) async throws -> [Account] {
        try await read(AccountRepository.Row.self, """
            SELECT \(AccountRepository.Row.columns(prefix: "a")) FROM monitor_consent c JOIN account a ON a.id = c.runner_id
            WHERE c.monitor_id = \(bind: monitorID) ORDER BY c.created_ms
            """).map(\.stored.account)
    }

    public func isMonitor(_ monitorID: String, of runnerID: String) async throws -> Bool {
        try await database.read { db in
            try await db.raw("SELECT 1 AS yes FROM monitor_consent WHERE runner_id = \(bind: runnerID) AND monitor_id = \(bind: monitorID)")
                .first() != nil
        }
    }

    // MARK: Answers

    /// Stores the answer; it with the id it was given.
    public func addAlertAnswer(_ answer: AlertAnswer) async throws -> AlertAnswer {
        try await database.transaction { db in
            let id = try await db.raw("""
                INSERT INTO alert_answer (device_id, alert_id, monitor_id, monitor_name, kind, text, created_ms)
                VALUES (\(bind: answer.device), \(bind: answer.alertID), \(bind: answer.monitorID), \(bind: answer.monitorName), \(bind: answer.kind),
                        \(bind: answer.text), \(bind: answer.createdMs))
                RETURNING id
                """).first()?.decode(column: "id", as: Int64.self)
            guard let id else { throw StoreError("the answer to alert \(answer.alertID) was not stored") }
            var stored = answer
            stored.id = id
            return stored
        }
    }

    public func alertAnswers(device: String, alertID: String) async throws -> [AlertAnswer] {
        try await read(AnswerRow.self, """
            SELECT \(AnswerRow.columns) FROM alert_answer WHERE device_id = \(bind: device) AND alert_id = \(bind: alertID) ORDER BY id
            """).map(\.answer)
    }

    /// The newest `limit` answers to the alert, oldest first.
    public func alertAnswers(device: String, alertID: String, newest limit: Int) async throws -> [AlertAnswer] {
        try await read(AnswerRow.self, """
            SELECT \(AnswerRow.columns) FROM (SELECT \(AnswerRow.columns) FROM alert_answer WHERE device_id = \(bind: device)
                AND alert_id = \(bind: alertID) ORDER BY id DESC LIMIT \(bind: max(0, limit))) AS newest ORDER BY id
            """).map(\.answer)
    }

    /// The device's answers after the one with id `after`, at most `limit`, oldest first.
    public func alertAnswers(device: String, after: Int64, limit: Int) async throws -> [AlertAnswer] {
        try await read(AnswerRow.self, """
            SELECT \(AnswerRow.columns) FROM alert_answer WHERE device_id = \(bind: device) AND id > \(bind: after) ORDER BY id LIMIT \(bind: limit)
            """).map(\.answer)
    }

    // MARK: The trail of the current run

    /// Adds the point and forgets the device's points from before `forgetBeforeMs`.
    public func addTrailPoint(device: String, runID: String, point: TrailPoint, forgetBeforeMs: Int64) async throws {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO position_trail (device_id, run_id, time_ms, lat, lon)
                VALUES (\(bind: device), \(bind: runID), \(bind: point.timeMs), \(bind: point.lat), \(bind: point.lon)) ON CONFLICT DO NOTHING
                """).run()
            try await db.raw("DELETE FROM position_trail WHERE device_id = \(bind: device) AND time_ms < \(bind: forgetBeforeMs)").run()
        }
    }

    /// A gap in the trail (the device lost the fix): kept under the run id with `TrailBreak.suffix`.
    public func addTrailBreak(device: String, runID: String, timeMs: Int64) async throws {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO position_trail (device_id, run_id, time_ms, lat, lon)
                VALUES (\(bind: device), \(bind: runID + TrailBreak.suffix), \(bind: timeMs), 0, 0) ON CONFLICT DO NOTHING
                """).run()
        }
    }

    /// The run's newest `limit` points and breaks, oldest first.
    public func trail(device: String, runID: String, limit: Int) async throws -> [TrailPoint] {
        struct Row: Decodable { let timeMs: Int64, lat: Double, lon: Double, runId: String }
        return try await read(Row.self, """
            SELECT time_ms, lat, lon, run_id FROM position_trail
            WHERE device_id = \(bind: device) AND run_id IN (\(bind: runID), \(bind: runID + TrailBreak.suffix))
            ORDER BY time_ms DESC LIMIT \(bind: limit)
            """).map { TrailPoint(timeMs: $0.timeMs, lat: $0.lat, lon: $0.lon, isBreak: $0.runId != runID) }.reversed()
    }

    public func clearTrail(device: String) async throws {
        try await database.transaction { try await $0.raw("DELETE FROM position_trail WHERE device_id = \(bind: device)").run() }
    }

    public func forgetPosition(device: String) async throws {
        try await database.transaction { try await $0.raw("DELETE FROM position WHERE device_id = \(bind: device)").run() }
    }
}

/// How a trail's breaks are kept in `position_trail` without another column: as rows of their
/// own run id, the run's id with this suffix (a run id is a UUID, so none ends with it).
enum TrailBreak {
    static let suffix = "/break"
}
