/// What the runner asks of a run in progress, by button or CLI. Recorded in the run's raw log at
/// the point it happened, so a replay applies it at the same place in the stream.
public enum RunControl: String, Sendable, Equatable, CaseIterable {
    case lap, pause, resume
}
