import Logging
import PacerContract
import PostgresNIO

extension PostgresCloudStore {
    /// `sql` (`HealthSQL`, with `?N`) and its values in order.
    private static func query(_ sql: String, _ bind: (inout PostgresBindings) -> Void) -> PostgresQuery {
        var query = PostgresQuery(unsafeSQL: numbered(sql))
        bind(&query.binds)
        return query
    }

    static func deleteFigures(_ connection: PostgresConnection, device: String, runID: String, logger: Logger) async throws {
        for statement in Schema.runFigureDeletes {
            try await connection.query(query(statement) { $0.append(device); $0.append(runID) }, logger: logger)
        }
    }

    public func runsWithoutFigures(accountID: String, limit: Int) async throws -> [AccountRun] {
        let rows = try await client.query(Self.query(HealthSQL.runsWithoutFigures) {
            $0.append(accountID); $0.append(RunFigures.version); $0.append(limit)
        }, logger: logger)
        var runs: [AccountRun] = []
        for try await (device, runID, json, chunks, startMs) in rows.decode((String, String, String, Int, Int64).self) {
            runs.append(AccountRun(deviceID: device, summary: StoredSummary(runID: runID, json: json, chunks: chunks, startMs: startMs)))
        }
        return runs
    }

    public func putRunFigures(_ figures: RunFigures) async throws {
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            // FOR UPDATE: a new summary (putSummary locks the row too) waits, or is seen.
            let current = try await connection.query(Self.query(HealthSQL.summaryIsCurrent + " FOR UPDATE") {
                $0.append(figures.deviceID); $0.append(figures.runID); $0.append(figures.summaryJSON)
            }, logger: logger)
            guard try await Self.first(current, as: Int.self) != nil else { return }
            try await Self.deleteFigures(connection, device: figures.deviceID, runID: figures.runID, logger: logger)
            try await connection.query(Self.query(HealthSQL.insertFigures) {
                $0.append(figures.deviceID); $0.append(figures.runID); $0.append(RunFigures.version); $0.append(figures.startMs)
                $0.append(figures.distanceM); $0.append(figures.movingS); $0.append(figures.hrAvg); $0.append(figures.hrMax)
                $0.append(figures.heartRateSeconds)
            }, logger: logger)
            for effort in figures.bestEfforts {
                try await connection.query(Self.query(HealthSQL.insertEffort) {
                    $0.append(figures.deviceID); $0.append(figures.runID); $0.append(effort.name); $0.append(effort.seconds); $0.append(figures.startMs)
                }, logger: logger)
            }
        }
    }

    public func runTotals(accountID: String) async throws -> [RunTotal] {
        let rows = try await client.query(Self.query(HealthSQL.runTotals) { $0.append(accountID) }, logger: logger)
        var totals: [RunTotal] = []
        for try await (runID, startMs, distance, moving) in rows.decode((String, Int64, Double, Double?).self) {
            totals.append(RunTotal(runID: runID, startMs: startMs, distanceM: distance, movingS: moving ?? 0))
        }
        return totals
    }

    public func records(accountID: String) async throws -> [RecordEffort] {
        let rows = try await client.query(Self.query(HealthSQL.records) { $0.append(accountID) }, logger: logger)
        var records: [RecordEffort] = []
        for try await (name, seconds, runID, startMs) in rows.decode((String, Double, String, Int64).self) {
            records.append(RecordEffort(name: name, seconds: seconds, runID: runID, startMs: startMs))
        }
        return records
    }

    public func runHeartRates(accountID: String, fromMs: Int64, limit: Int) async throws -> [RunHeartRate] {
        let rows = try await client.query(Self.query(HealthSQL.runHeartRates) {
            $0.append(accountID); $0.append(fromMs); $0.append(limit)
        }, logger: logger)
        var runs: [RunHeartRate] = []
        for try await (runID, startMs, average, maximum, seconds) in rows.decode((String, Int64, Double?, Int?, String).self) {
            runs.append(RunHeartRate(runID: runID, startMs: startMs, hrAvg: average, hrMax: maximum, heartRateSeconds: seconds))
        }
        return runs
    }

    public func putDeviceState(device: String, receivedMs: Int64, json: String, daily: [DeviceState.DailyHeartRate]) async throws {
        let logger = logger
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO device_state (device_id, received_ms, body) VALUES (\(device), \(receivedMs), \(json))
                ON CONFLICT (device_id) DO UPDATE SET received_ms = excluded.received_ms, body = excluded.body
                """, logger: logger)
            for day in daily {
                try await connection.query(Self.query(HealthSQL.upsertDay) {
                    $0.append(device); $0.append(day.date); $0.append(day.count); $0.append(day.min_bpm); $0.append(day.resting_bpm)
                    $0.append(receivedMs)
                }, logger: logger)
            }
        }
    }

    public func heartRateDays(accountID: String, fromDate: String) async throws -> [HeartRateDay] {
        let rows = try await client.query(Self.query(HealthSQL.heartRateDays) { $0.append(accountID); $0.append(fromDate) }, logger: logger)
        var days: [HeartRateDay] = []
        for try await (date, count, minimum, resting) in rows.decode((String, Int, Int?, Int?).self) {
            days.append(HeartRateDay(date: date, count: count, minBpm: minimum, restingBpm: resting))
        }
        return HealthSQL.onePerDate(days)
    }
}
