extension RaceProgressTracker {
    /// Race progress's part of one pipeline step: every sample RunTracker decided, at its own
    /// time. The daemon and `pacerctl replay` both feed it this way, so they decide alike.
    public mutating func ingest(_ events: [TrackerEvent]) -> [RaceEvent] {
        var out: [RaceEvent] = []
        for case .sample(let sample) in events {
            out += handle(.sample(sample), now: sample.time)
        }
        return out
    }
}
