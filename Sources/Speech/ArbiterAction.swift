/// What the arbiter decides; the `Speaker` carries it out in the order given.
public enum ArbiterAction: Sendable, Equatable {
    /// Start saying this. Comes after the `.interrupt` of what it replaces, which must have gone
    /// quiet before this starts: nothing ever overlaps.
    case speak(QueuedCue)
    /// Stop saying this now; it is not resumed.
    case interrupt(QueuedCue)
    /// This is never said.
    case drop(QueuedCue, reason: DropReason)
}

/// Why a cue was not said.
public enum DropReason: String, Sendable, Equatable, CaseIterable {
    /// It waited longer than its kind's lifetime (`CueKind.lifetimeSeconds`).
    case stale
    /// The coach is muted and the cue is not safety or SOS.
    case muted
    /// A newer cue of the same kind arrived while it waited.
    case replaced
    /// The speaker was stopped.
    case stopped
}
