import PacerCore

/// Whether the run that was interrupted when pacerd last stopped is continued: it is, when the
/// first fix comes within `windowSeconds` of its last stored sample. Until that is decided the
/// uplink holds the run back, so without any fix the question closes on the monotonic clock at
/// `deadlineNs`: GPS time runs at least as fast, so any later first fix is past the window.
public struct ResumePolicy: Sendable, Equatable {
    public enum Decision: Sendable, Equatable {
        /// Continue it; the first fix came this long after its last sample.
        case resume(gapSeconds: Double)
        /// Leave it interrupted (it is uploaded like a finished run), for this reason.
        case stayInterrupted(because: String)
    }

    public let runID: Int64
    /// GPS time of the run's last stored sample (its start, when it has none).
    public let lastSampleTime: Timestamp
    public let windowSeconds: Double
    public let deadlineNs: UInt64

    /// `startedNs` is CLOCK_MONOTONIC when pacerd started.
    public init(runID: Int64, lastSampleTime: Timestamp, windowSeconds: Double, startedNs: UInt64) {
        self.runID = runID
        self.lastSampleTime = lastSampleTime
        self.windowSeconds = windowSeconds
        deadlineNs = startedNs + UInt64(windowSeconds * 1e9)
    }

    /// The first fix with a time decides.
    public func firstFix(at time: Timestamp) -> Decision {
        let gap = time.seconds(since: lastSampleTime)
        guard abs(gap) <= windowSeconds else { return .stayInterrupted(because: "the first fix came \(Int(gap)) s after its last sample") }
        return .resume(gapSeconds: gap)
    }

    /// Without a fix, the deadline decides; nil while it has not passed.
    public func tick(nowNs: UInt64) -> Decision? {
        nowNs >= deadlineNs ? .stayInterrupted(because: "no GPS fix within \(Int(windowSeconds)) s of the start") : nil
    }

    /// A run started by hand (or by itself) before the first fix: the old one is left.
    public static let newRunStarted = Decision.stayInterrupted(because: "a new run was started")

    /// What the journal hears when the run is left interrupted.
    public func note(leaving reason: String) -> SessionNote {
        SessionNote(.notice, "run", "run \(runID) stays interrupted: \(reason)", runID: runID)
    }
}
