import PacerContract

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

/// Bounds and helpers of the health pages' reads.
enum HealthSQL {
    /// Days × devices: an account with a few devices over a year.
    static let maxDayRows = 2_000

    /// The newest first, one per date: the first row of each date (most readings).
    static func onePerDate(_ rows: [HeartRateDay]) -> [HeartRateDay] {
        var seen = Set<String>()
        return rows.filter { seen.insert($0.date).inserted }
    }
}
