import PacerCore
import PacerTestSupport
import Testing
import Threads
@testable import SOS

/// A disk that stalls: the alert's commit waits until the test opens the gate.
final class StalledDisk: Sendable {
    private let gate = BlockingQueue<Bool>()
    /// Then the commit fails (the disk gave up) instead of going on.
    let failsAfter: Bool

    init(failsAfter: Bool = false) { self.failsAfter = failsAfter }

    func open() { gate.put(true) }

    func stall() throws(AlertStoreError) {
        _ = gate.take(until: .max)
        if failsAfter { throw AlertStoreError("the disk gave up") }
    }
}

/// Dispatch does not wait for a stalled commit beyond `LaneState.commitWaitNs`; what happens
/// meanwhile is recorded after it.
@Suite(.timeLimit(.minutes(10))) struct LaneCommitTests {
    @Test func aStalledCommitDoesNotHoldUpDispatchAndAcknowledgementsAreRecordedAfterIt() async throws {
        let dir = try TemporaryDirectory()
        let disk = StalledDisk()
        let store = try AlertStore(path: dir.file("sos.db"), beforeRecord: { try disk.stall() })
        // A second connection: WAL lets it read while the lane's is stuck in the commit.
        let reader = try AlertStore(path: dir.file("sos.db"), readOnly: true)
        let fake = LaneTests.channels()
        let h = try LaneHarness(settings: LaneTests.settings(), store: store, channels: [fake.sms, fake.https, fake.hook])

        let uuid = try LaneTests.uuid(await h.raise())
        let all = [fake.sms, fake.https, fake.hook]
        // Every channel got it and acknowledged it while the commit is still stuck.
        #expect(await eventually { all.map(\.acknowledged.count) == [2, 1, 1] })
        #expect(try reader.recent(limit: 10).isEmpty, "nothing committed yet")
        let timing = try #require(h.timings.value.first)
        #expect(timing.alertUUID == uuid)
        #expect(timing.recordedNs == nil)
        let dispatched = try #require(timing.firstDispatchNs)
        print("stalled commit: first dispatch \(Double(dispatched - timing.confirmingNs) / 1e6) ms after the request (cap \(LaneState.commitWaitNs / 1_000_000) ms)")
        #expect(h.logs.value.contains { $0.contains("has not committed it within 200 ms") })

        disk.open()
        // The acknowledgements that came before the commit are recorded after it.
        #expect(try await eventually {
            let alert = try reader.recent(limit: 10).first
            return alert?.uuid == uuid && alert?.deliveries.count == 4 && alert?.deliveries.allSatisfy { $0.acknowledgedMs != nil } == true
        })
        #expect(try store.pending().isEmpty)
        #expect(h.logs.value.contains { $0.contains("recorded") && $0.contains("4 outcome(s) recorded now") })
        // Sent once each: recording late sends nothing again.
        #expect(all.map(\.attempts.count) == [2, 1, 1])
        await h.shutdown()
    }

    @Test func aCommitThatFailsAfterDispatchLeavesTheAlertSentFromMemory() async throws {
        let dir = try TemporaryDirectory()
        let disk = StalledDisk(failsAfter: true)
        let store = try AlertStore(path: dir.file("sos.db"), beforeRecord: { try disk.stall() })
        let fake = LaneTests.channels()
        let h = try LaneHarness(settings: LaneTests.settings(), store: store, channels: [fake.sms, fake.https, fake.hook])

        let uuid = try LaneTests.uuid(await h.raise())
        #expect(await eventually { [fake.sms, fake.https, fake.hook].map(\.acknowledged.count) == [2, 1, 1] })
        disk.open()
        #expect(await eventually { h.logs.value.contains { $0.contains("SOS alert \(uuid) could not be recorded") && $0.contains("the disk gave up") } })
        #expect(try store.recent(limit: 10).isEmpty)
        #expect(try store.pending().isEmpty)
        // Still cancellable: the false alarm goes out from memory too.
        #expect(try await h.cancel().get() == 1)
        #expect(await eventually { fake.sms.acknowledged.map(\.type) == ["alert", "alert", "cancelled", "cancelled"] })
        await h.shutdown()
    }

    @Test func aCommitWithinTheCapIsUsedAsBefore() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let fake = LaneTests.channels()
        let h = try LaneHarness(settings: LaneTests.settings(), store: store, channels: [fake.sms, fake.https, fake.hook])
        _ = try LaneTests.uuid(await h.raise())
        let timing = try #require(h.timings.value.first)
        #expect(timing.recordedNs != nil)
        // Stored ids, not in-memory ones: a restart resumes exactly these.
        #expect(await eventually { fake.sms.attempts.count == 2 })
        #expect(fake.sms.attempts.allSatisfy { $0.key.messageID > 0 })
        #expect(!h.logs.value.contains { $0.contains("has not committed it") })
        await h.shutdown()
    }
}
