/// What became of a cue given to a `Speaker`. Every cue ends in exactly one of `spoken`,
/// `interrupted`, `dropped` or `failed`; one that reaches the sink also has `started` before.
public enum SpeechEvent: Sendable, Equatable {
    /// Its first PCM chunk was handed to the sink at `firstSampleNs` (monotonic).
    case started(QueuedCue, firstSampleNs: UInt64)
    /// Said to its end.
    case spoken(QueuedCue, UtteranceStats)
    /// Cut off by a cue of higher priority, by muting, or by `stop()`; the stats say how much
    /// was said.
    case interrupted(QueuedCue, UtteranceStats)
    /// Never said.
    case dropped(QueuedCue, reason: DropReason)
    /// Synthesis or output failed (a full disk, a sound card unplugged); the next cue is tried.
    case failed(QueuedCue, SpeechError)

    public var cue: QueuedCue {
        switch self {
        case .started(let cue, _), .spoken(let cue, _), .interrupted(let cue, _), .dropped(let cue, _), .failed(let cue, _):
            cue
        }
    }

    /// Nanoseconds from the cue being offered to its first PCM chunk reaching the sink.
    public var latencyNs: UInt64? {
        switch self {
        case .started(let cue, let first):
            first >= cue.offeredNs ? first - cue.offeredNs : 0
        case .spoken(let cue, let stats), .interrupted(let cue, let stats):
            stats.firstSampleNs.map { $0 >= cue.offeredNs ? $0 - cue.offeredNs : 0 }
        case .dropped, .failed:
            nil
        }
    }
}
