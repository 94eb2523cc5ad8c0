/// "Run 40 km a week": a distance to reach in every period of a kind.
///
/// The goal always applies to the period containing `now`, and `now` is passed in: the core never
/// reads a clock (the daemon's clock may be wrong at boot; GPS time or the Store's notion of now is
/// the caller's choice).
public struct DistanceGoal: Sendable, Hashable {
    public let period: PeriodKind
    /// Metres; always positive and finite.
    public let target: Double

    /// Nil unless `target` is a positive finite number of metres: a zero goal has no meaningful
    /// fraction, and rejecting it here keeps every `GoalProgress` well defined.
    public init?(period: PeriodKind, target: Double) {
        guard target.isFinite, target > 0 else { return nil }
        self.period = period
        self.target = target
    }

    /// The period the goal is being measured in at `now`.
    public func currentPeriod(now: Timestamp, utcOffset: (Timestamp) -> Int) -> CalendarPeriod {
        CalendarPeriod(period, containing: now, utcOffset: utcOffset)
    }

    /// Progress in the period containing `now`. `totals` may hold any periods (for example all of
    /// `PeriodTotals.totals(of:per:utcOffset:)`); only the current one is used, and none means
    /// nothing run yet.
    public func progress(now: Timestamp, utcOffset: (Timestamp) -> Int, totals: [PeriodTotal]) -> GoalProgress {
        let current = currentPeriod(now: now, utcOffset: utcOffset)
        let done = totals.first { $0.period == current }?.distance ?? 0
        return GoalProgress(goal: self, period: current, done: done)
    }
}
