import PacerContract
import PacerCore

/// Race mode within the run session, pure: the race's progress tracker fed the run's own
/// tracker events (exactly as `pacerctl replay --course` feeds it, so live equals replay), what
/// the runner hears of it, the positions for the race every `positionEverySeconds`, and the
/// place the cloud answers with.
struct RaceSession: Sendable {
    let mode: RaceMode
    private(set) var tracker: RaceProgressTracker
    let positionEverySeconds: Double
    private var lastPosition: Timestamp?
    /// No official start: the first position after race mode was turned on is the gun.
    private var runnerStartOwed: Bool
    private(set) var startedAt: Timestamp?
    private(set) var result: RaceResult?
    private(set) var place: (place: Int, of: Int?)?
    private var placeSaid: Int?
    private var placeSaidNs: UInt64?
    private(set) var refused: String?

    /// The cloud takes positions from an hour before the official start (openapi.yaml).
    static let positionsFromBeforeGunSeconds = 3600.0
    /// The place is said when it changes, at most this often (and at each distance-to-go cue).
    static let placeEveryNs: UInt64 = 60_000_000_000

    init(mode: RaceMode, units: CoachConfiguration.Units, positionEverySeconds: Double) {
        self.mode = mode
        tracker = RaceProgressTracker(course: mode.course, configuration: RaceConfiguration(gunTime: mode.gunTime, units: units))
        self.positionEverySeconds = positionEverySeconds
        runnerStartOwed = mode.gunTime == nil
    }

    struct Outcome {
        var cues: [Cue] = []
        var positions: [RacePositionFix] = []
        var events: [RaceEvent] = []
    }

    /// One pipeline step's tracker events. `nowNs`: the monotonic time of the step, for the
    /// place's pacing.
    /// `queuing` false: positions are not queued (a replay after a restart: those of the time
    /// before it were queued then).
    mutating func ingest(_ events: [TrackerEvent], phrases: SpokenPhrases?, nowNs: UInt64, queuing: Bool = true) -> Outcome {
        var outcome = Outcome()
        for case .sample(let sample) in events {
            guard result == nil else { break }
            if runnerStartOwed {
                runnerStartOwed = false
                _ = tracker.handle(.runnerStarted, now: sample.time)
            }
            let raceEvents = tracker.handle(.sample(sample), now: sample.time)
            outcome.events += raceEvents
            var finishedNow = false
            for event in raceEvents {
                switch event {
                case .started(let at): startedAt = at
                case .finished(let finished):
                    result = finished
                    finishedNow = true
                default: break
                }
                if let phrases, let cue = event.cue(phrases) {
                    outcome.cues.append(cue)
                    if case .toGo = event, let place {
                        outcome.cues.append(.racePlace(place.place, of: place.of, at: cue.time, phrases: phrases))
                        placeSaid = place.place
                        placeSaidNs = nowNs
                    }
                }
            }
            if queuing, refused == nil, let position = position(sample, force: finishedNow) { outcome.positions.append(position) }
            if !queuing { lastPosition = sample.time }
        }
        return outcome
    }

    /// The position for the race at this sample, when one is due: every `positionEverySeconds`,
    /// and at the finish. Before the start line is reached there is no progress yet (0).
    private mutating func position(_ sample: TrackSample, force: Bool) -> RacePositionFix? {
        if let gun = tracker.gunTime, sample.time.seconds(since: gun) < -Self.positionsFromBeforeGunSeconds { return nil }
        // A quarter of a second early is on time: fixes come once a second, give or take.
        if !force, let last = lastPosition, sample.time.seconds(since: last) < positionEverySeconds - 0.25 { return nil }
        lastPosition = sample.time
        let progress = min(max(tracker.progress ?? 0, RaceWire.progressM.lowerBound), RaceWire.progressM.upperBound)
        return RacePositionFix(raceID: mode.id, time: sample.time, latitude: sample.coordinate.latitude, longitude: sample.coordinate.longitude,
                               progress: (progress * 10).rounded() / 10, startedAt: startedAt, finishedAt: result?.finishTime)
    }

    /// The cloud's answer to positions sent: a place said when it changed (at most once a
    /// minute), or the race refusing them (no more are queued).
    mutating func reply(_ reply: RaceReply, phrases: SpokenPhrases?, at time: Timestamp, nowNs: UInt64) -> Cue? {
        switch reply {
        case .refused(let why):
            refused = why
            return nil
        case .place(let newPlace, let of):
            place = (newPlace, of)
            guard startedAt != nil, newPlace != placeSaid else { return nil }
            if let said = placeSaidNs, nowNs &- said < Self.placeEveryNs { return nil }
            guard let phrases else { return nil }
            placeSaid = newPlace
            placeSaidNs = nowNs
            return .racePlace(newPlace, of: of, at: time, phrases: phrases)
        }
    }

    var status: RaceStatus {
        RaceStatus(id: mode.id, name: mode.name, bib: mode.bib, courseMeters: mode.course.length, gunTime: tracker.gunTime, progress: tracker.progress,
                   startedAt: startedAt, result: result, offCourse: tracker.isOffCourse, place: place?.place, of: place?.of, refused: refused)
    }
}
