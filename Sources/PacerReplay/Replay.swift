import PacerCore

/// Runs exactly the core the daemon runs over decoded inputs.
public enum Replay {
    public static func run(_ inputs: ReplayInputs, configuration: TrackerConfiguration) -> ReplayReport {
        var tracker = RunTracker(configuration: configuration)
        var report = ReplayReport(stats: inputs.stats)
        report.samples.reserveCapacity(inputs.gpsEpochLines)
        for item in inputs.items {
            let events: [TrackerEvent]
            switch item {
            case .fix(let fix): events = tracker.ingest(fix)
            case .heartRate(let sample): events = tracker.ingest(sample)
            }
            report.record(events)
        }
        report.record(tracker.finish())
        report.summary = tracker.summary
        report.counts = tracker.counts
        return report
    }
}
