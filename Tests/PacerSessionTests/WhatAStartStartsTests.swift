import PacerConfig
import PacerCore
import Testing
@testable import PacerSession

/// What a start starts (`WhatAStartStarts`): the precedence, today's session with none, one or
/// two planned, and the same through the run session's commands, button, readiness and journal.
@Suite(.timeLimit(.minutes(10))) struct WhatAStartStartsTests {
    typealias D = SessionDriver

    static let intervals = Workout(name: "6 by 400 metres", items: [
        .step(WorkoutStep(kind: .warmup, end: .distance(meters: 800))),
        .repeated(times: 6, steps: [WorkoutStep(kind: .run, end: .distance(meters: 400), target: .pace(fastest: 190, slowest: 210)),
                                    WorkoutStep(kind: .recover, end: .distance(meters: 200))]),
    ])
    static let easy = Workout(name: "Easy 30 minutes", items: [.step(WorkoutStep(kind: .run, end: .time(seconds: 1800), target: .heartRateZone(2)))])
    static let fileWorkout = Workout(name: "From a file", items: [.step(WorkoutStep(kind: .run, end: .lapButton))])

    static let first = PlannedRun(id: "11111111-1111-4111-8111-111111111111", date: "2026-05-10", workout: intervals)
    static let second = PlannedRun(id: "22222222-2222-4222-8222-222222222222", date: "2026-05-10", workout: easy)
    static let tomorrow = PlannedRun(id: "33333333-3333-4333-8333-333333333333", date: "2026-05-11", workout: easy)

    @Test func anExplicitWorkoutComesFirstThenTodaysPlanThenAFreeRun() {
        let plan = PlanToday(sessions: [Self.first, Self.tomorrow], today: "2026-05-10")
        #expect(WhatAStartStarts.decide(.workout(Self.fileWorkout), plan: plan) == .follow(Self.fileWorkout, planned: nil))
        #expect(WhatAStartStarts.decide(.button, plan: plan) == .follow(Self.intervals, planned: Self.first))
        #expect(WhatAStartStarts.decide(.planned, plan: plan) == .follow(Self.intervals, planned: Self.first))
        #expect(WhatAStartStarts.decide(.free, plan: plan) == .free, "a plain start is a free run, whatever is planned")
        // Nothing today (only tomorrow): the button runs free, --planned says why.
        let nothingToday = PlanToday(sessions: [Self.tomorrow], today: "2026-05-10")
        #expect(WhatAStartStarts.decide(.button, plan: nothingToday) == .free)
        #expect(WhatAStartStarts.decide(.planned, plan: nothingToday) == .refuse("no session is planned for today (2026-05-10); pacerctl plan lists the plan"))
        #expect(WhatAStartStarts.decide(.button, plan: .none) == .free)
        guard case .refuse(let why) = WhatAStartStarts.decide(.planned, plan: .none) else { Issue.record("no plan must refuse"); return }
        #expect(why.hasPrefix("no training plan on this device"))
    }

    @Test func withTwoTodayTheFirstNotRunYetIsTakenThenTheSecondThenNone() {
        var plan = PlanToday(sessions: [Self.first, Self.second, Self.tomorrow], today: "2026-05-10")
        #expect(WhatAStartStarts.decide(.button, plan: plan) == .follow(Self.intervals, planned: Self.first))
        plan.followed = [Self.first.id]
        #expect(WhatAStartStarts.decide(.planned, plan: plan) == .follow(Self.easy, planned: Self.second))
        plan.followed = [Self.first.id, Self.second.id]
        #expect(WhatAStartStarts.decide(.button, plan: plan) == .free)
        #expect(WhatAStartStarts.decide(.planned, plan: plan)
            == .refuse("today's planned sessions were all run already; pacerctl run start --workout with its file (pacerctl plan shows it) runs one again"))
    }

    @Test func todayIsTheDateTheShellGivesSoMidnightMovesTheSession() {
        // 23:59:59 and 00:00:00 local: the shell sends the new date, and the button follows it.
        let d = D()
        d.send(.plan(PlanToday(sessions: [Self.first, Self.tomorrow], today: "2026-05-10")), at: D.at(0))
        #expect(d.session.plan.next == Self.first)
        d.send(.plan(PlanToday(sessions: [Self.first, Self.tomorrow], today: "2026-05-11")), at: D.at(1))
        d.click(at: D.at(2))
        #expect(d.begun == [FollowedWorkout(name: "Easy 30 minutes", plannedSessionID: Self.tomorrow.id)])
        #expect(d.said("run started; it is recorded from the first GPS fix with the workout \"Easy 30 minutes\" (planned session \(Self.tomorrow.id) of 2026-05-11)"))
    }

    @Test func theButtonAndPlannedStartFollowTodayAndAStoredRunMovesToTheNext() throws {
        let d = D()
        d.send(.plan(PlanToday(sessions: [Self.first, Self.second], today: "2026-05-10")), at: D.at(0))
        // The readiness sentence names the session a start would take.
        let ready = try #require(d.command(.readiness, at: D.at(1)))
        #expect(try ready.get().readiness?.hasSuffix("Today: 6 by 400 metres.") == true, "\(ready)")
        // The short press: today's first session.
        d.click(at: D.at(2))
        #expect(d.begun == [FollowedWorkout(name: "6 by 400 metres", plannedSessionID: Self.first.id)])
        d.run(from: 3, seconds: 5)
        d.click(at: D.at(10), heldNs: 2 * D.second)
        #expect(d.said("run 1 stopped"))
        // Stored, it was followed: the readiness and --planned take the second.
        let again = try #require(d.command(.readiness, at: D.at(13)))
        #expect(try again.get().readiness?.hasSuffix("Today: Easy 30 minutes.") == true, "\(again)")
        #expect(try d.command(.startPlanned, at: D.at(14))?.get().phase == .waitingForFix)
        #expect(d.begun.last == FollowedWorkout(name: "Easy 30 minutes", plannedSessionID: Self.second.id))
        d.run(from: 15, seconds: 5)
        _ = d.command(.stop, at: D.at(21))
        // Both run: --planned is refused with why; a plain start runs free; the readiness names none.
        guard case .failure(let refused)? = d.command(.startPlanned, at: D.at(22)) else { Issue.record("--planned must be refused"); return }
        #expect(refused.code == .conflict && refused.message.hasPrefix("today's planned sessions were all run already"))
        let none = try #require(d.command(.readiness, at: D.at(23)))
        #expect(try none.get().readiness?.contains("Today:") == false)
        #expect(try d.command(.start, at: D.at(24))?.get().phase == .waitingForFix)
        #expect(d.begun.last == .some(nil))
        _ = d.command(.stop, at: D.at(25))
        // An explicit workout wins over the plan and is remembered by name only.
        d.send(.plan(PlanToday(sessions: [Self.first], today: "2026-05-10")), at: D.at(26))
        #expect(try d.command(.startWorkout(Self.fileWorkout), at: D.at(27))?.get().phase == .waitingForFix)
        #expect(d.begun.last == FollowedWorkout(name: "From a file"))
    }

    @Test func aStartStoppedBeforeAnyFixLeavesTheSessionToTake() {
        let d = D()
        d.send(.plan(PlanToday(sessions: [Self.first], today: "2026-05-10")), at: D.at(0))
        _ = d.command(.startPlanned, at: D.at(1))
        _ = d.command(.stop, at: D.at(2))
        #expect(d.said("run stopped before any GPS fix"))
        #expect(d.session.plan.next == Self.first, "nothing was stored, so the session was not run")
    }
}
