/// What period totals need to know about one stored run.
public struct HistoryRun: Sendable, Equatable {
    /// When the run started; it decides the run's period (see `PeriodTotals`).
    public var start: Timestamp
    /// Metres.
    public var distance: Double
    /// Seconds.
    public var movingTime: Double

    public init(start: Timestamp, distance: Double, movingTime: Double) {
        self.start = start
        self.distance = distance
        self.movingTime = movingTime
    }

    /// Nil for a summary without a start time (a run with no accepted fix).
    public init?(_ summary: RunSummary) {
        guard let start = summary.startTime else { return nil }
        self.init(start: start, distance: summary.distance, movingTime: summary.movingTime)
    }
}
