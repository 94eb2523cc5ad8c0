import PacerCore

/// Everything a replay decided, in the order it was decided.
public struct ReplayReport: Sendable {
    public var summary = RunSummary(distance: 0, movingTime: 0, elapsedTime: 0, averagePacePerKm: nil, maxSpeed: 0)
    public var samples: [TrackSample] = []
    public var splits: [Split] = []
    public var laps: [Lap] = []
    public var warnings: [TrackerWarning] = []
    /// What the coach decided to say, when a coach was given (`--workout`, or a config).
    public var cues: [Cue] = []
    /// What the SOS watcher raised, when one watched (`[sos] enabled`).
    public var alerts: [VitalsAlert] = []
    /// Everything the SOS watcher decided (alerts, sensor warnings and their end, follow-ups,
    /// resolutions), in order.
    public var safetyEvents: [SafetyEvent] = []
    public var counts = FixCounts()
    public var stats: InputStats
    /// The run's number when the replay was recorded into a store.
    public var recordedRunID: Int64?
    /// Race progress over the run, when a course was given (`--course`).
    public var race: RaceReport?

    public init(stats: InputStats = InputStats()) {
        self.stats = stats
    }

    public mutating func record(_ events: [TrackerEvent]) {
        for event in events {
            switch event {
            case .sample(let sample): samples.append(sample)
            case .split(let split): splits.append(split)
            case .lap(let lap): laps.append(lap)
            case .warning(let warning): warnings.append(warning)
            case .motion, .gpsLost, .gpsRegained, .fixSkipped: break
            }
        }
    }

    /// Alerts go to `alerts`; a sensor fault is a warning (kind hr_no_data, hr_no_contact,
    /// hr_stale, hr_no_strap, hr_insufficient), never an alert. Replay has no button: the "Are you
    /// OK?" question is listed as a warning (kind sos_are_you_ok), and goes unanswered.
    public mutating func record(_ events: [SafetyEvent]) {
        for event in events {
            safetyEvents.append(event)
            switch event {
            case .alert(let alert): alerts.append(alert)
            case .warning(let warning):
                warnings.append(TrackerWarning(time: warning.time, kind: warning.fault.rawValue, text: warning.text))
            case .askAreYouOK(_, let at, let deadline):
                let seconds = Int(deadline.seconds(since: at).rounded())
                warnings.append(TrackerWarning(time: at, kind: "sos_are_you_ok",
                                               text: "SOS: no heart-rate signal and no movement: \"Are you OK?\" asked, help called in \(seconds) s unless answered"))
            case .warningCleared, .resolved, .cancelled, .followUp, .askOver: break
            }
        }
    }
}

/// What race progress decided over a replay.
public struct RaceReport: Sendable {
    public var courseLength: Double
    public var stageCount: Int
    /// The official start: the course's or `--gun`.
    public var gunTime: Timestamp?
    /// One per placed position.
    public var progress: [RaceProgress] = []
    /// Everything else, in order: started, stages, cue points, off course and back, finished.
    public var events: [RaceEvent] = []
    public var startTime: Timestamp?
    public var result: RaceResult?

    public init(course: RaceCourse, gunTime: Timestamp?) {
        courseLength = course.length
        stageCount = course.stages.count
        self.gunTime = gunTime
    }

    public mutating func record(_ decided: [RaceEvent], gunTime: Timestamp?) {
        self.gunTime = gunTime
        for event in decided {
            switch event {
            case .progress(let p): progress.append(p)
            case .started(let time):
                startTime = time
                events.append(event)
            case .finished(let r):
                result = r
                events.append(event)
            case .stage, .toGo, .offCourse, .backOnCourse: events.append(event)
            }
        }
    }

    /// How many times the runner was told they were off course.
    public var offCourseCount: Int { events.count { if case .offCourse = $0 { true } else { false } } }
}
