import ModemManager
import PacerCore
import Testing
@testable import SOS

/// The lane's pure core on injected time: its actions are read, its effects answered by hand.
/// Nothing here sleeps, starts a thread or opens a store.
struct CoreDriver {
    static let second: UInt64 = 1_000_000_000
    static let ms: UInt64 = 1_000_000
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, in ms.
    static let wallOffsetMs: Int64 = 1_778_398_000_000

    var core: LaneCore
    var t: UInt64 = 1000 * second
    private(set) var lastStoredID: Int64 = 0

    init(settings: LaneSettings = LaneTests.settings(), channels: Set<AlertChannelName> = [.sms, .https, .hook], canCall: Bool = false) {
        var serial = 0
        core = LaneCore(settings: settings, channels: channels, canCall: canCall, newUUID: {
            serial += 1
            return "alert-\(serial)"
        })
    }

    var clock: LaneClock { LaneClock(monotonicNs: t, wallMs: Self.wallOffsetMs + Int64(t / Self.ms)) }

    mutating func handle(_ input: LaneCoreInput) -> [LaneAction] { core.handle(input, now: clock) }
    mutating func handle(_ input: LaneInput) -> [LaneAction] { core.handle(input, now: clock) }

    /// Ticks every 250 ms until `until` (inclusive); all their actions.
    mutating func tick(until: UInt64) -> [LaneAction] {
        var actions: [LaneAction] = []
        while t + Self.second / 4 <= until {
            t += Self.second / 4
            actions += handle(.tick)
        }
        return actions
    }

    /// The deliveries sos.db would give `message` under a new id.
    mutating func stored(_ message: AlertStore.NewMessage, alertUUID: String, kind: String, test: Bool = false) -> [Delivery] {
        lastStoredID += 1
        let id = lastStoredID
        return message.targets.map {
            Delivery(key: .init(messageID: id, channel: $0.channel, target: $0.target), alertUUID: alertUUID, kind: kind, test: test,
                     sequence: message.sequence, type: message.type, sms: message.sms, body: message.body, attempts: 0, lastError: nil,
                     acknowledgedMs: nil)
        }
    }

    /// Answers every store request in `actions` at once (as a store that works would), and
    /// returns the actions with those the answers brought in their place.
    mutating func withStore(_ actions: [LaneAction]) -> [LaneAction] {
        var all: [LaneAction] = []
        for action in actions {
            all.append(action)
            switch action {
            case .commitAlert(let record, let message, let memoryID, _):
                all += withStore(handle(.commitWaited(messageID: memoryID, .success(stored(message, alertUUID: record.uuid, kind: record.kind, test: record.test)))))
            case .storeMessage(let message, let uuid, _, let memoryID):
                all += withStore(handle(.messageStored(messageID: memoryID, .success(stored(message, alertUUID: uuid, kind: "?")))))
            case .noteCall(let uuid, _):
                all += withStore(handle(.callNoted(alertUUID: uuid, .success(true))))
            default:
                break
            }
        }
        return all
    }

    /// The lane answers `.raise` with the new alert's UUID.
    mutating func raise() throws -> (uuid: String, actions: [LaneAction]) {
        let actions = withStore(handle(.raiseNow("test")))
        guard case .reply(.raised(let result))? = actions.last else { throw LaneRefusal("no reply: \(actions)") }
        return (try result.get(), actions)
    }
}

/// Requests whose answer the tests read from the `.reply` action instead.
extension LaneInput {
    static let cancelNow = LaneInput.cancel(reply: { _ in })
    static let statusNow = LaneInput.status(reply: { _ in })
    static let testNow = LaneInput.test(reply: { _ in })
    static func raiseNow(_ source: String = "test") -> LaneInput { .raise(source: source, reply: { _ in }) }
}

// MARK: What the actions say

func starts(_ actions: [LaneAction]) -> [(delivery: Delivery, attempt: Int)] {
    actions.compactMap { if case .startAttempt(let d, let attempt, _, _) = $0 { (d, attempt) } else { nil } }
}

func logs(_ actions: [LaneAction]) -> [String] {
    actions.compactMap { if case .log(_, let message, _) = $0 { message } else { nil } }
}

func said(_ actions: [LaneAction]) -> [String] {
    actions.compactMap { if case .say(let cue, _) = $0 { cue.text } else { nil } }
}

func writes(_ actions: [LaneAction]) -> [LaneStoreWrite] {
    actions.compactMap { if case .storeWrite(let write, _, _) = $0 { write } else { nil } }
}

/// (alert, sequence, type, sms) of every message the lane asked to store.
func storedMessages(_ actions: [LaneAction]) -> [(uuid: String, sequence: Int, type: String, sms: String)] {
    actions.compactMap { if case .storeMessage(let m, let uuid, _, _) = $0 { (uuid, m.sequence, m.type, m.sms) } else { nil } }
}

func calls(_ actions: [LaneAction]) -> [String] {
    actions.compactMap {
        switch $0 {
        case .noteCall: "note"
        case .placeCall(_, let number, _): "place \(number)"
        case .hangUp: "hang up"
        case .startCallAudio: "speak"
        case .stopCallAudio: "stop speaking"
        case .storeCallState(let state, _): "store \(state)"
        case .publishCall(let call): "show \(call?.state ?? "-")"
        default: nil
        }
    }
}

