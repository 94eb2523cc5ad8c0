/// What the SOS watcher decided.
public enum SafetyEvent: Sendable, Equatable {
    /// Raise it: record it, then dispatch it on every channel.
    case alert(VitalsAlert)
    /// A sensor fault began: warn (journal, voice), raise nothing.
    case warning(SensorWarning)
    /// That fault is over.
    case warningCleared(SensorWarning)
    /// The alert's value has been back in range for `rearmSeconds`: closed, its kind re-armed.
    case resolved(number: Int, kind: AlertKind, at: Timestamp, heartRate: Int?)
    /// Cancelled by the runner ("false alarm, I am OK").
    case cancelled(number: Int, kind: AlertKind, at: Timestamp)
    /// "Are you OK?": the heart signal turned abnormal (since `since`) and the body stopped. Speak
    /// it; unanswered by `deadline`, the watcher raises the alert.
    case askAreYouOK(since: Timestamp, at: Timestamp, deadline: Timestamp)
    /// The question is over: answered by the runner (`answered`), or the signal or the movement
    /// came back.
    case askOver(at: Timestamp, answered: Bool)
    /// A follow-up with the newest position and heart rate for an open alert.
    case followUp(number: Int, kind: AlertKind, sequence: Int, at: Timestamp, heartRate: Int?, position: AlertPosition?)
}
