import PacerCore

extension VitalsWatcher {
    /// The watcher's part of one replay step: the input and what the tracker decided for it.
    /// Fixes carry the run's time forward, so a strap gone silent is noticed between notifications.
    public mutating func observe(_ item: ReplayInput, events: [TrackerEvent]) -> [SafetyEvent] {
        switch item {
        case .fix(let fix):
            if let position = AlertPosition(fix) { observe(position: position) }
            observe(events)
            guard let time = fix.time else { return [] }
            return advance(to: time)
        case .heartRate(let sample):
            observe(events)
            return ingest(sample)
        case .control(let control):
            observe(events)
            switch control {
            case .pause: runState(recording: true, paused: true)
            case .resume: runState(recording: true, paused: false)
            case .lap: break
            }
            return []
        case .rawLine:
            return []
        }
    }
}
