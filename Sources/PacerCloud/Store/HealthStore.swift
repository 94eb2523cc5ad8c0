import PacerContract

/// What the statistics and health pages read (issue 21): each run's figures, stored once per
/// run so that a page view reads a few light rows and never a track, and the heartbeat's daily
/// heart rate outside runs. Part of every `CloudStore`.
public protocol HealthStore: Sendable {
    /// Complete runs of the account without figures of this `RunFigures.version`, newest first.
    func runsWithoutFigures(accountID: String, limit: Int) async throws -> [AccountRun]
    /// Stores the run's figures in place of any, only while `figures.summaryJSON` is still the
    /// run's summary (figures of a summary replaced meanwhile are dropped).
    func putRunFigures(_ figures: RunFigures) async throws
    /// Distance and time of every counted run of the account, newest first (the order of `accountRuns`).
    func runTotals(accountID: String) async throws -> [RunTotal]
    /// The account's fastest effort at each record distance; on a tie the newest run's (the first
    /// in `accountRuns`' order).
    func records(accountID: String) async throws -> [RecordEffort]
    /// Heart rate of the account's counted runs from `fromMs`, newest first, at most `limit`.
    func runHeartRates(accountID: String, fromMs: Int64, limit: Int) async throws -> [RunHeartRate]

    /// Replaces the device's latest state and, in the same transaction, stores its days of heart
    /// rate outside runs (one row per device and date, replaced by a newer summary).
    func putDeviceState(device: String, receivedMs: Int64, json: String, daily: [DeviceState.DailyHeartRate]) async throws
    /// The account's days of heart rate from `fromDate` (`YYYY-MM-DD`), newest first; for a
    /// date several devices sent, the one with the most readings.
    func heartRateDays(accountID: String, fromDate: String) async throws -> [HeartRateDay]
}

extension HealthStore {
    /// A heartbeat without days.
    public func putDeviceState(device: String, receivedMs: Int64, json: String) async throws {
        try await putDeviceState(device: device, receivedMs: receivedMs, json: json, daily: [])
    }
}

/// What one complete run adds to the statistics and health pages: computed once from its summary
/// and its view (`RunView`) when it is uploaded or imported, or by the first page that misses it.
public struct RunFigures: Sendable, Equatable {
    /// Bumped when what is computed changes: figures of an older version are computed again.
    public static let version = 1

    public struct Effort: Sendable, Equatable {
        public var name: String
        public var seconds: Double
    }

    public var deviceID: String
    public var runID: String
    /// The summary they are computed from.
    public var summaryJSON: String
    public var startMs: Int64
    /// nil: the summary is not understood; the run counts on no page.
    public var distanceM: Double?
    public var movingS: Double?
    public var hrAvg: Double?
    public var hrMax: Int?
    /// `RunView.heartRateSeconds` as JSON: [[bpm, seconds], …].
    public var heartRateSeconds: String
    public var bestEfforts: [Effort]
}

public struct RunTotal: Sendable, Equatable {
    public var runID: String
    public var startMs: Int64
    public var distanceM: Double
    public var movingS: Double
}

public struct RecordEffort: Sendable, Equatable {
    public var name: String
    public var seconds: Double
    public var runID: String
    public var startMs: Int64
}

public struct RunHeartRate: Sendable, Equatable {
    public var runID: String
    public var startMs: Int64
    public var hrAvg: Double?
    public var hrMax: Int?
    /// [[bpm, seconds], …] as JSON.
    public var heartRateSeconds: String
}

public struct HeartRateDay: Sendable, Equatable {
    public var date: String
    public var count: Int
    public var minBpm: Int?
    public var restingBpm: Int?
}

/// The SQL both stores share (SQLite's `?` numbered `?N`; PostgreSQL's `$N`, `PostgresCloudStore.numbered`).
enum HealthSQL {
    static let runsWithoutFigures = """
        SELECT r.device_id, r.run_id, r.summary, r.chunks, r.start_ms FROM run r JOIN device d ON d.id = r.device_id
        LEFT JOIN run_figures f ON f.device_id = r.device_id AND f.run_id = r.run_id AND f.version = ?2
        WHERE d.account_id = ?1 AND f.run_id IS NULL AND \(Schema.completeRunCondition)
        ORDER BY r.start_ms DESC, r.run_id DESC LIMIT ?3
        """
    /// The run with this summary (`?3`), when it is still its summary.
    static let summaryIsCurrent = "SELECT 1 FROM run WHERE device_id = ?1 AND run_id = ?2 AND summary = ?3"
    static let insertFigures = """
        INSERT INTO run_figures (device_id, run_id, version, start_ms, distance_m, moving_s, hr_avg, hr_max, hr_seconds)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
        """
    static let insertEffort = "INSERT INTO run_best_effort (device_id, run_id, name, seconds, start_ms) VALUES (?1, ?2, ?3, ?4, ?5)"
    static let runTotals = """
        SELECT f.run_id, f.start_ms, f.distance_m, f.moving_s FROM run_figures f JOIN device d ON d.id = f.device_id
        WHERE d.account_id = ?1 AND f.distance_m IS NOT NULL ORDER BY f.start_ms DESC, f.run_id DESC
        """
    static let records = """
        SELECT name, seconds, run_id, start_ms FROM (
            SELECT e.name, e.seconds, e.run_id, e.start_ms,
                ROW_NUMBER() OVER (PARTITION BY e.name ORDER BY e.seconds, e.start_ms DESC, e.run_id DESC) AS place
            FROM run_best_effort e JOIN device d ON d.id = e.device_id WHERE d.account_id = ?1) ranked
        WHERE place = 1
        """
    static let runHeartRates = """
        SELECT f.run_id, f.start_ms, f.hr_avg, f.hr_max, f.hr_seconds FROM run_figures f JOIN device d ON d.id = f.device_id
        WHERE d.account_id = ?1 AND f.start_ms >= ?2 AND f.distance_m IS NOT NULL ORDER BY f.start_ms DESC, f.run_id DESC LIMIT ?3
        """
    static let upsertDay = """
        INSERT INTO hr_daily (device_id, date, count, min_bpm, resting_bpm, received_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        ON CONFLICT (device_id, date) DO UPDATE SET count = excluded.count, min_bpm = excluded.min_bpm,
        resting_bpm = excluded.resting_bpm, received_ms = excluded.received_ms
        """
    /// Days × devices: an account with a few devices over a year.
    static let maxDayRows = 2_000
    static let heartRateDays = """
        SELECT h.date, h.count, h.min_bpm, h.resting_bpm FROM hr_daily h JOIN device d ON d.id = h.device_id
        WHERE d.account_id = ?1 AND h.date >= ?2 ORDER BY h.date DESC, h.count DESC LIMIT \(maxDayRows)
        """

    /// The newest first, one per date: the first row of each date (most readings).
    static func onePerDate(_ rows: [HeartRateDay]) -> [HeartRateDay] {
        var seen = Set<String>()
        return rows.filter { seen.insert($0.date).inserted }
    }
}
