import CloudModel
import PacerContract
import SQLKit

/// What each run adds to the statistics and health pages (`RunFigures`, computed once per run),
/// and the heartbeat's device state with its days of heart rate outside runs.
public struct HealthRepository: Sendable {
    let database: StoreDatabase

    private func read<Row: Decodable & Sendable>(_ type: Row.Type, _ query: SQLQueryString) async throws -> [Row] {
        try await database.read { try await $0.raw(query).rows(Row.self) }
    }

    /// The account's complete runs whose figures (of this `RunFigures.version`) are not stored, newest first.
    public func runsWithoutFigures(accountID: String, limit: Int) async throws -> [AccountRun] {
        try await read(RunRepository.AccountRunRow.self, """
            SELECT \(RunRepository.AccountRunRow.columns) FROM run r JOIN device d ON d.id = r.device_id
            LEFT JOIN run_figures f ON f.device_id = r.device_id AND f.run_id = r.run_id AND f.version = \(bind: RunFigures.version)
            WHERE d.account_id = \(bind: accountID) AND f.run_id IS NULL AND \(RunRepository.complete)
            ORDER BY r.start_ms DESC, r.run_id DESC LIMIT \(bind: limit)
            """).map(\.run)
    }

    /// Stores the figures when the summary they were computed from is still the run's.
    public func putRunFigures(_ figures: RunFigures) async throws {
        let lock = database.dialect.forUpdate
        try await database.transaction { db in
            guard try await db.raw("""
                SELECT 1 AS current FROM run WHERE device_id = \(bind: figures.deviceID) AND run_id = \(bind: figures.runID)
                AND summary = \(bind: figures.summaryJSON)\(unsafeRaw: lock)
                """).first() != nil else { return }
            try await RunRepository.deleteFigures(db, device: figures.deviceID, runID: figures.runID)
            try await db.raw("""
                INSERT INTO run_figures (device_id, run_id, version, start_ms, distance_m, moving_s, hr_avg, hr_max, hr_seconds, sport)
                VALUES (\(bind: figures.deviceID), \(bind: figures.runID), \(bind: RunFigures.version), \(bind: figures.startMs), \(bind: figures.distanceM),
                        \(bind: figures.movingS), \(bind: figures.hrAvg), \(bind: figures.hrMax), \(bind: figures.heartRateSeconds),
                        \(bind: figures.sport.rawValue))
                """).run()
            for effort in figures.bestEfforts {
                try await db.raw("""
                    INSERT INTO run_best_effort (device_id, run_id, name, seconds, start_ms)
                    VALUES (\(bind: figures.deviceID), \(bind: figures.runID), \(bind: effort.name), \(bind: effort.seconds), \(bind: figures.startMs))
                    """).run()
            }
        }
    }

    /// Every counted activity of the account (distance, moving time and sport), newest first: a
    /// row per activity, a thousand on the statistics page, so through `readColumns`.
    public func runTotals(accountID: String) async throws -> [RunTotal] {
        try await database.readColumns("""
            SELECT f.run_id, f.start_ms, f.distance_m, f.moving_s, f.sport FROM run_figures f JOIN device d ON d.id = f.device_id
            WHERE d.account_id = \(bind: accountID) AND f.distance_m IS NOT NULL ORDER BY f.start_ms DESC, f.run_id DESC
            """) { row in
            RunTotal(runID: try row.string("run_id"), startMs: try row.int64("start_ms"), distanceM: try row.double("distance_m"),
                     movingS: try row.optionalDouble("moving_s") ?? 0, sport: Sport(rawValue: try row.string("sport")) ?? .other)
        }
    }

    /// The account's best effort over each distance (the fastest; of equals, the newest), of
    /// believed runs only: another sport's or a doubted run's efforts are never records, even
    /// stored before the run became one.
    public func records(accountID: String) async throws -> [RecordEffort] {
        struct Row: Decodable { let name: String, seconds: Double, runId: String, startMs: Int64 }
        return try await read(Row.self, """
            SELECT name, seconds, run_id, start_ms FROM (
                SELECT e.name, e.seconds, e.run_id, e.start_ms,
                    ROW_NUMBER() OVER (PARTITION BY e.name ORDER BY e.seconds, e.start_ms DESC, e.run_id DESC) AS place
                FROM run_best_effort e JOIN device d ON d.id = e.device_id
                JOIN run r ON r.device_id = e.device_id AND r.run_id = e.run_id
                WHERE d.account_id = \(bind: accountID) AND r.sport = 'run' AND r.doubt IS NULL) ranked
            WHERE place = 1
            """).map { RecordEffort(name: $0.name, seconds: $0.seconds, runID: $0.runId, startMs: $0.startMs) }
    }

    /// The heart rate of the account's runs since `fromMs`, newest first, at most `limit`; read
    /// column by column, as `runTotals`.
    public func runHeartRates(accountID: String, fromMs: Int64, limit: Int) async throws -> [RunHeartRate] {
        try await database.readColumns("""
            SELECT f.run_id, f.start_ms, f.hr_avg, f.hr_max, f.hr_seconds FROM run_figures f JOIN device d ON d.id = f.device_id
            WHERE d.account_id = \(bind: accountID) AND f.start_ms >= \(bind: fromMs) AND f.distance_m IS NOT NULL
            ORDER BY f.start_ms DESC, f.run_id DESC LIMIT \(bind: limit)
            """) { row in
            RunHeartRate(runID: try row.string("run_id"), startMs: try row.int64("start_ms"), hrAvg: try row.optionalDouble("hr_avg"),
                         hrMax: try row.optionalInt("hr_max"), heartRateSeconds: try row.string("hr_seconds"))
        }
    }

    /// The device's latest state, with the days of heart rate it reports, in one transaction.
    public func putDeviceState(device: String, receivedMs: Int64, json: String, daily: [DeviceState.DailyHeartRate] = []) async throws {
        try await database.transaction { db in
            try await db.raw("""
                INSERT INTO device_state (device_id, received_ms, body) VALUES (\(bind: device), \(bind: receivedMs), \(bind: json))
                ON CONFLICT (device_id) DO UPDATE SET received_ms = excluded.received_ms, body = excluded.body
                """).run()
            for day in daily {
                try await db.raw("""
                    INSERT INTO hr_daily (device_id, date, count, min_bpm, resting_bpm, received_ms)
                    VALUES (\(bind: device), \(bind: day.date), \(bind: day.count), \(bind: day.min_bpm), \(bind: day.resting_bpm), \(bind: receivedMs))
                    ON CONFLICT (device_id, date) DO UPDATE SET count = excluded.count, min_bpm = excluded.min_bpm,
                    resting_bpm = excluded.resting_bpm, received_ms = excluded.received_ms
                    """).run()
            }
        }
    }

    /// The account's days of heart rate from `fromDate`, newest first, one per date (of several
    /// devices, the one with the most readings).
    public func heartRateDays(accountID: String, fromDate: String) async throws -> [HeartRateDay] {
        struct Row: Decodable { let date: String, count: Int, minBpm: Int?, restingBpm: Int? }
        let rows = try await read(Row.self, """
            SELECT h.date, h.count, h.min_bpm, h.resting_bpm FROM hr_daily h JOIN device d ON d.id = h.device_id
            WHERE d.account_id = \(bind: accountID) AND h.date >= \(bind: fromDate) ORDER BY h.date DESC, h.count DESC
            LIMIT \(literal: HealthSQL.maxDayRows)
            """)
        return HealthSQL.onePerDate(rows.map { HeartRateDay(date: $0.date, count: $0.count, minBpm: $0.minBpm, restingBpm: $0.restingBpm) })
    }
}
