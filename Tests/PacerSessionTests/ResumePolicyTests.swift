import PacerCore
import Testing
@testable import PacerSession

@Suite(.timeLimit(.minutes(10))) struct ResumePolicyTests {
    static let last = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!
    static let policy = ResumePolicy(runID: 12, lastSampleTime: last, windowSeconds: 600, startedNs: 5_000_000_000)

    @Test func aFirstFixWithinTheWindowContinuesTheRun() {
        #expect(Self.policy.firstFix(at: Self.last.adding(seconds: 42)) == .resume(gapSeconds: 42))
        #expect(Self.policy.firstFix(at: Self.last.adding(seconds: 600)) == .resume(gapSeconds: 600))
        // A clock slightly behind the stored sample (a receiver's first fix) still continues it.
        #expect(Self.policy.firstFix(at: Self.last.adding(seconds: -3)) == .resume(gapSeconds: -3))
    }

    @Test func aFirstFixPastTheWindowLeavesItInterrupted() {
        #expect(Self.policy.firstFix(at: Self.last.adding(seconds: 601)) == .stayInterrupted(because: "the first fix came 601 s after its last sample"))
        #expect(Self.policy.firstFix(at: Self.last.adding(seconds: -601)) == .stayInterrupted(because: "the first fix came -601 s after its last sample"))
    }

    @Test func withoutAFixTheMonotonicDeadlineDecides() {
        #expect(Self.policy.deadlineNs == 605_000_000_000)
        #expect(Self.policy.tick(nowNs: 5_000_000_000) == nil)
        #expect(Self.policy.tick(nowNs: 604_999_999_999) == nil)
        #expect(Self.policy.tick(nowNs: 605_000_000_000) == .stayInterrupted(because: "no GPS fix within 600 s of the start"))
    }

    @Test func theJournalHearsWhichRunStaysInterruptedAndWhy() {
        #expect(ResumePolicy.newRunStarted == .stayInterrupted(because: "a new run was started"))
        #expect(Self.policy.note(leaving: "a new run was started")
            == SessionNote(.notice, "run", "run 12 stays interrupted: a new run was started", runID: 12))
    }
}
