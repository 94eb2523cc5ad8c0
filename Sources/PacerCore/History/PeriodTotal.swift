/// How much was run in one calendar period.
public struct PeriodTotal: Sendable, Equatable {
    public var period: CalendarPeriod
    public var runCount: Int
    /// Metres.
    public var distance: Double
    /// Seconds.
    public var movingTime: Double

    /// An empty period: no runs yet.
    public init(period: CalendarPeriod, runCount: Int = 0, distance: Double = 0, movingTime: Double = 0) {
        self.period = period
        self.runCount = runCount
        self.distance = distance
        self.movingTime = movingTime
    }

    /// Seconds per kilometre over moving time; nil while no distance was run.
    public var averagePacePerKm: Double? { distance > 0 ? movingTime / distance * 1000 : nil }

    /// Counts one more run. Non-finite distance or moving time (a corrupt row) counts the run but
    /// adds nothing, so one bad row cannot turn a whole year's total into NaN.
    mutating func add(_ run: HistoryRun) {
        runCount += 1
        if run.distance.isFinite { distance += run.distance }
        if run.movingTime.isFinite { movingTime += run.movingTime }
    }
}
