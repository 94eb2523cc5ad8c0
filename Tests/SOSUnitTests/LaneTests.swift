import Foundation
import PacerCore
import PacerTestSupport
import Testing
import Threads
@testable import SOS

/// A real SOSLane on its own thread, with fake channels and what it reports collected.
final class LaneHarness: Sendable {
    let lane = SOSLane()
    let timings = Shared<[AlertTiming]>([])
    let logs = Shared<[String]>([])
    let cues = Shared<[String]>([])
    /// The synthetic clock of the samples (ms): far ahead of CLOCK_MONOTONIC, so the lane's ticks
    /// (on the real clock) never see silence between samples that are 1 s apart on it.
    let clockMs = Shared<Int64>(Int64(MonotonicTime.nanoseconds() / 1_000_000) + 1_000_000_000)

    init(settings: LaneSettings, store: AlertStore?, channels: [any AlertChannel]) throws {
        let (timings, logs, cues) = (self.timings, self.logs, self.cues)
        try lane.start(settings: settings, store: store, channels: channels,
                       log: { _, message, _ in logs.update { $0.append(message) } },
                       onCue: { cue, _ in cues.update { $0.append(cue.text) } },
                       onTiming: { timing in timings.update { $0.append(timing) } })
    }

    /// One sample, 1 s after the previous on the synthetic clock; returns its receipt time.
    @discardableResult
    func sample(_ bpm: Int) -> UInt64 {
        let ms = clockMs.update { clock in
            clock += 1000
            return clock
        }
        let received = MonotonicTime.nanoseconds()
        lane.put(.sample(HeartRateSample(time: Timestamp(milliseconds: ms), bpm: bpm, rrIntervalsMs: [60_000 / Double(bpm) + Double(ms / 1000 % 7)], contact: true),
                         receivedNs: received))
        return received
    }

    func ask<T: Sendable>(_ make: (@escaping @Sendable (T) -> Void) -> LaneInput) async -> T {
        await withCheckedContinuation { continuation in
            lane.put(make { continuation.resume(returning: $0) })
        }
    }

    /// The lane's status; also a barrier: everything put before it has been handled.
    func status() async -> LaneStatus { await ask { .status(reply: $0) } }
    func raise() async -> Result<String, LaneRefusal> { await ask { .raise(source: "test", reply: $0) } }
    func cancel() async -> Result<Int, LaneRefusal> { await ask { .cancel(reply: $0) } }
    func test() async -> Result<String, LaneRefusal> { await ask { .test(reply: $0) } }

    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lane.put(.shutdown(done: { continuation.resume() }))
        }
    }
}

