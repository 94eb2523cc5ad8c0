import PacerCore

/// Records one run into the store: collects what the pipeline produces and commits it in batches
/// of `flushInterval` seconds of run time, one transaction (one fsync) each.
///
/// The interval is the power-cut budget: what has not been committed is what a power cut loses,
/// so at most `flushInterval` plus one sample period (≤ 5 s at 1-2.5 s sampling). Shorter means
/// more commits, and every commit rewrites at least one 4 KB page on the SD card.
public struct RunRecorder: Sendable {
    public static let defaultFlushInterval = 3.0

    public let store: RunStore
    public let runID: Int64
    public let runStart: Timestamp
    public var flushInterval: Double
    private var batch = TrackBatch()
    private var splits: [Split] = []
    private var laps: [Lap] = []

    /// Starts a new run in the store.
    public init(store: RunStore, uuid: String, startTime: Timestamp, flushInterval: Double = defaultFlushInterval) throws(StoreError) {
        self.store = store
        self.runStart = startTime
        self.flushInterval = flushInterval
        runID = try store.beginRun(uuid: uuid, startTime: startTime)
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

    /// Commits when the batch spans `flushInterval` of run time. Returns true when it committed.
    @discardableResult
    public mutating func flushIfDue() throws(StoreError) -> Bool {
        guard let first = batch.firstTime, let last = batch.lastTime, last.seconds(since: first) >= flushInterval else {
            return false
        }
        try flush()
        return true
    }

    /// Commits whatever is collected (on stop, on SIGTERM).
    public mutating func flush() throws(StoreError) {
        guard !batch.isEmpty else { return }
        try store.append(batch, runID: runID, runStart: runStart)
        batch = TrackBatch()
    }

    /// Commits the rest and closes the run with its summary.
    public mutating func finish(summary: RunSummary) throws(StoreError) {
        try flush()
        try store.finishRun(runID, summary: summary, splits: splits, laps: laps)
    }
}
