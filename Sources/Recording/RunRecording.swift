import FoundationEssentials
import PacerCore
import PacerReplay
import Store
import GPSD

/// One run being recorded: every input goes through the core and into the store, with the raw
/// gpsd lines it came from. The daemon feeds it live; `pacerctl replay --record` feeds it a log.
/// Both take this one path, which is why a replay of a run's raw lines gives the stored result.
///
/// The run's row is created with its first timed item (a fix or HR reading), so that its start is
/// on the GPS timeline. Until then, and whenever the store refuses a write (a full disk), what
/// arrives is kept in memory and written with the next successful commit: nothing is dropped.
public struct RunRecording: Sendable {
    public let store: RunStore
    public let uuid: String
    /// The workout this run follows, remembered with its row.
    public let followed: FollowedWorkout?
    private var tracker: RunTracker
    /// What the runner is told; cues wait in `cues` until the caller takes them.
    private var coachSlot: CoachSlot?
    private var cues: [Cue] = []
    private var recorder: RunRecorder?
    /// Items that arrived before the run's row existed.
    private var pending: [Pending] = []
    private var finished = false

    private enum Pending: Sendable {
        case rawLine(String)
        case events([TrackerEvent])
        case heartRate(HeartRateSample)
    }

    public init(store: RunStore, configuration: TrackerConfiguration, coach: Coach? = nil,
                uuid: String = UUID().uuidString.lowercased(), following followed: FollowedWorkout? = nil) {
        self.store = store
        self.uuid = uuid
        self.followed = followed
        coachSlot = coach.map(CoachSlot.init)
        tracker = RunTracker(configuration: configuration)
    }

    /// The cues decided since the last call, in order.
    public mutating func takeCues() -> [Cue] {
        defer { cues = [] }
        return cues
    }

    /// Feeds the coach something only the live daemon knows (batteries, the disk); its cues join
    /// the others.
    public mutating func coach(_ tell: (inout Coach) -> [Cue]) {
        guard let coachSlot else { return }
        cues += tell(&coachSlot.coach)
    }

    /// The run's number, once its row exists.
    public var runID: Int64? { recorder?.runID }
    public var runStart: Timestamp? { recorder?.runStart }
    public var summary: RunSummary { tracker.summary }
    public var counts: FixCounts { tracker.counts }
    public var isPaused: Bool { tracker.isPaused }
    public var lastSample: TrackSample? { tracker.lastSample }

    /// A raw line exactly as received, recorded before what is decoded from it.
    public mutating func record(rawLine: String) {
        if recorder != nil { recorder!.record(rawLine: rawLine, at: nil) } else { pending.append(.rawLine(rawLine)) }
    }

    /// Feeds one decoded input through the core; returns its decisions. A store error here is
    /// only about creating the run's row: the input is kept and the row retried with the next one.
    @discardableResult
    public mutating func ingest(_ item: ReplayInput) throws(StoreError) -> [TrackerEvent] {
        var events: [TrackerEvent] = []
        var itemTime: Timestamp?
        switch item {
        case .rawLine(let line):
            record(rawLine: line)
            return []
        case .fix(let fix):
            events = tracker.ingest(fix)
            itemTime = events.lazy.compactMap { if case .sample(let s) = $0 { s.time } else { nil } }.first
        case .heartRate(let reading):
            events = tracker.ingest(reading)
            itemTime = reading.time
        case .control(let control):
            events = tracker.apply(control)
        }
        if let coachSlot { cues += coachSlot.coach.observe(item, events: events) }
        if recorder == nil {
            if case .heartRate(let reading) = item { pending.append(.heartRate(reading)) }
            pending.append(.events(events))
            if let start = itemTime ?? pendingStart { try beginRun(at: start) }
            return events
        }
        if case .heartRate(let reading) = item { recorder!.record(reading) }
        recorder!.record(events)
        return events
    }

    /// Lets time pass without input (the daemon's tick): a lost GPS is noticed.
    public mutating func advance(to time: Timestamp) -> [TrackerEvent] {
        let events = tracker.advance(to: time)
        if let coachSlot { cues += coachSlot.coach.ingest(events) + coachSlot.coach.advance(to: time) }
        if recorder != nil { recorder!.record(events) } else if !events.isEmpty { pending.append(.events(events)) }
        return events
    }

    /// Commits a batch once it spans the flush interval of run time. True when it committed.
    @discardableResult
    public mutating func commitIfDue() throws(StoreError) -> Bool {
        guard recorder != nil else { return false }
        return try recorder!.flushIfDue()
    }

    /// Commits whatever is collected.
    public mutating func commit() throws(StoreError) {
        if recorder == nil, let start = pendingStart { try beginRun(at: start) }
        try recorder?.flush()
    }