/// The commit an alert asked for.
func commit(_ actions: [LaneAction]) throws -> (record: AlertStore.NewAlert, message: AlertStore.NewMessage, memoryID: Int64, waitUntilNs: UInt64) {
    for case .commitAlert(let record, let message, let memoryID, let waitUntilNs) in actions { return (record, message, memoryID, waitUntilNs) }
    throw LaneRefusal("no commit: \(actions)")
}

/// The status the lane answered with.
func statusReply(_ actions: [LaneAction]) throws -> LaneStatus {
    for case .reply(.status(let status)) in actions { return status }
    throw LaneRefusal("no status: \(actions)")
}

func index(_ actions: [LaneAction], _ matches: (LaneAction) -> Bool) -> Int? { actions.firstIndex(where: matches) }

@Suite(.timeLimit(.minutes(10))) struct LaneCoreTests {
    static let second = CoreDriver.second
    /// Monitoring off (a manual SOS still goes out): no strap warnings among the actions.
    static let hookOnly = LaneTests.settings(enabled: false, contacts: [], alertsURL: nil, retryMaxSeconds: 4, attemptTimeoutSeconds: 5)
    static let hookOnlyMonitoring = LaneTests.settings(contacts: [], alertsURL: nil, retryMaxSeconds: 4, attemptTimeoutSeconds: 5)
    static let down = Result<String, ChannelFailure>.failure(ChannelFailure("exited 1"))

    @Test func aFailedAttemptIsRetriedWithBackoffAndOneThatNeverAnswersIsGivenUpAtItsDeadline() throws {
        var lane = CoreDriver(settings: Self.hookOnly)
        let (uuid, raised) = try lane.raise()
        let first = try #require(starts(raised).first)
        #expect(starts(raised).count == 1)
        #expect(first.delivery.key.messageID == 1, "sent under its id in sos.db")
        guard case .startAttempt(_, _, let timeout, let startedNs)? = raised.first(where: { if case .startAttempt = $0 { true } else { false } }) else {
            Issue.record("no attempt")
            return
        }
        #expect(timeout == .seconds(5))
        #expect(startedNs == lane.t)

        // Fails after 1 s: retried 1 s later, not before.
        lane.t += Self.second
        let failed = lane.handle(.delivered(first.delivery.key, attempt: first.attempt, Self.down, startedNs: startedNs))
        #expect(logs(failed).contains { $0.hasSuffix("failed (attempt 1): exited 1; retrying in 1 s") })
        #expect(writes(failed) == [.failed(first.delivery.key, error: "exited 1", atMs: CoreDriver.wallOffsetMs + Int64(lane.t / CoreDriver.ms))])
        #expect(starts(lane.tick(until: lane.t + Self.second * 3 / 4)).isEmpty)
        let retry = starts(lane.tick(until: lane.t + Self.second / 4))
        #expect(retry.map(\.delivery.key) == [first.delivery.key])
        #expect(retry.first?.delivery.attempts == 1)

        // The retry never answers: given up at the channel's 5 s plus the lane's 5 s grace.
        let sent = lane.t
        #expect(logs(lane.tick(until: sent + 9 * Self.second + 3 * Self.second / 4)).isEmpty)
        let givenUp = lane.tick(until: sent + 10 * Self.second)
        #expect(logs(givenUp).contains { $0.contains("failed (attempt 2): no answer within 5 s (+5 s); given up, retrying; retrying in 2 s") })
        #expect(starts(givenUp).isEmpty)
        // Backoff 1, 2, 4, then capped at retry_max_s (4).
        let third = try #require(starts(lane.tick(until: lane.t + 2 * Self.second)).first)
        lane.t += Self.second
        _ = lane.handle(.delivered(first.delivery.key, attempt: third.attempt, Self.down, startedNs: lane.t))
        #expect(starts(lane.tick(until: lane.t + 4 * Self.second - Self.second / 4)).isEmpty)
        let fourth = try #require(starts(lane.tick(until: lane.t + Self.second / 4)).first)
        _ = lane.handle(.delivered(first.delivery.key, attempt: fourth.attempt, Self.down, startedNs: lane.t))
        #expect(starts(lane.tick(until: lane.t + 4 * Self.second - Self.second / 4)).isEmpty)
        let fifth = try #require(starts(lane.tick(until: lane.t + Self.second / 4)).first)

        // The given-up attempt answers after all: that acknowledges the message, and the one in
        // flight ending changes nothing more.
        let late = lane.handle(.delivered(first.delivery.key, attempt: retry[0].attempt, .success("exit 0"), startedNs: sent))
        #expect(logs(late).contains { $0.contains("SOS alert \(uuid) acknowledged by hook \(LaneTests.hookPath) after 4 attempt(s): exit 0") })
        #expect(writes(late).count == 1)
        #expect(lane.handle(.delivered(first.delivery.key, attempt: fifth.attempt, Self.down, startedNs: lane.t)).isEmpty)
        #expect(lane.core.owedCount == 0)
        #expect(starts(lane.tick(until: lane.t + 60 * Self.second)).isEmpty)
    }

    @Test func dispatchStartsAtTheCommitCapAndAcknowledgementsAreRecordedAfterTheCommit() throws {
        var lane = CoreDriver(settings: LaneTests.settings(enabled: false))
        let raisedAt = lane.t
        let raised = lane.handle(.raiseNow("pacerctl"))
        let (record, message, memoryID, waitUntilNs) = try commit(raised)
        #expect(waitUntilNs == raisedAt + 200 * CoreDriver.ms)
        #expect(memoryID < 0)
        #expect(starts(raised).isEmpty, "nothing goes out before the commit or the cap")
        #expect(record.kind == "manual")
        #expect(message.targets.count == 4)

        // The cap: still committing, every channel starts from memory.
        lane.t = waitUntilNs
        let dispatched = lane.handle(.commitWaited(messageID: memoryID, nil))
        #expect(starts(dispatched).count == 4)
        #expect(starts(dispatched).allSatisfy { $0.delivery.key.messageID == memoryID })
        #expect(logs(dispatched).contains { $0.contains("sos.db has not committed it within 200 ms; dispatching from memory") })
        #expect(!logs(dispatched).contains { $0.contains(" recorded: ") }, "the recorded stage waits for the commit")
        let timing = try #require(dispatched.compactMap { if case .timing(let t) = $0 { t } else { nil } }.first)
        #expect(timing.recordedNs == nil)
        #expect(timing.firstDispatchNs == raisedAt + 200 * CoreDriver.ms)
        #expect(timing.confirmingNs == raisedAt)

        // Acknowledged and failed before the commit is done: nothing written yet.
        lane.t += 50 * CoreDriver.ms
        var outcomes: [LaneAction] = []
        for (index, start) in starts(dispatched).enumerated() {
            outcomes += lane.handle(.delivered(start.delivery.key, attempt: start.attempt, index == 0 ? Self.down : .success("ok"), startedNs: waitUntilNs))
        }
        #expect(logs(outcomes).filter { $0.contains("acknowledged") }.count == 3)
        #expect(writes(outcomes).isEmpty)

        // The commit is done: the outcomes so far are written under the ids in sos.db, in order.
        lane.t += 2 * Self.second
        let stored = lane.stored(message, alertUUID: record.uuid, kind: record.kind)
        let committed = lane.handle(.committed(messageID: memoryID, .success(stored)))
        let atMs = CoreDriver.wallOffsetMs + Int64((waitUntilNs + 50 * CoreDriver.ms) / CoreDriver.ms)
        #expect(writes(committed) == [.failed(stored[0].key, error: "exited 1", atMs: atMs)] + stored[1...].map { .acknowledged($0.key, atMs: atMs) })
        #expect(logs(committed).contains { $0.contains("recorded: 2250.0 ms after the confirming sample, after dispatch began; 4 outcome(s) recorded now") })
        // The retry after the commit is recorded at once.
        let retry = try #require(starts(lane.tick(until: lane.t + Self.second)).first)
        #expect(retry.delivery.key.messageID == memoryID, "the attempt keeps its key; the write maps it")
        let acked = lane.handle(.delivered(retry.delivery.key, attempt: retry.attempt, .success("ok"), startedNs: lane.t))
        #expect(writes(acked).count == 1)
        if case .acknowledged(let key, _)? = writes(acked).first { #expect(key == stored[0].key) }
        // A second answer for the same commit changes nothing.
        #expect(lane.handle(.committed(messageID: memoryID, .success(stored))).isEmpty)
    }

    @Test func aCommitThatFailsLateLeavesOutcomesUnwrittenAndTheAlertCancellable() throws {
        var lane = CoreDriver(settings: Self.hookOnly)
        let raised = lane.handle(.raiseNow("test"))
        let (_, _, memoryID, waitUntilNs) = try commit(raised)
        lane.t = waitUntilNs
        let start = try #require(starts(lane.handle(.commitWaited(messageID: memoryID, nil))).first)
        _ = lane.handle(.delivered(start.delivery.key, attempt: start.attempt, .success("ok"), startedNs: lane.t))
        let failed = lane.handle(.committed(messageID: memoryID, .failure(AlertStoreError("the disk gave up"))))
        #expect(writes(failed).isEmpty)
        #expect(logs(failed).contains { $0.contains("could not be recorded (SOS store: the disk gave up); sending it anyway") })
        let cancel = lane.withStore(lane.handle(.cancelNow))
        #expect(storedMessages(cancel).map(\.type) == ["cancelled"])
        #expect(starts(cancel).count == 1)
    }

    @Test func anAlertWithoutAStoreGoesOutFromMemoryAtOnce() throws {
        var lane = CoreDriver(settings: Self.hookOnly)
        let raised = lane.handle(.raiseNow("test"))
        let (_, _, memoryID, _) = try commit(raised)
        let sent = lane.handle(.commitWaited(messageID: memoryID, .failure(AlertStoreError("no SOS store"))))
        #expect(starts(sent).map(\.delivery.key.messageID) == [memoryID])
        #expect(logs(sent).contains { $0.contains("could not be recorded") })
        #expect(logs(sent).contains { $0.contains("recorded: NOT recorded (store unavailable)") })
        let start = try #require(starts(sent).first)
        #expect(writes(lane.handle(.delivered(start.delivery.key, attempt: start.attempt, .success("ok"), startedNs: lane.t))).isEmpty)
    }

    /// Two alerts left open (an old manual one and a high one), one more manual before them:
    /// the newest of each kind is the watcher's again and says the device restarted, after what
    /// was owed; the oldest is only cancellable; no call is ever placed again.
    @Test func alertsLeftOpenAreAdoptedAndTheDeviceRestartedGoesOutAfterWhatWasOwed() throws {
        var settings = LaneTests.settings(enabled: false, contacts: [], alertsURL: nil)
        settings.call = "+15550100112"
        var lane = CoreDriver(settings: settings, canCall: true)
        let owed = Delivery(key: .init(messageID: 9, channel: .hook, target: LaneTests.hookPath), alertUUID: "high", kind: "hr_high", test: false,
                            sequence: 2, type: "follow_up", sms: "SOS update", body: "{}", attempts: 3, lastError: "exited 1", acknowledgedMs: nil)
        let open: [AlertStore.OpenAlert] = [(uuid: "old", kind: "manual", lastSequence: 0, callPlacedMs: nil),
                                            (uuid: "high", kind: "hr_high", lastSequence: 2, callPlacedMs: 1_778_398_000_000),
                                            (uuid: "manual", kind: "manual", lastSequence: 1, callPlacedMs: nil)]
        let restored = lane.handle(.restore(open: .success(open), pending: .success([owed])))
        #expect(logs(restored).contains("SOS alert high: its call was placed before the restart; it is not placed again"))
        #expect(logs(restored).contains("SOS alert manual: no call was placed before the restart; none is placed now"))
        #expect(logs(restored).contains("1 SOS message(s) recorded before the restart are not acknowledged yet; sending them again"))
        // The owed one starts first; "device restarted" only for the newest of each kind.
        #expect(starts(restored).map(\.delivery.key) == [owed.key])
        let restarts = storedMessages(restored)
        #expect(restarts.map(\.uuid) == ["high", "manual"])
        #expect(restarts.map(\.sequence) == [3, 2])
        #expect(restarts.allSatisfy { $0.type == "follow_up" && $0.sms.hasPrefix("SOS update, device restarted") })
        #expect(calls(restored).isEmpty)
        // Behind the owed follow-up of the same alert and target: in sequence order.
        let answered = lane.withStore(restored)
        #expect(starts(answered).map(\.delivery.alertUUID) == ["high", "manual"])
        let status = lane.handle(.statusNow)
        let shown = try statusReply(status)
        #expect(Set(shown.openAlerts) == ["old", "high", "manual"])
        #expect(shown.call == nil)

        // Their follow-ups go on a period after the restart (not at once, not never).
        let quiet = lane.tick(until: lane.t + 59 * Self.second)
        #expect(storedMessages(quiet).isEmpty)
        let next = storedMessages(lane.tick(until: lane.t + Self.second))
        #expect(next.map(\.uuid).sorted() == ["high", "manual"])
        #expect(next.first { $0.uuid == "high" }?.sequence == 4)
        #expect(next.allSatisfy { $0.type == "follow_up" && !$0.sms.contains("restarted") })

        // A cancel reaches all three, after each one's newest message; still no call.
        let cancel = lane.handle(.cancelNow)
        #expect(storedMessages(cancel).map(\.type) == ["cancelled", "cancelled", "cancelled"])
        #expect(Dictionary(uniqueKeysWithValues: storedMessages(cancel).map { ($0.uuid, $0.sequence) }) == ["old": 1, "high": 5, "manual": 4])
        guard case .reply(.cancelled(.success(3)))? = cancel.last else {
            Issue.record("cancel did not answer 3: \(cancel)")
            return
        }
        #expect(calls(cancel).isEmpty)
    }

    @Test func aStoreThatCannotBeReadAtStartIsLoggedAndNothingIsAdopted() {
        var lane = CoreDriver(settings: LaneTests.settings(enabled: false))
        let restored = lane.handle(.restore(open: .failure(AlertStoreError("locked")), pending: .failure(AlertStoreError("locked"))))
        #expect(logs(restored) == ["SOS store: locked; alerts open before the restart cannot be cancelled",
                                   "SOS store: locked; messages owed from before the restart cannot be resumed"])
        guard case .reply(.cancelled(.failure(let refusal)))? = lane.handle(.cancelNow).last else {
            Issue.record("a cancel with nothing open was not refused")
            return
        }
        #expect(refusal.message == "no alert is open")
    }

    /// One follow-up per period; after a long stall of the lane only one, with the newest news.
    @Test func followUpsGoOutOncePerPeriodEvenAfterAStall() throws {
        var lane = CoreDriver(settings: Self.hookOnly)
        let (uuid, _) = try lane.raise()
        _ = lane.handle(.position(AlertPosition(latitude: 45.5, longitude: 9.2, time: Timestamp(milliseconds: Int64(lane.t / CoreDriver.ms)),
                                                accuracyMeters: 4), wallMinusMonotonicMs: nil))
        #expect(storedMessages(lane.tick(until: lane.t + 59 * Self.second + 3 * Self.second / 4)).isEmpty)
        let first = storedMessages(lane.tick(until: lane.t + Self.second / 4))
        #expect(first.map(\.sequence) == [1])
        #expect(first.first?.uuid == uuid)
        #expect(first.first?.sms.contains("45.5") == true, "\(first)")
        #expect(storedMessages(lane.tick(until: lane.t + 59 * Self.second)).isEmpty)
        #expect(storedMessages(lane.tick(until: lane.t + Self.second)).map(\.sequence) == [2])
        // No tick for 5 minutes (a stalled lane): one follow-up, not five.
        lane.t += 300 * Self.second
        #expect(storedMessages(lane.handle(.tick)).map(\.sequence) == [3])
        #expect(storedMessages(lane.tick(until: lane.t + 30 * Self.second)).isEmpty)
    }

    /// The runner cancels while the alert is still going out: each target gets the "FALSE ALARM"
    /// only once it acknowledged the alert, and a failed alert is retried before it.
    @Test func aCancelWaitsForEachTargetsAlert() throws {
        var lane = CoreDriver(settings: LaneTests.settings(enabled: false, alertsURL: nil, hook: []))
        let (uuid, raised) = try lane.raise()
        let alerts = starts(raised)
        #expect(alerts.map(\.delivery.key.target) == LaneTests.contacts)
        let cancel = lane.withStore(lane.handle(.cancelNow))
        #expect(storedMessages(cancel).map(\.uuid) == [uuid])
        #expect(starts(cancel).isEmpty, "both alerts are still in flight")
        #expect(said(cancel) == ["Alert cancelled. Sending false alarm message."])
        guard case .reply(.cancelled(.success(1)))? = cancel.last else {
            Issue.record("the cancel's answer is not last: \(cancel)")
            return
        }
        // The first contact acknowledges: only their cancel starts.
        let acked = lane.handle(.delivered(alerts[0].delivery.key, attempt: alerts[0].attempt, .success("SENT"), startedNs: lane.t))
        #expect(starts(acked).map(\.delivery.type) == ["cancelled"])
        #expect(starts(acked).map(\.delivery.key.target) == [LaneTests.contacts[0]])
        // The second fails: the alert again after its backoff, then the cancel.
        let failed = lane.handle(.delivered(alerts[1].delivery.key, attempt: alerts[1].attempt, Self.down, startedNs: lane.t))
        #expect(starts(failed).isEmpty)
        let retry = starts(lane.tick(until: lane.t + Self.second))
        #expect(retry.map(\.delivery.type) == ["alert"])
        let last = lane.handle(.delivered(retry[0].delivery.key, attempt: retry[0].attempt, .success("SENT"), startedNs: lane.t))
        #expect(starts(last).map(\.delivery.type) == ["cancelled"])
        #expect(starts(last).map(\.delivery.key.target) == [LaneTests.contacts[1]])
        // Nothing is open any more.
        guard case .reply(.cancelled(.failure))? = lane.handle(.cancelNow).last else {
            Issue.record("a second cancel was not refused")
            return
        }
    }

    @Test func aTestNeedsAChannelAndIsNeverCalledNorOpen() throws {
        var settings = LaneTests.settings(enabled: false, contacts: [], alertsURL: nil, hook: [])
        settings.call = "+15550100112"
        var lane = CoreDriver(settings: settings, canCall: true)
        guard case .reply(.tested(.failure(let refusal)))? = lane.handle(.testNow).last else {
            Issue.record("a test with no channel was not refused")
            return
        }
        #expect(refusal.message.contains("[sos] hook"))
        settings.hook = [LaneTests.hookPath]
        _ = lane.handle(.reload(settings))
        let tested = lane.withStore(lane.handle(.testNow))
        #expect(starts(tested).map(\.delivery.test) == [true])
        #expect(calls(tested).isEmpty)
        let status = try statusReply(lane.handle(.statusNow))
        #expect(status.openAlerts.isEmpty)
    }

    /// `[sos] call`: placed after the texts, its states shown, hung up on cancel.
    @Test func theCallIsPlacedAfterTheTextsShownAndHungUpOnCancel() throws {
        var settings = Self.hookOnly
        settings.call = "+15550100112"
        var lane = CoreDriver(settings: settings, canCall: true)
        let (uuid, raised) = try lane.raise()
        let firstText = try #require(index(raised) { if case .startAttempt = $0 { true } else { false } })
        let noted = try #require(index(raised) { if case .noteCall = $0 { true } else { false } })
        #expect(firstText < noted, "the texts start before the call")
        #expect(calls(raised) == ["note", "show placing", "place +15550100112"])
        #expect(logs(raised).contains("SOS alert \(uuid): calling …112"))
        #expect(!logs(raised).contains { $0.contains("+15550100112") }, "the whole number is in the journal")

        var shown: [String] = []
        for state in [CallState.dialing, .ringingOut, .ringingOut, .active] {
            shown += calls(lane.handle(.callState(alertUUID: uuid, state)))
        }
        #expect(shown == ["store dialing", "show dialing", "store ringing-out", "show ringing", "store active", "show active", "speak"])
        _ = lane.handle(.callStarted(alertUUID: uuid, .success(CallPlacement(modem: "/m/0", path: "/m/0/Call/1"))))
        let status = try statusReply(lane.handle(.statusNow))
        #expect(status.call == LaneCallStatus(alertUUID: uuid, state: "active"))

        let cancel = lane.withStore(lane.handle(.cancelNow))
        #expect(calls(cancel) == ["stop speaking", "hang up"])
        #expect(calls(lane.handle(.callState(alertUUID: uuid, .terminated))) == ["store terminated", "show ended", "stop speaking"])
        // Ended: later states of the same call are not news.
        #expect(calls(lane.handle(.callState(alertUUID: uuid, .active))).isEmpty)
        let after = try statusReply(lane.handle(.statusNow))
        #expect(after.call?.state == "ended")
    }

    @Test func aCallCancelledBeforeStartAnsweredIsHungUpOnceItHas() throws {
        var settings = Self.hookOnly
        settings.call = "+15550100112"
        var lane = CoreDriver(settings: settings, canCall: true)
        let (uuid, _) = try lane.raise()
        #expect(calls(lane.withStore(lane.handle(.cancelNow))) == ["stop speaking"], "nothing to hang up yet")
        let placed = lane.handle(.callStarted(alertUUID: uuid, .success(CallPlacement(modem: "/m/0", path: "/m/0/Call/1"))))
        #expect(calls(placed) == ["hang up"])
        #expect(logs(placed).contains("SOS alert \(uuid): call started through /m/0 (/m/0/Call/1)"))
    }

    @Test func aCallThatFailsIsShownAndNotTriedAgain() throws {
        var settings = Self.hookOnly
        settings.call = "+15550100112"
        var lane = CoreDriver(settings: settings, canCall: true)
        let (uuid, _) = try lane.raise()
        let failed = lane.handle(.callStarted(alertUUID: uuid, .failure(.noVoiceModem)))
        #expect(calls(failed) == ["stop speaking", "store failed: \(CallError.noVoiceModem)", "show failed: \(CallError.noVoiceModem)"])
        #expect(logs(failed).contains { $0.contains("the call could not be placed") && $0.contains("it is not tried again") })
        let status = try statusReply(lane.handle(.statusNow))
        #expect(status.call?.state.hasPrefix("failed: ") == true)
        // Its state changes are no longer followed.
        #expect(calls(lane.handle(.callState(alertUUID: uuid, .dialing))).isEmpty)
    }

    @Test func noCallWhenSosDbSaysItWasPlacedOrThisPacerdCannotCall() throws {
        var settings = Self.hookOnly
        settings.call = "+15550100112"
        var lane = CoreDriver(settings: settings, canCall: true)
        let raised = lane.handle(.raiseNow("test"))
        let (record, message, memoryID, _) = try commit(raised)
        let dispatched = lane.handle(.commitWaited(messageID: memoryID, .success(lane.stored(message, alertUUID: record.uuid, kind: record.kind))))
        #expect(calls(dispatched) == ["note"])
        #expect(lane.handle(.callNoted(alertUUID: record.uuid, .success(false))).isEmpty)
        // sos.db could not say: the call goes ahead (a restart never calls).
        var other = CoreDriver(settings: settings, canCall: true)
        let raisedOther = other.handle(.raiseNow("test"))
        let (otherRecord, _, otherID, _) = try commit(raisedOther)
        _ = other.handle(.commitWaited(messageID: otherID, .failure(AlertStoreError("full"))))
        let unsure = other.handle(.callNoted(alertUUID: otherRecord.uuid, .failure(AlertStoreError("full"))))
        #expect(calls(unsure) == ["show placing", "place +15550100112"])
        #expect(logs(unsure).first?.hasSuffix("calling all the same (a restart never calls, so there is no second call)") == true)

        var cannot = CoreDriver(settings: settings, canCall: false)
        let (_, raisedCannot) = try cannot.raise()
        #expect(calls(raisedCannot).isEmpty)
        #expect(logs(raisedCannot).contains { $0.hasSuffix("[sos] call is set but this pacerd cannot place calls; no call") })
    }

    @Test func shownCallStatesUseTheCLIsWords() {
        #expect(LaneCore.shown(.unknown) == "placing")
        #expect(LaneCore.shown(.ringingOut) == "ringing")
        #expect(LaneCore.shown(.terminated) == "ended")
        #expect(LaneCore.shown(.held) == "held")
    }

    /// A channel this pacerd does not have fails at once and is retried like any other.
    @Test func aTargetOnAMissingChannelFailsAndIsRetried() throws {
        var lane = CoreDriver(settings: Self.hookOnly, channels: [.sms])
        let (_, raised) = try lane.raise()
        #expect(starts(raised).isEmpty)
        #expect(logs(raised).contains { $0.contains("failed (attempt 1): hook is configured but not available in this pacerd; retrying in 1 s") })
        #expect(writes(raised).count == 1)
        #expect(logs(lane.tick(until: lane.t + Self.second)).contains { $0.contains("failed (attempt 2)") })
    }

    /// pacer-cloud answers 429 to an alert's updates past its rate (#31): the server asks to be
    /// tried later, which the retries do; "server rejects alerts" is for what its operator must fix.
    @Test func busyAnswersAreNoRejection() {
        #expect(HTTPSChannel.rejection(429) == nil)
        #expect(HTTPSChannel.rejection(408) == nil)
        #expect(HTTPSChannel.rejection(503) == nil)
        #expect(HTTPSChannel.rejection(401) == 401)
        #expect(HTTPSChannel.rejection(413) == 413)
    }

    /// The server refusing alerts is published once when it starts and once when it ends.
    @Test func aServerRejectingAlertsIsPublishedAndClearedByItsAcknowledgement() throws {
        var lane = CoreDriver(settings: LaneTests.settings(enabled: false, contacts: [], hook: [], retryMaxSeconds: 1))
        let (_, raised) = try lane.raise()
        let start = try #require(starts(raised).first)
        let rejected = lane.handle(.delivered(start.delivery.key, attempt: start.attempt,
                                              .failure(ChannelFailure("HTTP 401", rejectedStatus: 401)), startedNs: lane.t))
        let published = rejected.compactMap { if case .publishServerRejects(let s) = $0 { s } else { nil } }
        #expect(published == [401])
        let retry = try #require(starts(lane.tick(until: lane.t + Self.second)).first)
        let again = lane.handle(.delivered(start.delivery.key, attempt: retry.attempt, .failure(ChannelFailure("HTTP 401", rejectedStatus: 401)),
                                           startedNs: lane.t))
        #expect(!again.contains { if case .publishServerRejects = $0 { true } else { false } }, "no news")
        let status = try statusReply(lane.handle(.statusNow))
        #expect(status.serverProblem == "server rejects alerts: 401")
        let third = try #require(starts(lane.tick(until: lane.t + Self.second)).first)
        let ok = lane.handle(.delivered(start.delivery.key, attempt: third.attempt, .success("HTTP 201"), startedNs: lane.t - Self.second / 2))
        #expect(ok.contains { if case .publishServerRejects(nil) = $0 { true } else { false } })
        #expect(ok.contains { if case .log(_, _, let fields) = $0 { fields["SOS_ATTEMPT_MS"] == "500.0" } else { false } })
    }

    /// The spoken confirmation: what was acknowledged after 20 s, the rest when it is through.
    @Test func theConfirmationIsSpokenPartlyAfterTwentySecondsThenWhole() throws {
        var lane = CoreDriver(settings: LaneTests.settings(enabled: false, alertsURL: nil, hook: []))
        let (_, raised) = try lane.raise()
        #expect(said(raised) == [AlertText.spokenRaised(.manual)])
        let alerts = starts(raised)
        _ = lane.handle(.delivered(alerts[0].delivery.key, attempt: alerts[0].attempt, .success("SENT"), startedNs: lane.t))
        _ = lane.handle(.delivered(alerts[1].delivery.key, attempt: alerts[1].attempt, Self.down, startedNs: lane.t))
        #expect(said(lane.tick(until: lane.t + 19 * Self.second + Self.second / 2)).isEmpty)
        let partial = said(lane.tick(until: lane.t + Self.second / 2))
        #expect(partial == [AlertText.spokenConfirmation(kind: .manual, message: .alert, channels: ["by text message to 1 contact"]) + " Still trying the rest."])
        let retry = try #require(starts(lane.tick(until: lane.t + 60 * Self.second)).first)
        let whole = said(lane.handle(.delivered(retry.delivery.key, attempt: retry.attempt, .success("SENT"), startedNs: lane.t)))
        #expect(whole == [AlertText.spokenConfirmation(kind: .manual, message: .alert, channels: ["by text message to 2 contacts"])])
    }

    /// The lane's clock never comes from inside: message times are the wall time passed in
    /// (or GPS time once a fix gave it).
    @Test func messageTimesComeFromTheInjectedWallClockOrGPS() throws {
        var lane = CoreDriver(settings: Self.hookOnly)
        let raised = lane.handle(.raiseNow("test"))
        let (record, message, _, _) = try commit(raised)
        #expect(record.raisedMs == CoreDriver.wallOffsetMs + Int64(lane.t / CoreDriver.ms))
        #expect(message.createdMs == record.raisedMs)
        var gps = CoreDriver(settings: Self.hookOnly)
        _ = gps.handle(.position(AlertPosition(latitude: 1, longitude: 2, time: Timestamp(milliseconds: Int64(gps.t / CoreDriver.ms)), accuracyMeters: 3),
                                 wallMinusMonotonicMs: 42))
        let (gpsRecord, _, _, _) = try commit(gps.handle(.raiseNow("test")))
        #expect(gpsRecord.raisedMs == Int64(gps.t / CoreDriver.ms) + 42)
    }

    @Test func aRehearsalLeavesTheLaneAsItWas() throws {
        var lane = CoreDriver(settings: Self.hookOnly)
        #expect(lane.core.rehearse(now: lane.clock) == 2, "the breach and the manual alert")
        #expect(lane.core.owedCount == 0)
        let status = try statusReply(lane.handle(.statusNow))
        #expect(status.openAlerts.isEmpty)
    }

    /// Strap notifications confirm a breach (timed from the confirming sample's receipt); back
    /// in range for rearm_s, the all clear goes out for it.
    @Test func aBreachFromStrapNotificationsRaisesThenResolves() throws {
        var lane = CoreDriver(settings: Self.hookOnlyMonitoring)
        func beat(_ bpm: UInt8) -> [LaneAction] {
            lane.t += Self.second
            // An RR interval that varies, as a heart's does (the same one over and over is a frozen strap).
            return lane.withStore(lane.handle(.heartRate(bytes: [0x16, bpm, UInt8(truncatingIfNeeded: lane.t / Self.second), 0x03], receivedNs: lane.t)))
        }
        for _ in 0..<5 { #expect(beat(140).isEmpty) }
        var raised: [LaneAction] = []
        for _ in 0..<3 { raised += beat(200) }
        let timing = try #require(raised.compactMap { if case .timing(let t) = $0 { t } else { nil } }.first)
        #expect(timing.kind == .hrHigh)
        #expect(timing.confirmingNs == lane.t)
        #expect(timing.recordedNs == lane.t)
        #expect(said(raised) == [AlertText.spokenRaised(.hrHigh)])
        #expect(try statusReply(lane.handle(.statusNow)).lastHeartRate == 200)
        var after: [LaneAction] = []
        for _ in 0..<32 { after += beat(120) }
        #expect(storedMessages(after).map(\.type) == ["resolved"])
        #expect(storedMessages(after).first?.uuid == timing.alertUUID)
        #expect(try statusReply(lane.handle(.statusNow)).openAlerts.isEmpty)
    }

    /// The signal and the movement stop together (run or not): "Are you OK?", which a press answers.
    @Test func areYouOKIsAskedAndAnswered() throws {
        var lane = CoreDriver(settings: Self.hookOnlyMonitoring)
        _ = lane.handle(.run(LaneRun(id: 1, uuid: "run-1", paused: false)))
        _ = lane.handle(.deviceBattery(80))
        func fix(speed: Double, latitude: Double) -> LaneInput {
            .position(AlertPosition(latitude: latitude, longitude: 9, time: Timestamp(milliseconds: Int64(lane.t / 1_000_000)),
                                    accuracyMeters: 5, dopplerSpeed: speed), wallMinusMonotonicMs: nil)
        }
        for i in 0..<5 {
            lane.t += Self.second
            _ = lane.handle(fix(speed: 2.5, latitude: 45 + Double(i) * 0.00002))
            _ = lane.handle(.heartRate(bytes: [0x16, 120, UInt8(i), 0x03], receivedNs: lane.t))
        }
        // The runner stops and the strap goes quiet at once.
        for _ in 0..<6 {
            lane.t += Self.second
            _ = lane.handle(fix(speed: 0, latitude: 45.0001))
        }
        // Silent 4.5 s after the last notification, and the body still: asked at once (the
        // countdown, 10 s, is not over).
        let asked = lane.tick(until: lane.t + 3 * Self.second)
        #expect(asked.contains { if case .asking(true) = $0 { true } else { false } })
        #expect(said(asked).contains { $0.hasPrefix("Are you OK?") }, "\(said(asked))")
        let status = try statusReply(lane.handle(.statusNow))
        #expect((status.signal, status.motion, status.asking) == ("silent", "stopped", true))
        let answered = lane.handle(.answer)
        #expect(answered.contains { if case .asking(false) = $0 { true } else { false } })
        #expect(said(answered) == [AlertText.spokenAskAnswered])
        #expect(logs(answered).contains { $0.contains("answered; no help called") })
        #expect(try lane.raise().actions.contains { if case .commitAlert(let record, _, _, _) = $0 { record.runUUID == "run-1" } else { false } })
    }

    /// `pacerctl sync` or the network coming back: what waits out a backoff goes now.
    @Test func retryNowSendsWhatWaitsOutABackoffAtOnce() throws {
        var lane = CoreDriver(settings: Self.hookOnly)
        #expect(lane.handle(.retryNow(reason: "network back")).isEmpty, "nothing waits")
        let (_, raised) = try lane.raise()
        let first = try #require(starts(raised).first)
        _ = lane.handle(.delivered(first.delivery.key, attempt: first.attempt, Self.down, startedNs: lane.t))
        let now = lane.handle(.retryNow(reason: "network back"))
        #expect(logs(now) == ["network back: retrying 1 SOS delivery(ies) now"])
        #expect(starts(now).map(\.delivery.key) == [first.delivery.key])
    }

    /// A reload applies at once (button timings, targets); a very long press raises at its deadline.
    @Test func aVeryLongPressRaisesAtItsDeadline() throws {
        var settings = Self.hookOnly
        settings.buttons = LaneButtonTests.buttons
        var lane = CoreDriver()
        _ = lane.handle(.reload(settings))
        _ = lane.handle(LaneButtonTests.key(.press, atNs: lane.t))
        #expect(lane.core.buttonDeadlineNs == lane.t + 5 * Self.second)
        lane.t += 5 * Self.second
        let raised = lane.handle(.buttonsDue)
        #expect(logs(raised).contains { $0.hasPrefix("very long press on key") })
        #expect(try commit(raised).message.targets.map(\.channel) == [.hook])
        _ = lane.handle(LaneButtonTests.key(.release, atNs: lane.t))
        _ = lane.handle(.buttonsReset)
        #expect(lane.core.buttonDeadlineNs == nil)
        _ = lane.handle(.lane(.shutdown(done: {})))
    }
}
