import PacerCore

/// Runs exactly the core the daemon runs over decoded inputs.
public enum Replay {
    public static func run(_ inputs: ReplayInputs, configuration: TrackerConfiguration, coach: Coach? = nil,
                           watcher: VitalsWatcher? = nil, race: RaceProgressTracker? = nil) -> ReplayReport {
        var session = ReplaySession(inputs: inputs, configuration: configuration, coach: coach, watcher: watcher, race: race)
        for item in inputs.items { _ = session.ingest(item) }
        return session.finish().report
    }
}

/// One replay fed an input at a time, for callers that do more with each step (recording).
public struct ReplaySession: Sendable {
    private var tracker: RunTracker
    private var coach: Coach?
    private var watcher: VitalsWatcher?
    private var race: RaceProgressTracker?
    private var report: ReplayReport

    /// With a coach, the cues it decides are listed in the report; with an SOS watcher, the
    /// alerts it raises (and its sensor warnings); with a race, its progress and result (and,
    /// with a coach, what the runner hears of it).
    public init(inputs: ReplayInputs, configuration: TrackerConfiguration, coach: Coach? = nil, watcher: VitalsWatcher? = nil,
                race: RaceProgressTracker? = nil) {
        tracker = RunTracker(configuration: configuration)
        self.coach = coach
        self.watcher = watcher
        self.race = race
        report = ReplayReport(stats: inputs.stats)
        if let race { report.race = RaceReport(course: race.course, gunTime: race.gunTime) }
        report.samples.reserveCapacity(inputs.gpsEpochLines)
    }

    /// The tracker's decisions for this input (none for a raw line).
    public mutating func ingest(_ item: ReplayInput) -> [TrackerEvent] {
        let events: [TrackerEvent]
        switch item {
        case .fix(let fix): events = tracker.ingest(fix)
        case .heartRate(let sample): events = tracker.ingest(sample)
        case .control(let control): events = tracker.apply(control)
        case .rawLine: return []
        }
        report.record(events)
        if coach != nil { report.cues += coach!.observe(item, events: events) }
        if race != nil {
            let raceEvents = race!.ingest(events)
            report.race?.record(raceEvents, gunTime: race!.gunTime)
            if let units = coach?.configuration.units {
                let phrases = SpokenPhrases(units: units)
                report.cues += raceEvents.compactMap { $0.cue(phrases) }
            }
        }
        if watcher != nil {
            // Monitoring starts with the replay's first timed input.
            if let time = item.time { watcher!.start(at: time) }
            report.record(watcher!.observe(item))
        }
        return events
    }

    /// Ends the run: the final split and lap it decided, and the whole report.
    public mutating func finish() -> (events: [TrackerEvent], report: ReplayReport) {
        let events = tracker.finish()
        report.record(events)
        report.summary = tracker.summary
        if coach != nil { report.cues += coach!.finish(events, summary: tracker.summary) }
        report.counts = tracker.counts
        return (events, report)
    }
}