    /// Ends the run: the final split and lap, the rest committed, the summary stored. Returns the
    /// final decisions. A run that never got a timed item leaves nothing in the store.
    @discardableResult
    public mutating func finish() throws(StoreError) -> [TrackerEvent] {
        guard !finished else { return [] }
        let events = tracker.finish()
        if let coachSlot { cues += coachSlot.coach.finish(events, summary: tracker.summary) }
        if recorder == nil {
            pending.append(.events(events))
            guard let start = pendingStart else {
                finished = true
                return events
            }
            try beginRun(at: start)
        } else {
            recorder!.record(events)
        }
        try recorder!.finish(summary: tracker.summary)
        finished = true
        return events
    }

    /// The earliest timed item waiting for the run's row.
    private var pendingStart: Timestamp? {
        for item in pending {
            switch item {
            case .heartRate(let reading): return reading.time
            case .events(let events):
                for case .sample(let sample) in events { return sample.time }
            case .rawLine: continue
            }
        }
        return nil
    }

    private mutating func beginRun(at start: Timestamp) throws(StoreError) {
        var created = try RunRecorder(store: store, uuid: uuid, startTime: start, following: followed)
        for item in pending {
            switch item {
            case .rawLine(let line): created.record(rawLine: line, at: nil)
            case .events(let events): created.record(events)
            case .heartRate(let reading): created.record(reading)
            }
        }
        pending = []
        recorder = created
    }
}

extension RunRecording {
    /// How long after its last stored sample an interrupted run may still be continued (GPS time):
    /// a quick reboot mid-run continues the run; anything longer starts afresh.
    public static let resumeWindowSeconds = 600.0

    /// Continues an interrupted run: its stored raw lines are replayed through a fresh core (so the
    /// state is exactly what a replay of the whole run will have), the run is set recording again
    /// and new batches follow the stored ones. Strap notifications recorded as HRM lines are fed
    /// back too, so the HR statistics carry on (the stored readings are not written again).
    /// `replayed` gets the tracker's events of every stored input, in order (race mode, which
    /// continues with the run, is brought up to date with them).
    public static func resuming(_ run: StoredRun, store: RunStore, configuration: TrackerConfiguration,
                                coach: Coach? = nil, replayed: ([TrackerEvent]) -> Void = { _ in }) throws -> RunRecording {
        var recording = RunRecording(store: store, configuration: configuration, coach: coach, uuid: run.uuid, following: run.followed)
        let decoder = GPSDecoder()
        var durableUntil = run.startTime
        try store.forEachRawLine(run.id) { line in
            switch try? decoder.decode(line) {
            case .fix(let fix)?:
                let events = recording.tracker.ingest(fix)
                replayed(events)
                recording.coachSlot?.coach.quietly { $0.observe(.fix(fix), events: events) }
                for case .sample(let sample) in events { durableUntil = max(durableUntil, sample.time) }
            case .other(className: ControlLine.className)?:
                if let control = ControlLine.parse(Array(line.utf8)) {
                    let events = recording.tracker.apply(control)
                    replayed(events)
                    recording.coachSlot?.coach.quietly { $0.observe(.control(control), events: events) }
                }
            case .other(className: HeartRateLine.className)?:
                if let recorded = HeartRateLine.parse(line),
                    case .success(let measurement) = HeartRateMeasurement.decode(recorded.bytes) {
                    let sample = measurement.sample(at: recorded.time)
                    let events = recording.tracker.ingest(sample)
                    replayed(events)
                    recording.coachSlot?.coach.quietly { $0.observe(.heartRate(sample), events: events) }
                }
            default:
                break
            }
        }
        try store.resume(runID: run.id)
        recording.recorder = RunRecorder(continuing: run.id, store: store, startTime: run.startTime, durableUntil: durableUntil)
        return recording
    }
}

extension Coach {
    /// Brings the coach up to date without saying anything: what it decided was said before the
    /// interruption (or is no longer news).
    fileprivate mutating func quietly(_ step: (inout Coach) -> [Cue]) {
        _ = step(&self)
    }
}

/// The run's coach behind a reference. Stored inline in RunRecording, the release (-O) build of
/// `pacerctl replay --record` crashed in `beginRun` (swift_retain of a null pointer, Swift 6.3.1;
/// the debug build and the tests were fine, and the crash came and went with Coach's size), so a
/// layout-dependent miscompile is the likely cause; not reduced yet. A RunRecording is only ever
/// used by one thread at a time (the pipeline thread, or pacerctl's main thread) and never
/// copied while in use, which is what makes the shared box safe.
private final class CoachSlot: @unchecked Sendable {
    var coach: Coach

    init(_ coach: Coach) {
        self.coach = coach
    }
}
