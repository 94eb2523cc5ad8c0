import PacerCore

/// A cue as the arbiter holds it: numbered in the order offered, with the monotonic time it was
/// offered, which its age (and so its staleness) and its latency are measured from.
public struct QueuedCue: Sendable, Equatable, Identifiable {
    /// 1, 2, 3… per arbiter, in the order cues were offered.
    public let id: UInt64
    public let cue: Cue
    /// CLOCK_MONOTONIC nanoseconds when it was offered.
    public let offeredNs: UInt64

    public init(id: UInt64, cue: Cue, offeredNs: UInt64) {
        self.id = id
        self.cue = cue
        self.offeredNs = offeredNs
    }

    public var kind: CueKind { cue.kind }
    public var priority: CuePriority { cue.priority }

    /// Seconds since it was offered (0 if `now` is earlier).
    public func age(at now: UInt64) -> Double {
        now > offeredNs ? Double(now - offeredNs) / 1e9 : 0
    }

    /// Waiting longer than its kind's lifetime: read now it would be wrong ("speed up" 20 s late).
    public func isStale(at now: UInt64) -> Bool {
        age(at: now) > kind.lifetimeSeconds
    }
}
