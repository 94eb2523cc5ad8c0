import GRDB
import PacerContract

extension SQLiteCloudStore {
    public func runsWithoutFigures(accountID: String, limit: Int) async throws -> [AccountRun] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: HealthSQL.runsWithoutFigures, arguments: [accountID, RunFigures.version, limit]).map { row in
                AccountRun(deviceID: row["device_id"], summary: StoredSummary(runID: row["run_id"], json: row["summary"], chunks: row["chunks"],
                                                                              startMs: row["start_ms"]))
            }
        }
    }

    public func putRunFigures(_ figures: RunFigures) async throws {
        try await pool.write { db in
            guard try Int.fetchOne(db, sql: HealthSQL.summaryIsCurrent, arguments: [figures.deviceID, figures.runID, figures.summaryJSON]) != nil
            else { return }
            for statement in Schema.runFigureDeletes { try db.execute(sql: statement, arguments: [figures.deviceID, figures.runID]) }
            try db.execute(sql: HealthSQL.insertFigures, arguments: [
                figures.deviceID, figures.runID, RunFigures.version, figures.startMs, figures.distanceM, figures.movingS, figures.hrAvg,
                figures.hrMax, figures.heartRateSeconds,
            ])
            for effort in figures.bestEfforts {
                try db.execute(sql: HealthSQL.insertEffort, arguments: [figures.deviceID, figures.runID, effort.name, effort.seconds, figures.startMs])
            }
        }
    }

    public func runTotals(accountID: String) async throws -> [RunTotal] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: HealthSQL.runTotals, arguments: [accountID]).map { row in
                RunTotal(runID: row["run_id"], startMs: row["start_ms"], distanceM: row["distance_m"], movingS: (row["moving_s"] as Double?) ?? 0)
            }
        }
    }

    public func records(accountID: String) async throws -> [RecordEffort] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: HealthSQL.records, arguments: [accountID]).map { row in
                RecordEffort(name: row["name"], seconds: row["seconds"], runID: row["run_id"], startMs: row["start_ms"])
            }
        }
    }

    public func runHeartRates(accountID: String, fromMs: Int64, limit: Int) async throws -> [RunHeartRate] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: HealthSQL.runHeartRates, arguments: [accountID, fromMs, limit]).map { row in
                RunHeartRate(runID: row["run_id"], startMs: row["start_ms"], hrAvg: row["hr_avg"], hrMax: row["hr_max"], heartRateSeconds: row["hr_seconds"])
            }
        }
    }

    public func putDeviceState(device: String, receivedMs: Int64, json: String, daily: [DeviceState.DailyHeartRate]) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO device_state (device_id, received_ms, body) VALUES (?, ?, ?)
                    ON CONFLICT (device_id) DO UPDATE SET received_ms = excluded.received_ms, body = excluded.body
                    """,
                arguments: [device, receivedMs, json])
            for day in daily {
                try db.execute(sql: HealthSQL.upsertDay, arguments: [device, day.date, day.count, day.min_bpm, day.resting_bpm, receivedMs])
            }
        }
    }

    public func heartRateDays(accountID: String, fromDate: String) async throws -> [HeartRateDay] {
        try await pool.read { db in
            HealthSQL.onePerDate(try Row.fetchAll(db, sql: HealthSQL.heartRateDays, arguments: [accountID, fromDate]).map { row in
                HeartRateDay(date: row["date"], count: row["count"], minBpm: row["min_bpm"], restingBpm: row["resting_bpm"])
            })
        }
    }
}
