import PacerCore
import PacerTestSupport
import Testing
@testable import SOS

/// The rehearsal after a memory trim runs the alert path on copies: nothing leaves the lane.
@Suite(.timeLimit(.minutes(10))) struct LaneRehearsalTests {
    @Test func aRehearsalSendsStoresSaysAndLogsNothingAndLeavesTheWatcherAsItWas() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let fake = LaneTests.channels()
        let h = try LaneHarness(settings: LaneTests.settings(), store: store, channels: [fake.sms, fake.https, fake.hook])
        for _ in 0..<5 { h.sample(140) }
        // Two above the limit: one more confirms (confirm_samples 3).
        h.sample(190)
        h.sample(195)
        _ = await h.status()
        let (logs, cues) = (h.logs.value, h.cues.value)

        let cost = await h.ask { .rehearse(reply: $0) } as LaneRehearsal
        let status = await h.status()

        #expect(cost.microseconds > 0)
        #expect(status.openAlerts.isEmpty)
        #expect(h.timings.value.isEmpty)
        #expect(h.logs.value == logs)
        #expect(h.cues.value == cues)
        #expect(try store.recent(limit: 10).isEmpty)
        // Any attempt would have started by the next barrier: there is none.
        _ = await h.status()
        #expect([fake.sms, fake.https, fake.hook].allSatisfy { $0.attempts.isEmpty })

        // The real watcher did not see the rehearsal's breach, nor lose its own two samples.
        h.sample(201)
        _ = await h.status()
        #expect(h.timings.value.map(\.kind) == [.hrHigh])
        #expect(await eventually { fake.sms.acknowledged.count == 2 })
        #expect(fake.sms.attempts.allSatisfy { $0.sms.contains("201 bpm") })
        await h.shutdown()
    }
}
