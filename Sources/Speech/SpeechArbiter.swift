import PacerCore

/// Decides what is said, when, and what is cut off or never said. Pure and deterministic: time
/// comes in as monotonic nanoseconds, decisions go out as `ArbiterAction`s; it reads no clock and
/// does no I/O, so every rule is tested without sound.
///
/// The rules:
/// - At most one cue is spoken at a time (`speaking`).
/// - A cue of higher priority (sos > safety > workout > summary) than the one being spoken
///   interrupts it; the interrupted cue is not resumed.
/// - Otherwise it waits: highest priority first, then in the order offered.
/// - A newer cue replaces a waiting cue of the same kind (two "speed up"s in a row are said once).
/// - A waiting cue older than its kind's lifetime is dropped as stale rather than read late.
/// - Muted, only cues whose priority `isSparedByMute` (safety, SOS) are said; muting drops the
///   waiting cues that are not and interrupts one being spoken.
public struct SpeechArbiter: Sendable {
    /// The cue being spoken.
    public private(set) var speaking: QueuedCue?
    /// Cues waiting, in the order they would be spoken.
    public private(set) var waiting: [QueuedCue] = []
    public private(set) var isMuted: Bool
    private var lastID: UInt64 = 0

    public init(muted: Bool = false) {
        isMuted = muted
    }

    /// A new cue, offered at `now`.
    public mutating func offer(_ cue: Cue, at now: UInt64) -> [ArbiterAction] {
        lastID += 1
        let offered = QueuedCue(id: lastID, cue: cue, offeredNs: now)
        var actions = expire(at: now)
        if isMuted && !offered.priority.isSparedByMute {
            actions.append(.drop(offered, reason: .muted))
            return actions
        }
        guard let current = speaking else {
            // Idle means nothing waits (whatever waited was started or dropped when the last
            // utterance finished), so it starts at once.
            speaking = offered
            actions.append(.speak(offered))
            return actions
        }
        if offered.priority > current.priority {
            speaking = offered
            actions.append(.interrupt(current))
            actions.append(.speak(offered))
            return actions
        }
        if let index = waiting.firstIndex(where: { $0.kind == offered.kind }) {
            actions.append(.drop(waiting.remove(at: index), reason: .replaced))
        }
        // After every waiting cue of the same or higher priority: priority first, then FIFO.
        let place = waiting.firstIndex { $0.priority < offered.priority } ?? waiting.endIndex
        waiting.insert(offered, at: place)
        return actions
    }

    /// The cue `id` has stopped sounding (said to its end, cut off, or failed). Starts the next
    /// waiting cue that is still fresh. An id that is not the one being spoken (an interrupted
    /// cue whose sound ended after its successor was chosen) changes nothing.
    public mutating func finished(_ id: UInt64, at now: UInt64) -> [ArbiterAction] {
        guard speaking?.id == id else { return [] }
        speaking = nil
        var actions = expire(at: now)
        if !waiting.isEmpty {
            let next = waiting.removeFirst()
            speaking = next
            actions.append(.speak(next))
        }
        return actions
    }

    /// Mutes or unmutes the coach. Muting drops the waiting cues it silences and interrupts the
    /// one being spoken if it is one of them.
    public mutating func setMuted(_ muted: Bool, at now: UInt64) -> [ArbiterAction] {
        isMuted = muted
        guard muted else { return [] }
        var actions = expire(at: now)
        waiting.removeAll { queued in
            guard !queued.priority.isSparedByMute else { return false }
            actions.append(.drop(queued, reason: .muted))
            return true
        }
        if let current = speaking, !current.priority.isSparedByMute {
            speaking = nil
            actions.append(.interrupt(current))
            // Whatever still waits is spared by mute; it goes next.
            if !waiting.isEmpty {
                let next = waiting.removeFirst()
                speaking = next
                actions.append(.speak(next))
            }
        }
        return actions
    }

    /// Drops the waiting cues that have become stale by `now`. The other calls do this first;
    /// call it alone to hear about stale cues while a long utterance goes on.
    public mutating func expire(at now: UInt64) -> [ArbiterAction] {
        var actions: [ArbiterAction] = []
        waiting.removeAll { queued in
            guard queued.isStale(at: now) else { return false }
            actions.append(.drop(queued, reason: .stale))
            return true
        }
        return actions
    }

    /// Stops everything: the cue being spoken is interrupted, the waiting ones dropped.
    public mutating func stopAll() -> [ArbiterAction] {
        var actions: [ArbiterAction] = []
        if let current = speaking {
            actions.append(.interrupt(current))
            speaking = nil
        }
        actions += waiting.map { .drop($0, reason: .stopped) }
        waiting.removeAll()
        return actions
    }
}
