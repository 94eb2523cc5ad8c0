import PacerCore

public enum RunState: String, Sendable, Equatable {
    case recording, finished
    /// The recorder stopped without finishing it (crash, power cut, SIGKILL). Its data up to the
    /// last durable batch is intact and its summary was rebuilt from it; see `RunStore.recoverInterruptedRuns`.
    case interrupted
}

public enum UploadState: String, Sendable, Equatable {
    case pending, uploading, uploaded
}

/// A run as listed: identity, state and summary.
public struct StoredRun: Sendable, Equatable {
    /// The short number people use ("run 12").
    public var id: Int64
    /// The identity the cloud knows the run by.
    public var uuid: String
    public var state: RunState
    public var startTime: Timestamp
    public var endTime: Timestamp?
    public var distance: Double
    public var movingTime: Double
    public var elapsedTime: Double
    public var maxSpeed: Double
    public var heartRateAverage: Double?
    public var heartRateMax: Int?
    public var uploadState: UploadState
    /// True once retention removed the raw gpsd lines (the summary, samples and HR stay).
    public var rawPruned: Bool
    /// The workout the run followed, if any (`RunStore.beginRun`).
    public var followed: FollowedWorkout?

    public var averagePacePerKm: Double? { distance >= 1 && movingTime > 0 ? movingTime / distance * 1000 : nil }
}

/// One durable batch: everything recorded for a run since the previous batch.
public struct TrackBatch: Sendable, Equatable {
    public var samples: [TrackSample] = []
    public var heartRate: [HeartRateSample] = []
    /// gpsd JSON lines exactly as received, in order.
    public var rawLines: [String] = []
    /// Splits and laps completed in this batch: stored with it, so an interrupted run keeps them.
    public var splits: [Split] = []
    public var laps: [Lap] = []
    /// Run time (GPS time) of the first and last item.
    public var firstTime: Timestamp?
    public var lastTime: Timestamp?

    public init() {}

    public var isEmpty: Bool { samples.isEmpty && heartRate.isEmpty && rawLines.isEmpty && splits.isEmpty && laps.isEmpty }

    public mutating func note(_ time: Timestamp) {
        if firstTime.map({ time < $0 }) ?? true { firstTime = time }
        if lastTime.map({ time > $0 }) ?? true { lastTime = time }
    }
}

/// Heart-rate statistics of a run, from the readings that describe the heart (contact not denied).
public struct HeartRateStats: Sendable, Equatable {
    public var readings: Int
    public var average: Double
    public var minimum: Int
    public var maximum: Int
}

/// A run with everything the detail view shows.
public struct RunDetail: Sendable, Equatable {
    public var run: StoredRun
    public var splits: [Split]
    public var laps: [Lap]
    public var heartRate: HeartRateStats?
    public var sampleCount: Int
}