@Suite(.timeLimit(.minutes(10))) struct LaneTests {
    static let contacts = ["+393470000001", "+393470000002"]
    static let alertsURL = "https://pacer.example.org/v1/alerts"
    static let hookPath = "/usr/local/bin/pacer-hook"

    static func settings(enabled: Bool = true, contacts: [String] = contacts, alertsURL: String? = alertsURL, hook: [String] = [hookPath],
                         retryMaxSeconds: Double = 60, attemptTimeoutSeconds: Double = 5) -> LaneSettings {
        var rules = SOSRules()
        rules.enabled = enabled
        rules.highBpm = 180
        rules.lowBpm = 35
        return LaneSettings(rules: rules, contacts: contacts, alertsURL: alertsURL, hook: hook, deviceName: "pacer-test",
                            attemptTimeoutSeconds: attemptTimeoutSeconds, retryMaxSeconds: retryMaxSeconds)
    }

    static func channels(failFirst: Int = 0) -> (sms: FakeChannel, https: FakeChannel, hook: FakeChannel) {
        (FakeChannel(.sms, failFirst: failFirst), FakeChannel(.https, failFirst: failFirst), FakeChannel(.hook, failFirst: failFirst))
    }

    static func uuid(_ result: Result<String, LaneRefusal>) throws -> String {
        try result.get()
    }

    @Test func threeSamplesAboveTheLimitRaiseOneAlertOnEveryChannel() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let fake = Self.channels()
        let h = try LaneHarness(settings: Self.settings(), store: store, channels: [fake.sms, fake.https, fake.hook])

        for _ in 0..<5 { h.sample(140) }
        h.sample(190)
        h.sample(195)
        // Two out of range are not enough (confirm_samples 3).
        _ = await h.status()
        #expect(h.timings.value.isEmpty)
        let confirming = h.sample(201)
        // Still above: the open alert is not raised again.
        h.sample(203)
        h.sample(204)
        let status = await h.status()

        let timings = h.timings.value
        #expect(timings.count == 1)
        let timing = try #require(timings.first)
        #expect(timing.kind == .hrHigh)
        #expect(timing.confirmingNs == confirming)
        let recorded = try #require(timing.recordedNs)
        let dispatched = try #require(timing.firstDispatchNs)
        #expect(recorded >= timing.confirmingNs)
        #expect(dispatched >= recorded)
        #expect(timing.confirmationSeconds == 2)
        #expect(status.openAlerts == [timing.alertUUID])
        #expect(status.lastHeartRate == 204)

        let all = [fake.sms, fake.https, fake.hook]
        #expect(await eventually { all.map(\.acknowledged.count) == [2, 1, 1] })
        #expect(try await eventually { try store.pending().isEmpty })
        #expect(fake.sms.attempts.map(\.key.target).sorted() == Self.contacts)
        #expect(fake.https.attempts.map(\.key.target) == [Self.alertsURL])
        #expect(fake.hook.attempts.map(\.key.target) == [Self.hookPath])
        for delivery in all.flatMap(\.attempts) {
            #expect(delivery.alertUUID == timing.alertUUID)
            #expect(delivery.type == "alert")
            #expect(delivery.sequence == 0)
            #expect(delivery.sms.hasPrefix("SOS: HIGH heart rate 201 bpm"))
            #expect(delivery.sms.contains("(limit 180)"))
            #expect(delivery.sms.contains("Position unknown"))
            #expect(delivery.sms.contains("Dev pacer-test"))
            let body = try json(delivery.body)
            #expect(body["alert_id"] as? String == timing.alertUUID)
            #expect(body["kind"] as? String == "hr_high")
            #expect(body["sequence"] as? Int == 0)
            #expect(body["type"] as? String == "alert")
            #expect(body["test"] as? Bool == false)
            #expect(body["sms"] as? String == delivery.sms)
            #expect(body["device"] as? String == "pacer-test")
            let heart = try #require(body["heart_rate"] as? [String: Any])
            #expect(heart["bpm"] as? Int == 201)
            #expect(heart["threshold_bpm"] as? Int == 180)
            #expect(heart["trend"] as? String == "rising")
        }
        // The same text everywhere.
        #expect(Set(all.flatMap(\.attempts).map(\.sms)).count == 1)
        #expect(Set(all.flatMap(\.attempts).map(\.body)).count == 1)

        let record = try #require(try store.recent(limit: 5).first)
        #expect(try store.recent(limit: 5).count == 1)
        #expect(record.uuid == timing.alertUUID)
        #expect(record.kind == "hr_high")
        #expect(record.state == "open")
        #expect(record.heartRate == 201)
        #expect(record.deliveries.allSatisfy { $0.attempts == 1 && $0.acknowledgedMs != nil })
        // Said when raised, then once everything acknowledged it.
        #expect(h.cues.value.first == "Heart rate too high. Calling for help.")
        #expect(await eventually {
            h.cues.value.contains("Emergency alert sent by text message to 2 contacts, to the server and to the local hook.")
        })
        await h.shutdown()
    }

    @Test func aFailingChannelIsRetriedUntilAcknowledged() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let hook = FakeChannel(.hook, failFirst: 2)
        let h = try LaneHarness(settings: Self.settings(contacts: [], alertsURL: nil, retryMaxSeconds: 1), store: store, channels: [hook])

        let uuid = try Self.uuid(await h.raise())
        #expect(await eventually { hook.acknowledged.count == 1 })
        #expect(try await eventually { try store.pending().isEmpty })
        #expect(hook.attempts.count == 3)
        #expect(Set(hook.attempts.map(\.key)).count == 1)
        #expect(hook.attempts.allSatisfy { $0.alertUUID == uuid && $0.type == "alert" })
        let delivery = try #require(try store.recent(limit: 1).first?.deliveries.first)
        #expect(delivery.attempts == 3)
        #expect(delivery.lastError == nil)
        #expect(delivery.acknowledgedMs != nil)
        let logs = h.logs.value
        #expect(logs.contains { $0.contains("failed (attempt 1): fake hook failure, 1 left") })
        #expect(logs.contains { $0.contains("failed (attempt 2): fake hook failure, 0 left") })
        #expect(logs.contains { $0.contains("acknowledged by hook \(Self.hookPath) after 3 attempt(s)") })
        await h.shutdown()
    }

    @Test func aSecondRaiseGivesTheOpenAlertBack() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let fake = Self.channels()
        // Monitoring off: a person asking for help is still heard.
        let h = try LaneHarness(settings: Self.settings(enabled: false), store: store, channels: [fake.sms, fake.https, fake.hook])

        let first = try Self.uuid(await h.raise())
        #expect(UUID(uuidString: first) != nil)
        let second = try Self.uuid(await h.raise())
        #expect(second == first)
        #expect(try store.recent(limit: 10).map(\.uuid) == [first])
        #expect(try store.recent(limit: 10).first?.kind == "manual")
        #expect(try await eventually { try store.pending().isEmpty })
        let status = await h.status()
        #expect(status.openAlerts == [first])
        #expect(h.timings.value.count == 1)
        #expect(h.timings.value.first?.kind == .manual)
        // One message per target, not two.
        #expect([fake.sms, fake.https, fake.hook].map(\.attempts.count) == [2, 1, 1])
        #expect([fake.sms, fake.https, fake.hook].flatMap(\.attempts).allSatisfy { $0.alertUUID == first && $0.sms.hasPrefix("SOS: the runner asked for help") })
        await h.shutdown()
    }

    @Test func cancelSendsAFalseAlarmOnEveryTarget() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let fake = Self.channels()
        let all = [fake.sms, fake.https, fake.hook]
        let h = try LaneHarness(settings: Self.settings(), store: store, channels: all)

        #expect(await h.cancel() == .failure(LaneRefusal("no alert is open")))
        #expect(try store.recent(limit: 5).isEmpty)

        let uuid = try Self.uuid(await h.raise())
        #expect(await eventually { all.map(\.acknowledged.count) == [2, 1, 1] })
        #expect(await h.cancel() == .success(1))
        #expect(await eventually { all.map(\.acknowledged.count) == [4, 2, 2] })

        let cancels = all.flatMap(\.attempts).filter { $0.type == "cancelled" }
        #expect(cancels.count == 4)
        #expect(Set(cancels.map(\.key.target)) == Set(Self.contacts + [Self.alertsURL, Self.hookPath]))
        for delivery in cancels {
            #expect(delivery.alertUUID == uuid)
            #expect(delivery.sequence == 1)
            #expect(delivery.sms.hasPrefix("FALSE ALARM, I am OK"))
            let body = try json(delivery.body)
            #expect(body["type"] as? String == "cancelled")
            #expect(body["alert_id"] as? String == uuid)
            #expect(body["sequence"] as? Int == 1)
            #expect(body["kind"] as? String == "manual")
            #expect(body["test"] as? Bool == false)
        }
        #expect(try await eventually { try store.pending().isEmpty })
        #expect(try store.recent(limit: 5).first?.state == "cancelled")
        #expect(await h.status().openAlerts.isEmpty)
        #expect(h.cues.value.contains("Alert cancelled. Sending false alarm message."))
        // Nothing is open any more.
        #expect(await h.cancel() == .failure(LaneRefusal("no alert is open")))
        await h.shutdown()
    }

    @Test func aTestNeedsAChannelAndThenGoesOutMarkedAsATest() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let hook = FakeChannel(.hook)
        let h = try LaneHarness(settings: Self.settings(contacts: [], alertsURL: nil, hook: []), store: store, channels: [hook])

        guard case .failure(let refusal) = await h.test() else {
            Issue.record("a test with no channel was not refused")
            return
        }
        #expect(refusal.message.contains("[sos] contacts"))
        #expect(refusal.message.contains("[upload] url"))
        #expect(refusal.message.contains("[sos] hook"))
        #expect(try store.recent(limit: 5).isEmpty)

        // A reload that configures the hook: now it goes out.
        h.lane.put(.reload(Self.settings(contacts: [], alertsURL: nil, hook: [Self.hookPath])))
        let uuid = try Self.uuid(await h.test())
        #expect(await eventually { hook.acknowledged.count == 1 })
        let delivery = try #require(hook.attempts.first)
        #expect(delivery.alertUUID == uuid)
        #expect(delivery.test)
        #expect(delivery.kind == "test")
        #expect(delivery.sms.hasPrefix("TEST only, please ignore"))
        let body = try json(delivery.body)
        #expect(body["test"] as? Bool == true)
        #expect(body["kind"] as? String == "test")
        #expect(body["alert_id"] as? String == uuid)
        let record = try #require(try store.recent(limit: 5).first)
        #expect(record.test)
        #expect(record.kind == "test")
        // A test is not an open alert.
        #expect(await h.status().openAlerts.isEmpty)
        await h.shutdown()
    }

    @Test func statusReportsTheOpenAlertAndTheChannels() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let fake = Self.channels()
        let h = try LaneHarness(settings: Self.settings(), store: store, channels: [fake.sms, fake.https, fake.hook])

        let quiet = await h.status()
        #expect(quiet.monitoring)
        #expect(quiet.openAlerts.isEmpty)
        #expect(quiet.lastHeartRate == nil)
        #expect(quiet.recent.isEmpty)
        #expect(quiet.storeProblem == nil)
        #expect(quiet.channels == Self.contacts.map { "sms:\($0)" } + ["https:\(Self.alertsURL)", "hook:\(Self.hookPath)"])

        h.sample(150)
        let uuid = try Self.uuid(await h.raise())
        let status = await h.status()
        #expect(status.openAlerts == [uuid])
        #expect(status.lastHeartRate == 150)
        #expect(status.faults.isEmpty)
        #expect(status.recent.map(\.uuid) == [uuid])
        #expect(status.recent.first?.deliveries.count == 4)
        #expect(status.channels == quiet.channels)
        await h.shutdown()
    }

    /// An alert open when the previous pacerd stopped (tools/soak: SIGKILL during an SOS) is
    /// still open after the restart: "device restarted" goes out after its newest message, and
    /// `sos cancel` still calls it off, after that.
    @Test func anAlertLeftOpenBeforeARestartCanStillBeCancelled() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sos.db")
        do {
            let before = try AlertStore(path: path)
            let alert = AlertStore.NewAlert(uuid: "left-open", kind: "manual", test: false, firstOutOfRangeMs: nil, raisedMs: 1_778_398_640_000,
                                            heartRate: 150, latitude: nil, longitude: nil, runUUID: nil)
            let first = AlertStore.NewMessage(sequence: 0, type: "alert", createdMs: 1_778_398_640_000, sms: "SOS: left open",
                                              body: #"{"alert_id":"left-open","sequence":0}"#, targets: [(.https, Self.alertsURL)])
            for delivery in try before.record(alert, message: first) { try before.acknowledged(delivery.key, atMs: 1_778_398_641_000) }
            let followUp = AlertStore.NewMessage(sequence: 1, type: "follow_up", createdMs: 1_778_398_700_000, sms: "SOS: still",
                                                 body: #"{"alert_id":"left-open","sequence":1}"#, targets: [(.https, Self.alertsURL)])
            for delivery in try before.add(followUp, toAlert: "left-open") { try before.acknowledged(delivery.key, atMs: 1_778_398_701_000) }
        }
        let store = try AlertStore(path: path)
        let fake = Self.channels()
        let all = [fake.sms, fake.https, fake.hook]
        let h = try LaneHarness(settings: Self.settings(), store: store, channels: all)

        #expect(await h.status().openAlerts == ["left-open"])
        // Nothing acknowledged is sent again; the only news is the restart, to every target.
        #expect(await eventually { all.map(\.acknowledged.count) == [2, 1, 1] })
        for delivery in all.flatMap(\.attempts) {
            #expect(delivery.type == "follow_up")
            #expect(delivery.sequence == 2)
            #expect(delivery.sms.hasPrefix("SOS update, device restarted"), "\(delivery.sms)")
        }
        #expect(await h.cancel() == .success(1))
        #expect(await eventually { all.map(\.acknowledged.count) == [4, 2, 2] })
        for delivery in all.flatMap(\.attempts).filter({ $0.type != "follow_up" }) {
            #expect(delivery.alertUUID == "left-open")
            #expect(delivery.type == "cancelled")
            #expect(delivery.sequence == 3)
        }
        #expect(all.flatMap(\.attempts).count { $0.type == "cancelled" } == 4)
        // The commit thread records the state after the channels have the cancel.
        #expect(try await eventually { try store.recent(limit: 5).first?.state == "cancelled" })
        #expect(await h.status().openAlerts.isEmpty)
        #expect(await h.cancel() == .failure(LaneRefusal("no alert is open")))
        await h.shutdown()
    }

    /// A high alert open before the restart, the breach still going on: no second alert for the
    /// same breach; back in range for rearm_s, the all clear goes out for the old alert.
    @Test func anAdoptedBreachIsNotRaisedAgainAndResolves() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sos.db")
        do {
            let before = try AlertStore(path: path)
            let alert = AlertStore.NewAlert(uuid: "still-high", kind: "hr_high", test: false, firstOutOfRangeMs: nil, raisedMs: 1_778_398_640_000,
                                            heartRate: 190, latitude: nil, longitude: nil, runUUID: nil)
            let first = AlertStore.NewMessage(sequence: 0, type: "alert", createdMs: 1_778_398_640_000, sms: "SOS: HIGH",
                                              body: #"{"alert_id":"still-high","sequence":0}"#, targets: [(.hook, Self.hookPath)])
            for delivery in try before.record(alert, message: first) { try before.acknowledged(delivery.key, atMs: 1_778_398_641_000) }
        }
        let store = try AlertStore(path: path)
        let hook = FakeChannel(.hook)
        let h = try LaneHarness(settings: Self.settings(contacts: [], alertsURL: nil), store: store, channels: [hook])
        for _ in 0..<10 { h.sample(190) }
        #expect(await h.status().openAlerts == ["still-high"])
        #expect(h.timings.value.isEmpty, "the same breach is not raised twice")
        for _ in 0..<32 { h.sample(120) }
        #expect(await eventually(timeout: .seconds(10)) { hook.attempts.contains { $0.type == "resolved" && $0.alertUUID == "still-high" } })
        #expect(await h.status().openAlerts.isEmpty)
        await h.shutdown()
    }

    @Test func deliveriesOwedBeforeARestartGoOutAtStart() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sos.db")
        var owed: [Delivery] = []
        do {
            // What a pacerd that stopped (or crashed) left behind: the SMS and the hook unacknowledged.
            let before = try AlertStore(path: path)
            let message = AlertStore.NewMessage(sequence: 0, type: "alert", createdMs: 1_778_398_640_000, sms: "SOS: left over",
                                                body: #"{"alert_id":"left-over","sequence":0}"#,
                                                targets: [(.sms, "+393470000001"), (.https, Self.alertsURL), (.hook, Self.hookPath)])
            let alert = AlertStore.NewAlert(uuid: "left-over", kind: "hr_high", test: false, firstOutOfRangeMs: nil, raisedMs: 1_778_398_640_000,
                                            heartRate: 205, latitude: nil, longitude: nil, runUUID: nil)
            let deliveries = try before.record(alert, message: message)
            try before.acknowledged(deliveries[1].key, atMs: 1_778_398_641_000)
            try before.failed(deliveries[2].key, error: "exited 1", atMs: 1_778_398_641_000)
            owed = [deliveries[0], deliveries[2]]
        }
        let store = try AlertStore(path: path)
        let fake = Self.channels()
        let h = try LaneHarness(settings: Self.settings(), store: store, channels: [fake.sms, fake.https, fake.hook])

        #expect(try await eventually { try store.pending().isEmpty })
        // The alert is still open: after what was owed, "device restarted" goes to every target.
        let restarted = { (delivery: Delivery) in delivery.type == "follow_up" && delivery.sms.hasPrefix("SOS update, device restarted") }
        #expect(fake.sms.attempts.filter { !restarted($0) }.map(\.key) == [owed[0].key])
        #expect(fake.hook.attempts.filter { !restarted($0) }.map(\.key) == [owed[1].key])
        #expect(fake.https.attempts.filter { !restarted($0) }.isEmpty)
        #expect(fake.sms.attempts.first?.key == owed[0].key, "the owed alert before its follow-up")
        #expect([fake.sms, fake.https, fake.hook].map { $0.attempts.count(where: restarted) } == [2, 1, 1])
        #expect(fake.sms.attempts.first?.body == #"{"alert_id":"left-over","sequence":0}"#)
        #expect(fake.sms.attempts.first?.sms == "SOS: left over")
        #expect(fake.hook.attempts.first?.attempts == 1)
        #expect(h.logs.value.contains { $0.contains("2 SOS message(s) recorded before the restart") })
        // Nothing new was raised.
        #expect(h.timings.value.isEmpty)
        #expect(try store.recent(limit: 5).map(\.uuid) == ["left-over"])
        await h.shutdown()
    }

    @Test func withoutAStoreAnAlertStillGoesOut() async throws {
        let fake = Self.channels()
        let h = try LaneHarness(settings: Self.settings(), store: nil, channels: [fake.sms, fake.https, fake.hook])

        for bpm in [190, 195, 201] { h.sample(bpm) }
        let status = await h.status()
        let timing = try #require(h.timings.value.first)
        #expect(h.timings.value.count == 1)
        #expect(timing.recordedNs == nil)
        #expect(timing.firstDispatchNs != nil)
        #expect(status.openAlerts == [timing.alertUUID])
        #expect(status.recent.isEmpty)

        let all = [fake.sms, fake.https, fake.hook]
        #expect(await eventually { all.map(\.acknowledged.count) == [2, 1, 1] })
        for delivery in all.flatMap(\.attempts) {
            #expect(delivery.alertUUID == timing.alertUUID)
            #expect(delivery.key.messageID < 0)  // never written
            #expect(try json(delivery.body)["kind"] as? String == "hr_high")
        }
        #expect(Set(all.flatMap(\.attempts).map(\.key)).count == 4)
        #expect(h.logs.value.contains { $0.contains("could not be recorded") && $0.contains("sending it anyway") })
        await h.shutdown()
    }

    @Test func withoutAStoreACancelStillGoesOut() async throws {
        let hook = FakeChannel(.hook)
        let h = try LaneHarness(settings: Self.settings(contacts: [], alertsURL: nil), store: nil, channels: [hook])
        let uuid = try Self.uuid(await h.raise())
        #expect(await eventually { hook.acknowledged.count == 1 })
        #expect(await h.cancel() == .success(1))
        _ = await h.status()
        // The alert went out from memory; so does its "false alarm": whoever got the alert hears
        // it was cancelled, store or not.
        #expect(await eventually(timeout: .seconds(3)) { hook.attempts.contains { $0.type == "cancelled" && $0.alertUUID == uuid } })
        await h.shutdown()
    }

    @Test func withoutAStoreTwoTestsAreBothDelivered() async throws {
        // The first attempt fails; every message must still be retried until acknowledged.
        let hook = FakeChannel(.hook, failFirst: 1)
        let h = try LaneHarness(settings: Self.settings(contacts: [], alertsURL: nil, retryMaxSeconds: 1), store: nil, channels: [hook])
        let first = Shared<String?>(nil), second = Shared<String?>(nil)
        // Both requests are queued before the lane handles the first.
        h.lane.put(.test(reply: { result in first.update { $0 = try? result.get() } }))
        h.lane.put(.test(reply: { result in second.update { $0 = try? result.get() } }))
        _ = await h.status()
        let a = try #require(first.value), b = try #require(second.value)
        #expect(a != b)
        // From memory each message has delivery keys of its own: neither overwrites the other.
        // (A wait, as in aFailingChannelIsRetriedUntilAcknowledged, not a timing check: with
        // retries capped at 1 s it takes about a second; a 4 s bound failed on a loaded suite.)
        #expect(await eventually { Set(hook.acknowledged.map(\.alertUUID)) == [a, b] })
        await h.shutdown()
    }

    /// The alert's first attempt fails everywhere and the runner cancels at once: each target
    /// still gets the alert before the "FALSE ALARM" (retries used to run in dictionary order).
    @Test func aCancelNeverReachesATargetBeforeItsAlert() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let fake = Self.channels(failFirst: 2)
        let all = [fake.sms, fake.https, fake.hook]
        let h = try LaneHarness(settings: Self.settings(retryMaxSeconds: 1), store: store, channels: all)

        let uuid = try Self.uuid(await h.raise())
        #expect(await h.cancel() == .success(1))
        #expect(await eventually { all.map { $0.acknowledged.filter { $0.type == "cancelled" }.count } == [2, 1, 1] })
        for channel in all {
            for target in Set(channel.attempts.map(\.key.target)) {
                let attempts = channel.attempts.filter { $0.key.target == target }
                let acked = channel.acknowledged.filter { $0.key.target == target }
                #expect(acked.map(\.type) == ["alert", "cancelled"], "\(target): \(acked.map(\.type))")
                // No attempt of the cancel before the alert was acknowledged.
                let firstCancel = try #require(attempts.firstIndex { $0.type == "cancelled" })
                #expect(attempts[..<firstCancel].contains { $0.type == "alert" })
                #expect(attempts[firstCancel...].allSatisfy { $0.type == "cancelled" }, "\(target): \(attempts.map(\.type))")
                #expect(attempts.allSatisfy { $0.alertUUID == uuid })
            }
            // A retry sends the bytes recorded with the message, never new ones.
            for key in Set(channel.attempts.map(\.key)) {
                let tries = channel.attempts.filter { $0.key == key }
                #expect(Set(tries.map(\.sms)).count == 1 && Set(tries.map(\.body)).count == 1)
            }
        }
        #expect(try await eventually { try store.pending().isEmpty })
        await h.shutdown()
    }

    /// Follow-ups say how old their heart rate is: none for longer than a period, "no heart rate
    /// since" its time; a recent one with its time.
    @Test func followUpsSayHowOldTheirHeartRateIs() async throws {
        let hook = FakeChannel(.hook)
        var settings = Self.settings(contacts: [], alertsURL: nil)
        settings.rules.followUpEverySeconds = 3
        let h = try LaneHarness(settings: settings, store: nil, channels: [hook])
        // Strap notifications (flags: contact supported and detected; uint8 bpm) at receipt time:
        // the follow-ups' clock, unlike the harness's synthetic sample clock.
        func notify(_ bpm: UInt8) { h.lane.put(.heartRate(bytes: [0x06, bpm], receivedNs: MonotonicTime.nanoseconds())) }
        notify(150)
        // Older than a period by the first follow-up, whatever the ticks.
        try await Task.sleep(for: .milliseconds(500))
        _ = try Self.uuid(await h.raise())
        let followUps = { hook.attempts.filter { $0.type == "follow_up" }.map(\.sms) }
        #expect(await eventually { !followUps().isEmpty })
        let stale = try #require(followUps().first)
        #expect(stale.range(of: #"^SOS update: the runner asked for help, no heart rate since \d\d:\d\d UTC \((just now|\d+ s ago)\) at \d\d:\d\d UTC \(just now\)\."#,
                            options: .regularExpression) != nil, "\(stale)")
        notify(151)
        #expect(await eventually { followUps().contains { $0.contains("help, heart rate 151 bpm at ") } }, "\(followUps())")
        let fresh = try #require(followUps().first { $0.contains("151 bpm") })
        #expect(fresh.range(of: #"151 bpm at \d\d:\d\d UTC \((just now|\d+ s ago)\) at \d\d:\d\d UTC \(just now\)\."#, options: .regularExpression) != nil, "\(fresh)")
        #expect(GSM7.fitsOneMessage(stale) && GSM7.fitsOneMessage(fresh))
        await h.shutdown()
    }

    /// A channel call that never returns is given up at the lane's deadline and tried again.
    @Test func anAttemptThatNeverAnswersIsRetriedAfterItsDeadline() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let hook = FakeChannel(.hook, firstNeverAnswers: true)
        let h = try LaneHarness(settings: Self.settings(contacts: [], alertsURL: nil, retryMaxSeconds: 1, attemptTimeoutSeconds: 0.5),
                                store: store, channels: [hook])
        _ = try Self.uuid(await h.raise())
        // The deadline is the channel's 0.5 s plus the lane's grace (5 s); the wait is longer.
        #expect(await eventually(timeout: .seconds(20)) { hook.acknowledged.count == 1 })
        #expect(hook.attempts.count == 2)
        #expect(h.logs.value.contains { $0.contains("failed (attempt 1): no answer within") })
        // The store records the acknowledgement on the commit thread, after the channel has it.
        #expect(try await eventually { try store.recent(limit: 1).first?.deliveries.first?.acknowledgedMs != nil })
        let delivery = try #require(try store.recent(limit: 1).first?.deliveries.first)
        #expect(delivery.attempts == 2)
        #expect(delivery.acknowledgedMs != nil)
        await h.shutdown()
    }

    /// The server refusing alerts (a bad token: 401) is shown, and the alert is still retried.
    @Test func aServerThatRejectsAlertsIsShownAndStillRetried() async throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let https = FakeChannel(.https, failFirst: 3, rejectedStatus: 401)
        let h = try LaneHarness(settings: Self.settings(contacts: [], hook: [], retryMaxSeconds: 1), store: store, channels: [https])
        #expect(await h.status().serverProblem == nil)
        _ = try Self.uuid(await h.raise())
        #expect(await eventually { https.attempts.count >= 1 })
        #expect(await eventually { h.lane.health.serverProblem == "server rejects alerts: 401" })
        // Three refusals a second apart: the status read now still sees the first ones.
        #expect(await h.status().serverRejects == 401)
        // Retried all the same; once the server takes it, the problem is gone.
        #expect(await eventually { https.acknowledged.count == 1 })
        #expect(https.attempts.count == 4)
        #expect(await h.status().serverRejects == nil)
        #expect(h.lane.health.serverProblem == nil)
        await h.shutdown()
    }
}
