/// How far a `DistanceGoal` is in one period.
public struct GoalProgress: Sendable, Equatable {
    public var goal: DistanceGoal
    public var period: CalendarPeriod
    /// Metres run in `period`.
    public var done: Double

    public init(goal: DistanceGoal, period: CalendarPeriod, done: Double) {
        self.goal = goal
        self.period = period
        self.done = done
    }

    /// Metres.
    public var target: Double { goal.target }

    /// `done / target`, not capped: 1.25 means the goal was beaten by a quarter. Cap it for a bar.
    public var fraction: Double { done / goal.target }

    /// Metres still to run; 0 once met, never negative.
    public var remaining: Double { max(0, goal.target - done) }

    /// Met when `done` reaches the target exactly or beyond, compared in metres as stored (no
    /// tolerance: a display rounding 9 999.6 m up to "10.0 km" is the display's business).
    public var isMet: Bool { done >= goal.target }
}
