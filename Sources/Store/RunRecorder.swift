import PacerCore

/// Records one run into the store: collects what the pipeline produces and commits it in batches,
/// one transaction (one fsync) each.
///
/// A batch is committed once its newest item is `flushInterval` of run time past the last
/// committed one. What a power cut loses is what was not committed, so the run time lost (last
/// item received minus last item durable) stays under `flushInterval` whatever the sampling
/// period: 4 s against the 5 s budget. Committing more often costs the SD card at least a 4 KB
/// page per commit (tools/bench-storage measures it).
public struct RunRecorder: Sendable {
    public static let defaultFlushInterval = 4.0

    public let store: RunStore
    public let runID: Int64
    public let runStart: Timestamp
    public var flushInterval: Double
    private var batch = TrackBatch()
    /// Run time of the newest item already committed (the run's start before the first commit).
    private var durableUntil: Timestamp
    private var splits: [Split] = []
    private var laps: [Lap] = []

    /// Starts a new run in the store.
    public init(store: RunStore, uuid: String, startTime: Timestamp, following followed: FollowedWorkout? = nil,
                flushInterval: Double = defaultFlushInterval) throws(StoreError) {
        self.store = store
        self.runStart = startTime
        self.flushInterval = flushInterval
        durableUntil = startTime
        runID = try store.beginRun(uuid: uuid, startTime: startTime, following: followed)
    }

    /// Continues a run that `RunStore.resume` set recording again; its stored batches, splits and
    /// laps stay as they are and new batches follow them.
    public init(continuing runID: Int64, store: RunStore, startTime: Timestamp, durableUntil: Timestamp,
                flushInterval: Double = defaultFlushInterval) {
        self.store = store
        self.runID = runID
        self.runStart = startTime
        self.flushInterval = flushInterval
        self.durableUntil = durableUntil
    }

    /// A gpsd JSON line exactly as received. `time` is the run time it belongs to, when known.
    public mutating func record(rawLine: String, at time: Timestamp?) {
        batch.rawLines.append(rawLine)
        if let time { batch.note(time) }
    }

    /// Keeps what the store needs from the tracker's decisions.
    public mutating func record(_ events: [TrackerEvent]) {
        for event in events {
            switch event {
            case .sample(let sample):
                batch.samples.append(sample)
                batch.note(sample.time)
            case .split(let split):
                batch.splits.append(split)
                splits.append(split)
            case .lap(let lap):
                batch.laps.append(lap)
                laps.append(lap)
            default:
                break
            }
        }
    }

    public mutating func record(_ reading: HeartRateSample) {
        batch.heartRate.append(reading)
        batch.note(reading.time)
    }

    /// Commits when the batch reaches `flushInterval` past what is durable. Returns true when it committed.
    @discardableResult
    public mutating func flushIfDue() throws(StoreError) -> Bool {
        guard let last = batch.lastTime, last.seconds(since: durableUntil) >= flushInterval else { return false }
        try flush()
        return true
    }

    /// Commits whatever is collected (on stop, on SIGTERM).
    public mutating func flush() throws(StoreError) {
        guard !batch.isEmpty else { return }
        try store.append(batch, runID: runID, runStart: runStart)
        if let last = batch.lastTime, last > durableUntil { durableUntil = last }
        batch = TrackBatch()
    }

    /// Commits the rest and closes the run with its summary.
    public mutating func finish(summary: RunSummary) throws(StoreError) {
        try flush()
        try store.finishRun(runID, summary: summary, splits: splits, laps: laps)
    }
}
