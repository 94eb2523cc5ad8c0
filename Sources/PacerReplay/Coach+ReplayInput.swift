import PacerCore

extension Coach {
    /// The coach's part of one pipeline step: the input and what the tracker decided for it. The
    /// daemon (RunRecording) and replay (ReplaySession) both call this, so they decide alike.
    public mutating func observe(_ item: ReplayInput, events: [TrackerEvent]) -> [Cue] {
        switch item {
        case .fix:
            return ingest(events)
        case .heartRate(let sample):
            return ingest(events) + ingest(sample)
        case .control(let control):
            return ingest(events) + apply(control)
        case .rawLine:
            return []
        }
    }
}
