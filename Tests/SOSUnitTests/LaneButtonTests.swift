import PacerCore
import PacerTestSupport
import Testing
import Threads
@testable import SOS

/// The lane reads the run button itself: a very long press raises with no pipeline at all.
@Suite(.timeLimit(.minutes(10))) struct LaneButtonTests {
    static let enter: UInt16 = 28
    static let buttons = ButtonGestureConfiguration(longPress: .milliseconds(1500), veryLongPress: .seconds(5))

    static func key(_ action: ButtonKeyEvent.Action, atNs ns: UInt64) -> LaneInput {
        .buttonKey(ButtonKeyEvent(keyCode: enter, action: action, time: .nanoseconds(Int64(ns))))
    }

    /// A LaneState driven by hand: no thread, time only from the key events and `tick(nowNs:)`.
    static func lane(timings: Shared<[AlertTiming]>, logs: Shared<[String]>) -> LaneState {
        var settings = LaneTests.settings()
        settings.buttons = buttons
        return LaneState(settings: settings, store: nil, channels: [FakeChannel(.sms), FakeChannel(.https), FakeChannel(.hook)],
                         queue: BlockingQueue(), health: LaneHealth(), log: { _, message, _ in logs.update { $0.append(message) } },
                         onCue: { _, _ in }, onTiming: { timing in timings.update { $0.append(timing) } })
    }

    @Test func aVeryLongPressRaisesWhileTheKeyIsStillHeldAndOnlyOnce() throws {
        let (timings, logs) = (Shared<[AlertTiming]>([]), Shared<[String]>([]))
        let lane = Self.lane(timings: timings, logs: logs)
        let pressed = MonotonicTime.nanoseconds()
        lane.handle(Self.key(.press, atNs: pressed))
        #expect(lane.buttonDeadlineNs != nil)
        lane.tick(nowNs: pressed + 4_900_000_000)
        #expect(timings.value.isEmpty, "held 4.9 s: not yet")
        // The loop wakes at the button's deadline, not only on the 250 ms tick.
        let due = try #require(lane.buttonDeadlineNs)
        #expect(due == pressed + 5_000_000_000)
        lane.advanceButtons(nowNs: due)
        #expect(timings.value.map(\.kind) == [.manual])
        #expect(logs.value.contains("SOS requested (button)"))
        // Still held, then released: no second alert, and no short or long press either.
        lane.tick(nowNs: pressed + 8_000_000_000)
        lane.handle(Self.key(.release, atNs: pressed + 9_000_000_000))
        lane.tick(nowNs: pressed + 10_000_000_000)
        #expect(timings.value.count == 1)
    }

    @Test func shorterPressesAndAResetPressRaiseNothing() {
        let (timings, logs) = (Shared<[AlertTiming]>([]), Shared<[String]>([]))
        let lane = Self.lane(timings: timings, logs: logs)
        let start = MonotonicTime.nanoseconds()
        // A long press (stop) is the pipeline's business.
        lane.handle(Self.key(.press, atNs: start))
        lane.handle(Self.key(.release, atNs: start + 2_000_000_000))
        lane.tick(nowNs: start + 10_000_000_000)
        // The device went away mid-press: the press is forgotten.
        lane.handle(Self.key(.press, atNs: start + 11_000_000_000))
        lane.handle(.buttonsReset)
        lane.tick(nowNs: start + 20_000_000_000)
        #expect(lane.buttonDeadlineNs == nil)
        #expect(timings.value.isEmpty)
    }

    /// The real lane thread with no pipeline behind it: a press stamped 6 s ago (time injected
    /// through the event) raises at its next turn, with no release ever coming.
    @Test func theLaneThreadRaisesOnAHeldKeyWithNoPipeline() async throws {
        var settings = LaneTests.settings()
        settings.buttons = Self.buttons
        let channels = LaneTests.channels()
        let harness = try LaneHarness(settings: settings, store: nil, channels: [channels.sms, channels.https, channels.hook])
        harness.lane.put(Self.key(.press, atNs: MonotonicTime.nanoseconds() - 6_000_000_000))
        #expect(await eventually { harness.timings.value.count == 1 })
        #expect(harness.timings.value.first?.kind == .manual)
        #expect(await harness.status().openAlerts.count == 1)
        #expect(await eventually { channels.sms.acknowledged.count == 2 })
        await harness.shutdown()
    }
}
