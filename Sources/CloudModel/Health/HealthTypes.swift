import PacerContract

/// What one complete run adds to the statistics and health pages: computed once from its summary
/// and its view (`RunView`) when it is uploaded or imported, or by the first page that misses it.
public struct RunFigures: Sendable, Equatable {
    /// Bumped when what is computed changes: figures of an older version are computed again.
    public static let version = 2

    public struct Effort: Sendable, Equatable {
        public var name: String
        public var seconds: Double

        public init(name: String, seconds: Double) {
            self.name = name
            self.seconds = seconds
        }
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
    /// The run's sport: the statistics page counts runs apart from the other sports.
    public var sport: Sport

    public init(deviceID: String, runID: String, summaryJSON: String, startMs: Int64, distanceM: Double? = nil, movingS: Double? = nil,
                hrAvg: Double? = nil, hrMax: Int? = nil, heartRateSeconds: String, bestEfforts: [Effort], sport: Sport = .run) {
        self.sport = sport
        self.deviceID = deviceID
        self.runID = runID
        self.summaryJSON = summaryJSON
        self.startMs = startMs
        self.distanceM = distanceM
        self.movingS = movingS
        self.hrAvg = hrAvg
        self.hrMax = hrMax
        self.heartRateSeconds = heartRateSeconds
        self.bestEfforts = bestEfforts
    }
}

public struct RunTotal: Sendable, Equatable {
    public var runID: String
    public var startMs: Int64
    public var distanceM: Double
    public var movingS: Double
    public var sport: Sport

    public init(runID: String, startMs: Int64, distanceM: Double, movingS: Double, sport: Sport = .run) {
        self.sport = sport
        self.runID = runID
        self.startMs = startMs
        self.distanceM = distanceM
        self.movingS = movingS
    }
}

public struct RecordEffort: Sendable, Equatable {
    public var name: String
    public var seconds: Double
    public var runID: String
    public var startMs: Int64

    public init(name: String, seconds: Double, runID: String, startMs: Int64) {
        self.name = name
        self.seconds = seconds
        self.runID = runID
        self.startMs = startMs
    }
}

public struct RunHeartRate: Sendable, Equatable {
    public var runID: String
    public var startMs: Int64
    public var hrAvg: Double?
    public var hrMax: Int?
    /// [[bpm, seconds], …] as JSON.
    public var heartRateSeconds: String

    public init(runID: String, startMs: Int64, hrAvg: Double? = nil, hrMax: Int? = nil, heartRateSeconds: String) {
        self.runID = runID
        self.startMs = startMs
        self.hrAvg = hrAvg
        self.hrMax = hrMax
        self.heartRateSeconds = heartRateSeconds
    }
}

public struct HeartRateDay: Sendable, Equatable {
    public var date: String
    public var count: Int
    public var minBpm: Int?
    public var restingBpm: Int?

    public init(date: String, count: Int, minBpm: Int? = nil, restingBpm: Int? = nil) {
        self.date = date
        self.count = count
        self.minBpm = minBpm
        self.restingBpm = restingBpm
    }
}
