import PacerCore
import Testing
@testable import SOS

/// The lane's delivery rules on injected time: nothing here sleeps or starts a thread.
@Suite(.timeLimit(.minutes(10))) struct OutboxTests {
    static let second: UInt64 = 1_000_000_000
    static let settings = Outbox.Settings(attemptTimeoutSeconds: 30, retryMaxSeconds: 60)
    static let alice = "+393470000001", bob = "+393470000002"

    /// Message `id` of alert `alert` to `target` by SMS.
    static func message(_ id: Int64, _ sequence: Int, _ type: AlertContent.Message, to target: String = alice, alert: String = "a") -> Delivery {
        Delivery(key: .init(messageID: id, channel: .sms, target: target), alertUUID: alert, kind: "hr_high", test: false, sequence: sequence,
                 type: type.rawValue, sms: "text \(id)", body: "{}", attempts: 0, lastError: nil, acknowledgedMs: nil)
    }

    /// The attempts started: (message id, target, attempt number).
    static func starts(_ actions: [Outbox.Action]) -> [(id: Int64, target: String, attempt: Int)] {
        actions.compactMap { if case .start(let d, let attempt) = $0 { (d.key.messageID, d.key.target, attempt) } else { nil } }
    }

    static func startedIDs(_ actions: [Outbox.Action]) -> [Int64] { starts(actions).map(\.id) }

    static func replaced(_ actions: [Outbox.Action]) -> [Int64] {
        actions.compactMap { if case .replaced(let d, _) = $0 { d.key.messageID } else { nil } }
    }

    static let ok = Result<String, ChannelFailure>.success("ok")
    static let down = Result<String, ChannelFailure>.failure(ChannelFailure("no network"))

    @Test func aCancelStartsForATargetOnlyOnceThatTargetAcknowledgedTheAlert() {
        var outbox = Outbox(settings: Self.settings)
        var t: UInt64 = 1000 * Self.second
        let first = outbox.handle(.add([Self.message(1, 0, .alert), Self.message(1, 0, .alert, to: Self.bob)]), now: t)
        #expect(Self.starts(first).map(\.target) == [Self.alice, Self.bob])
        let aliceAlert = Self.starts(first)[0].attempt, bobAlert = Self.starts(first)[1].attempt

        // The cancel comes while both are in flight: it waits for each target's alert.
        #expect(Self.starts(outbox.handle(.add([Self.message(2, 1, .cancelled), Self.message(2, 1, .cancelled, to: Self.bob)]), now: t)).isEmpty)
        // Bob's alert fails: his cancel still waits (the old dictionary order could send it now).
        let failed = outbox.handle(.finished(.init(messageID: 1, channel: .sms, target: Self.bob), attempt: bobAlert, Self.down), now: t)
        #expect(Self.starts(failed).isEmpty)
        #expect(failed == [.failed({ var d = Self.message(1, 0, .alert, to: Self.bob); d.attempts = 1; d.lastError = "no network"; return d }(),
                                   ChannelFailure("no network"), timedOut: false, retryInSeconds: 1)])
        // Alice acknowledged the alert: her cancel starts at once, Bob's does not.
        let acked = outbox.handle(.finished(.init(messageID: 1, channel: .sms, target: Self.alice), attempt: aliceAlert, Self.ok), now: t)
        #expect(Self.starts(acked).map(\.id) == [2])
        #expect(Self.starts(acked).map(\.target) == [Self.alice])
        // Bob's retry is the alert again, after its backoff; then his cancel.
        #expect(Self.starts(outbox.handle(.tick, now: t + Self.second / 2)).isEmpty)
        t += Self.second
        let retry = Self.starts(outbox.handle(.tick, now: t))
        #expect(retry.map(\.id) == [1])
        #expect(retry.map(\.target) == [Self.bob])
        let bobCancel = outbox.handle(.finished(.init(messageID: 1, channel: .sms, target: Self.bob), attempt: retry[0].attempt, Self.ok), now: t)
        #expect(Self.starts(bobCancel).map(\.id) == [2])
        #expect(outbox.owedCount == 2)
    }

    @Test func anotherAlertNeverWaitsBehindAnOpenAlertsMessages() {
        var outbox = Outbox(settings: Self.settings)
        _ = outbox.handle(.add([Self.message(1, 0, .alert, alert: "a")]), now: 0)
        _ = outbox.handle(.add([Self.message(2, 1, .followUp, alert: "a")]), now: 0)
        // A second alert to the same contact while the first is still going out.
        #expect(Self.startedIDs(outbox.handle(.add([Self.message(3, 0, .alert, alert: "b")]), now: 0)) == [3])
    }

    @Test func aNewerFollowUpReplacesUnsentOlderOnesAndTheLastWordStays() {
        var outbox = Outbox(settings: Self.settings)
        var t: UInt64 = 0
        let alert = Self.starts(outbox.handle(.add([Self.message(1, 0, .alert)]), now: t))
        #expect(alert.map(\.id) == [1])
        // An outage: the alert keeps failing while follow-ups pile up behind it.
        var attempt = alert[0].attempt
        var replacedIDs: [Int64] = []
        for minute in 1...5 {
            let failed = outbox.handle(.finished(.init(messageID: 1, channel: .sms, target: Self.alice), attempt: attempt, Self.down), now: t)
            #expect(Self.starts(failed).isEmpty)
            replacedIDs += Self.replaced(outbox.handle(.add([Self.message(Int64(1 + minute), minute, .followUp)]), now: t))
            t += 60 * Self.second
            let retry = Self.starts(outbox.handle(.tick, now: t))
            #expect(retry.map(\.id) == [1], "only the alert is retried, never a follow-up ahead of it")
            attempt = retry[0].attempt
        }
        #expect(replacedIDs == [2, 3, 4, 5])
        _ = outbox.handle(.add([Self.message(7, 6, .cancelled)]), now: t)
        #expect(outbox.owedCount == 3)
        // The network is back: the alert, the newest follow-up, then the cancel; one at a time.
        let newest = outbox.handle(.finished(.init(messageID: 1, channel: .sms, target: Self.alice), attempt: attempt, Self.ok), now: t)
        let followUp = Self.starts(newest)
        #expect(followUp.map(\.id) == [6])
        let cancel = Self.starts(outbox.handle(.finished(.init(messageID: 6, channel: .sms, target: Self.alice), attempt: followUp[0].attempt, Self.ok), now: t))
        #expect(cancel.map(\.id) == [7])
        #expect(Self.starts(outbox.handle(.finished(.init(messageID: 7, channel: .sms, target: Self.alice), attempt: cancel[0].attempt, Self.ok), now: t)).isEmpty)
        #expect(outbox.owedCount == 0)
    }

    @Test func aFollowUpInFlightIsNotReplacedUntilItFails() {
        var outbox = Outbox(settings: Self.settings)
        let alert = Self.starts(outbox.handle(.add([Self.message(1, 0, .alert)]), now: 0))
        #expect(Self.starts(outbox.handle(.finished(.init(messageID: 1, channel: .sms, target: Self.alice), attempt: alert[0].attempt, Self.ok), now: 0)).isEmpty)
        let first = Self.starts(outbox.handle(.add([Self.message(2, 1, .followUp)]), now: 0))
        #expect(first.map(\.id) == [2])
        // Follow-up 1 is in flight: 2 waits behind it and replaces nothing yet.
        let newer = outbox.handle(.add([Self.message(3, 2, .followUp)]), now: 0)
        #expect(Self.replaced(newer).isEmpty)
        #expect(Self.starts(newer).isEmpty)
        // It fails: the newer one takes its place, after the failed one's backoff.
        let failed = outbox.handle(.finished(.init(messageID: 2, channel: .sms, target: Self.alice), attempt: first[0].attempt, Self.down), now: 0)
        #expect(Self.replaced(failed) == [2])
        #expect(Self.starts(failed).isEmpty)
        #expect(Self.startedIDs(outbox.handle(.tick, now: Self.second)) == [3])
    }

    @Test func aCallThatNeverReturnsIsGivenUpAtItsDeadlineAndRetried() {
        var outbox = Outbox(settings: Self.settings)
        let deadline = UInt64((Self.settings.attemptTimeoutSeconds + Outbox.Settings.deadlineGraceSeconds) * 1e9)
        let first = Self.starts(outbox.handle(.add([Self.message(1, 0, .alert), Self.message(2, 1, .cancelled)]), now: 0))
        #expect(first.map(\.id) == [1])
        #expect(outbox.handle(.tick, now: deadline - 1).isEmpty)
        let givenUp = outbox.handle(.tick, now: deadline)
        guard case .failed(let delivery, let failure, let timedOut, let retryIn) = givenUp.first else {
            Issue.record("not given up: \(givenUp)")
            return
        }
        #expect(delivery.key.messageID == 1)
        #expect(delivery.attempts == 1)
        #expect(timedOut)
        #expect(failure.message.contains("no answer within 30 s"))
        #expect(retryIn == 1)
        #expect(Self.starts(givenUp).isEmpty)
        let second = Self.starts(outbox.handle(.tick, now: deadline + Self.second))
        #expect(second.map(\.id) == [1])
        #expect(second[0].attempt != first[0].attempt)

        // The hung call fails after all: already counted, ignored.
        let key = Delivery.Key(messageID: 1, channel: .sms, target: Self.alice)
        #expect(outbox.handle(.finished(key, attempt: first[0].attempt, Self.down), now: deadline + 2 * Self.second).isEmpty)
        // Or it got through after all: acknowledged, but the cancel waits until the newer
        // attempt is over, so two attempts of the queue never run side by side.
        let late = outbox.handle(.finished(key, attempt: first[0].attempt, Self.ok), now: deadline + 2 * Self.second)
        #expect(late.count == 1)
        guard case .acknowledged(let acked, _) = late.first else {
            Issue.record("the late answer did not acknowledge: \(late)")
            return
        }
        #expect(acked.attempts == 1)
        #expect(outbox.owedCount == 1)
        let cancel = outbox.handle(.finished(key, attempt: second[0].attempt, Self.down), now: deadline + 3 * Self.second)
        #expect(Self.startedIDs(cancel) == [2])
        #expect(cancel.count == 1, "no second acknowledgement, no failure counted: \(cancel)")
    }

    @Test func retriesBackOffToTheMaximumAndRetryNowCutsTheWait() {
        var outbox = Outbox(settings: .init(attemptTimeoutSeconds: 5, retryMaxSeconds: 10))
        var t: UInt64 = 0
        var attempt = Self.starts(outbox.handle(.add([Self.message(1, 0, .alert)]), now: t))[0].attempt
        var waits: [Double] = []
        for _ in 0..<6 {
            let failed = outbox.handle(.finished(.init(messageID: 1, channel: .sms, target: Self.alice), attempt: attempt, Self.down), now: t)
            guard case .failed(_, _, _, let retryIn) = failed.first else { return }
            waits.append(retryIn)
            #expect(outbox.waitingCount(now: t) == 1)
            #expect(outbox.handle(.tick, now: t + UInt64(retryIn * 1e9) - 1).isEmpty)
            t += UInt64(retryIn * 1e9)
            attempt = Self.starts(outbox.handle(.tick, now: t))[0].attempt
        }
        #expect(waits == [1, 2, 4, 8, 10, 10])
        _ = outbox.handle(.finished(.init(messageID: 1, channel: .sms, target: Self.alice), attempt: attempt, Self.down), now: t)
        #expect(Self.startedIDs(outbox.handle(.retryNow, now: t + 1)) == [1])
        #expect(outbox.waitingCount(now: t + 1) == 0)
    }

    @Test func deliveriesHandedInTwiceAreKeptOnceAndOrderedBySequence() {
        var outbox = Outbox(settings: Self.settings)
        // Owed from before a restart, read back in any order: the alert still goes first.
        let first = outbox.handle(.add([Self.message(2, 1, .followUp), Self.message(1, 0, .alert), Self.message(1, 0, .alert)]), now: 0)
        #expect(Self.startedIDs(first) == [1])
        #expect(outbox.owedCount == 2)
        #expect(Self.startedIDs(outbox.handle(.add([Self.message(1, 0, .alert)]), now: 0)).isEmpty)
        #expect(outbox.owedCount == 2)
    }
}
