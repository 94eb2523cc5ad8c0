import Testing
@testable import PacerCore

private func at(_ text: String) -> Timestamp { Timestamp(iso8601: text)! }
private func utc(_: Timestamp) -> Int { 0 }

@Suite(.timeLimit(.minutes(10))) struct HistoryGoalTests {
    private let runs = [
        HistoryRun(start: at("2026-05-05T06:00:00Z"), distance: 10_000, movingTime: 3000),  // W19
        HistoryRun(start: at("2026-05-11T06:00:00Z"), distance: 7_500, movingTime: 2400),   // W20
        HistoryRun(start: at("2026-05-12T06:00:00Z"), distance: 5_000, movingTime: 1500),   // W20
    ]

    @Test func progressInTheCurrentWeek() throws {
        let goal = try #require(DistanceGoal(period: .week, target: 20_000))
        let totals = PeriodTotals.totals(of: runs, per: .week, utcOffset: utc)
        let progress = goal.progress(now: at("2026-05-13T12:00:00Z"), utcOffset: utc, totals: totals)
        #expect(progress.period.label == "2026-W20")
        #expect(progress.done == 12_500)
        #expect(progress.target == 20_000)
        #expect(progress.fraction == 0.625)
        #expect(progress.remaining == 7_500)
        #expect(!progress.isMet)
    }

    @Test func metAndBeaten() throws {
        let goal = try #require(DistanceGoal(period: .month, target: 20_000))
        let totals = PeriodTotals.totals(of: runs, per: .month, utcOffset: utc)
        let beaten = goal.progress(now: at("2026-05-31T23:59:59Z"), utcOffset: utc, totals: totals)
        #expect(beaten.done == 22_500)
        #expect(beaten.fraction == 1.125)
        #expect(beaten.remaining == 0)
        #expect(beaten.isMet)

        let exact = GoalProgress(goal: goal, period: beaten.period, done: 20_000)
        #expect(exact.isMet && exact.remaining == 0 && exact.fraction == 1)
    }

    @Test func nothingRunYetInANewPeriod() throws {
        let goal = try #require(DistanceGoal(period: .year, target: 1_000_000))
        let totals = PeriodTotals.totals(of: runs, per: .year, utcOffset: utc)
        let progress = goal.progress(now: at("2027-01-01T00:00:00Z"), utcOffset: utc, totals: totals)
        #expect(progress.period.label == "2027")
        #expect(progress.done == 0 && progress.fraction == 0 && progress.remaining == 1_000_000 && !progress.isMet)
    }

    @Test func nowIsReadInTheRunnersZone() throws {
        // 03:00 UTC on Monday is still Sunday evening in UTC−5: last week's goal is the current one.
        let goal = try #require(DistanceGoal(period: .week, target: 10_000))
        let minusFive: (Timestamp) -> Int = { _ in -18_000 }
        let now = at("2026-05-11T03:00:00Z")
        #expect(goal.currentPeriod(now: now, utcOffset: minusFive).label == "2026-W19")
        #expect(goal.currentPeriod(now: now, utcOffset: utc).label == "2026-W20")
        let totals = PeriodTotals.totals(of: runs, per: .week, utcOffset: minusFive)
        #expect(goal.progress(now: now, utcOffset: minusFive, totals: totals).isMet)
    }

    @Test func totalsOfAnotherKindAreIgnored() throws {
        let goal = try #require(DistanceGoal(period: .week, target: 10_000))
        let monthly = PeriodTotals.totals(of: runs, per: .month, utcOffset: utc)
        #expect(goal.progress(now: at("2026-05-13T12:00:00Z"), utcOffset: utc, totals: monthly).done == 0)
    }

    @Test(arguments: [0, -1, Double.nan, .infinity])
    func rejectsTargetsThatAreNotPositiveDistances(_ target: Double) {
        #expect(DistanceGoal(period: .week, target: target) == nil)
    }
}
