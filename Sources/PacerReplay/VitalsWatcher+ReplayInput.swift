import PacerCore

extension VitalsWatcher {
    /// The watcher's part of one replay step. Fixes give the body's motion and carry the run's
    /// time forward, so a strap gone silent is noticed between notifications. A hand pause
    /// changes nothing: monitoring goes on.
    public mutating func observe(_ item: ReplayInput) -> [SafetyEvent] {
        switch item {
        case .fix(let fix):
            if let position = AlertPosition(fix) { observe(position: position) }
            guard let time = fix.time else { return [] }
            return advance(to: time)
        case .heartRate(let sample):
            return ingest(sample)
        case .control, .rawLine:
            return []
        }
    }
}
