import Foundation
import SQLite
import ModemManager
import PacerTestSupport
import Testing
@testable import SOS

@Suite(.timeLimit(.minutes(10))) struct AlertStoreTests {
    static let contacts = ["+393470000001", "+393470000002"]
    static let url = "https://pacer.example.org/v1/alerts"

    static func alert(_ uuid: String, kind: String = "hr_high", raisedMs: Int64 = 1_778_398_640_000) -> AlertStore.NewAlert {
        AlertStore.NewAlert(uuid: uuid, kind: kind, test: false, firstOutOfRangeMs: raisedMs - 2000, raisedMs: raisedMs, heartRate: 203,
                            latitude: 45.4775, longitude: 9.2241, runUUID: "run-1")
    }

    static func message(_ sequence: Int = 0, type: String = "alert", targets: [(channel: AlertChannelName, target: String)]? = nil) -> AlertStore.NewMessage {
        AlertStore.NewMessage(sequence: sequence, type: type, createdMs: 1_778_398_640_000 + Int64(sequence) * 60_000,
                              sms: "SMS \(type) \(sequence)", body: #"{"type":"\#(type)","sequence":\#(sequence)}"#,
                              targets: targets ?? contacts.map { (.sms, $0) } + [(.https, url), (.hook, "/usr/local/bin/notify")])
    }

    @Test func recordWritesTheAlertItsMessageAndOneDeliveryPerTarget() throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let deliveries = try store.record(Self.alert("a-1"), message: Self.message())

        #expect(deliveries.map(\.key.channel) == [.sms, .sms, .https, .hook])
        #expect(deliveries.map(\.key.target) == Self.contacts + [Self.url, "/usr/local/bin/notify"])
        #expect(Set(deliveries.map(\.key.messageID)).count == 1)
        #expect(deliveries[0].key.messageID > 0)
        for delivery in deliveries {
            #expect(delivery.alertUUID == "a-1")
            #expect(delivery.kind == "hr_high")
            #expect(delivery.test == false)
            #expect(delivery.sequence == 0)
            #expect(delivery.type == "alert")
            #expect(delivery.sms == "SMS alert 0")
            #expect(delivery.body == #"{"type":"alert","sequence":0}"#)
            #expect(delivery.attempts == 0)
            #expect(delivery.lastError == nil)
            #expect(delivery.acknowledgedMs == nil)
        }
        // What record returned is what is on disk.
        #expect(Set(try store.pending()) == Set(deliveries))
        let records = try store.recent(limit: 10)
        #expect(records.count == 1)
        let record = try #require(records.first)
        #expect(record.uuid == "a-1")
        #expect(record.state == "open")
        #expect(record.raisedMs == 1_778_398_640_000)
        #expect(record.firstOutOfRangeMs == 1_778_398_638_000)
        #expect(record.heartRate == 203)
        #expect(record.latitude == 45.4775)
        #expect(record.longitude == 9.2241)
        #expect(Set(record.deliveries) == Set(deliveries))
    }

    /// The alert's call is recorded once: a second attempt to record it (a second call) is
    /// refused, also after a reopen, and the open alert says its call was placed.
    @Test func theCallIsRecordedOnceAndSurvivesAReopen() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sos.db")
        do {
            let store = try AlertStore(path: path)
            _ = try store.record(Self.alert("a-1"), message: Self.message())
            _ = try store.record(Self.alert("a-2"), message: Self.message())
            #expect(try store.openAlerts().map(\.callPlacedMs) == [nil, nil])
            #expect(try store.callPlaced(alert: "a-1", atMs: 1_778_398_641_000))
            #expect(try !store.callPlaced(alert: "a-1", atMs: 1_778_398_642_000))
            try store.setCallState("active", alert: "a-1")
        }
        let store = try AlertStore(path: path)
        #expect(try !store.callPlaced(alert: "a-1", atMs: 1_778_398_650_000))
        #expect(try store.openAlerts().map(\.callPlacedMs) == [1_778_398_641_000, nil])
        let record = try #require(try store.recent(limit: 10).first { $0.uuid == "a-1" })
        #expect(record.callPlacedMs == 1_778_398_641_000)
        #expect(record.callState == "active")
    }

    /// A follow-up replaced by a newer one is owed no more, also after a restart, and its bytes
    /// stay as they were recorded.
    @Test func aReplacedFollowUpIsNoLongerPendingAfterAReopen() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sos.db")
        let targets: [(channel: AlertChannelName, target: String)] = [(.sms, Self.contacts[0])]
        do {
            let store = try AlertStore(path: path)
            _ = try store.record(Self.alert("a-1"), message: Self.message(targets: targets))
            let old = try store.add(Self.message(1, type: "follow_up", targets: targets), toAlert: "a-1")
            _ = try store.add(Self.message(2, type: "follow_up", targets: targets), toAlert: "a-1")
            try store.replaced(try #require(old.first).key, atMs: 1_778_398_700_000)
        }
        let store = try AlertStore(path: path)
        #expect(try store.pending().map(\.sequence) == [0, 2])
        let deliveries = try #require(try store.recent(limit: 1).first?.deliveries)
        #expect(deliveries.map(\.sequence) == [0, 1, 2])
        #expect(deliveries.map(\.replacedMs) == [nil, 1_778_398_700_000, nil])
        #expect(deliveries.map(\.sms) == ["SMS alert 0", "SMS follow_up 1", "SMS follow_up 2"])
        #expect(deliveries[1].acknowledgedMs == nil)
    }

    @Test func aFailedRecordLeavesNothingBehind() throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        // The same (channel, target) twice: the second delivery row violates the primary key after
        // the alert and the message rows were inserted. One transaction: none of them stays.
        let twice = AlertStore.NewMessage(sequence: 0, type: "alert", createdMs: 1, sms: "s", body: "{}",
                                          targets: [(.sms, "+393470000001"), (.sms, "+393470000001")])
        #expect(throws: AlertStoreError.self) { try store.record(Self.alert("half"), message: twice) }
        #expect(try store.recent(limit: 10).isEmpty)
        #expect(try store.pending().isEmpty)
        // The UUID was not taken by a half-written alert: recording it properly works.
        #expect(try store.record(Self.alert("half"), message: Self.message()).count == 4)
        // The same UUID again is refused, and adds no deliveries.
        #expect(throws: AlertStoreError.self) { try store.record(Self.alert("half"), message: Self.message()) }
        #expect(try store.pending().count == 4)
        #expect(try store.recent(limit: 10).count == 1)
    }

    @Test func pendingListsExactlyWhatIsNotAcknowledged() throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let deliveries = try store.record(Self.alert("a-1"), message: Self.message())
        let sms1 = deliveries[0], https = deliveries[2]

        try store.acknowledged(sms1.key, atMs: 1_778_398_641_000)
        #expect(Set(try store.pending().map(\.key)) == Set(deliveries.map(\.key)).subtracting([sms1.key]))

        try store.failed(https.key, error: "HTTP 503", atMs: 1_778_398_642_000)
        try store.failed(https.key, error: "HTTP 502", atMs: 1_778_398_644_000)
        let pending = try store.pending()
        #expect(pending.count == 3)
        let failed = try #require(pending.first { $0.key == https.key })
        #expect(failed.attempts == 2)
        #expect(failed.lastError == "HTTP 502")
        #expect(failed.acknowledgedMs == nil)
        // The others are untouched.
        #expect(pending.filter { $0.key != https.key }.allSatisfy { $0.attempts == 0 && $0.lastError == nil })

        // An acknowledgement after failures counts the attempt and clears the error.
        try store.acknowledged(https.key, atMs: 1_778_398_650_000)
        // Ordered by message, then channel name: the hook before the SMS.
        #expect(try store.pending().map(\.key) == [deliveries[3].key, deliveries[1].key])
        let stored = try #require(try store.recent(limit: 1).first?.deliveries.first { $0.key == https.key })
        #expect(stored.attempts == 3)
        #expect(stored.lastError == nil)
        #expect(stored.acknowledgedMs == 1_778_398_650_000)
        let first = try #require(try store.recent(limit: 1).first?.deliveries.first { $0.key == sms1.key })
        #expect(first.attempts == 1)
        #expect(first.acknowledgedMs == 1_778_398_641_000)
    }

    @Test func aFollowUpIsAppendedWithItsStateChange() throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        let first = try store.record(Self.alert("a-1"), message: Self.message())
        for delivery in first { try store.acknowledged(delivery.key, atMs: 1) }

        let followUp = try store.add(Self.message(1, type: "follow_up"), toAlert: "a-1")
        #expect(try store.recent(limit: 1).first?.state == "open")
        let cancel = try store.add(Self.message(2, type: "cancelled", targets: [(.sms, "+393470000001")]), toAlert: "a-1", state: "cancelled")

        #expect(followUp.count == 4)
        #expect(Set(followUp.map(\.key.messageID)).count == 1)
        #expect(followUp[0].key.messageID != first[0].key.messageID)
        #expect(followUp.allSatisfy { $0.alertUUID == "a-1" && $0.kind == "hr_high" && $0.sequence == 1 && $0.type == "follow_up" })
        #expect(cancel.count == 1)
        #expect(cancel[0].type == "cancelled")
        #expect(cancel[0].sequence == 2)
        #expect(cancel[0].sms == "SMS cancelled 2")

        let record = try #require(try store.recent(limit: 1).first)
        #expect(record.state == "cancelled")
        #expect(record.deliveries.count == 4 + 4 + 1)
        // Pending: the follow-up's four, then the cancel; oldest message first.
        #expect(try store.pending().map(\.sequence) == [1, 1, 1, 1, 2])

        // A message for an alert that does not exist, or a sequence used twice, is refused.
        #expect(throws: AlertStoreError("no alert nope")) { try store.add(Self.message(1), toAlert: "nope") }
        #expect(throws: AlertStoreError.self) { try store.add(Self.message(1, type: "follow_up"), toAlert: "a-1") }
        #expect(try store.pending().count == 5)
    }

    @Test func recentIsNewestFirstWithItsDeliveries() throws {
        let dir = try TemporaryDirectory()
        let store = try AlertStore(path: dir.file("sos.db"))
        for (i, uuid) in ["old", "middle", "new"].enumerated() {
            _ = try store.record(Self.alert(uuid, kind: i == 1 ? "manual" : "hr_high", raisedMs: 1_000 + Int64(i)),
                                 message: Self.message(targets: Array([(AlertChannelName.sms, "+393470000001"), (.hook, "/h")].prefix(i + 1))))
        }
        let all = try store.recent(limit: 10)
        #expect(all.map(\.uuid) == ["new", "middle", "old"])
        #expect(all.map(\.deliveries.count) == [2, 2, 1])
        #expect(all.map(\.kind) == ["hr_high", "manual", "hr_high"])
        #expect(all.allSatisfy { record in record.deliveries.allSatisfy { $0.alertUUID == record.uuid } })
        #expect(try store.recent(limit: 2).map(\.uuid) == ["new", "middle"])
    }

    @Test func everythingSurvivesClosingAndReopening() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sos.db")
        var keys: [Delivery.Key] = []
        do {
            let store = try AlertStore(path: path)
            let deliveries = try store.record(Self.alert("kept"), message: Self.message())
            try store.acknowledged(deliveries[0].key, atMs: 5)
            try store.failed(deliveries[1].key, error: "modem gone", atMs: 6)
            keys = deliveries.map(\.key)
        }
        // A new store on the same file (a restart): the migration is not run twice and the data is there.
        let reopened = try AlertStore(path: path)
        let pending = try reopened.pending()
        #expect(pending.map(\.key) == [keys[3], keys[2], keys[1]])  // hook, https, sms
        #expect(pending.first { $0.key == keys[1] }?.lastError == "modem gone")
        #expect(pending.first { $0.key == keys[1] }?.attempts == 1)
        #expect(try reopened.recent(limit: 5).map(\.uuid) == ["kept"])
        // It still takes writes, with new ids.
        let more = try reopened.add(Self.message(1, type: "resolved"), toAlert: "kept", state: "resolved")
        #expect(more[0].key.messageID > keys[0].messageID)
        #expect(try reopened.recent(limit: 1).first?.state == "resolved")
    }

    @Test func aReadOnlyStoreReadsButRefusesWrites() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sos.db")
        let deliveries: [Delivery]
        do {
            let writer = try AlertStore(path: path)
            deliveries = try writer.record(Self.alert("a-1"), message: Self.message())
        }
        // `pacerctl sos status` opens it read-only, with pacerd's writer closed or not.
        let reader = try AlertStore(path: path, readOnly: true)
        #expect(Set(try reader.pending()) == Set(deliveries))
        #expect(try reader.recent(limit: 1).first?.uuid == "a-1")

        do {
            _ = try reader.record(Self.alert("a-2"), message: Self.message())
            Issue.record("a read-only store recorded an alert")
        } catch {
            #expect(error.message.contains("recording alert a-2"))
            #expect(error.description.hasPrefix("SOS store: "))
        }
        #expect(throws: AlertStoreError.self) { try reader.acknowledged(deliveries[0].key, atMs: 1) }
        #expect(throws: AlertStoreError.self) { try reader.failed(deliveries[0].key, error: "x", atMs: 1) }
        #expect(throws: AlertStoreError.self) { try reader.add(Self.message(1), toAlert: "a-1") }
        #expect(throws: AlertStoreError.self) { try reader.setState("closed", alert: "a-1") }
        // Nothing changed.
        #expect(Set(try reader.pending()) == Set(deliveries))
        #expect(try AlertStore(path: path).recent(limit: 5).map(\.state) == ["open"])
    }

    @Test func aPathInAMissingDirectoryIsAClearError() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("no-such-dir/sos.db")
        do {
            _ = try AlertStore(path: path)
            Issue.record("opened \(path)")
        } catch {
            #expect(error.message.hasPrefix("opening \(path): "))
            #expect(error.description.contains("SOS store: opening \(path)"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("no-such-dir")))
        // Read-only, a file that does not exist is an error too, not an empty store.
        #expect(throws: AlertStoreError.self) { try AlertStore(path: dir.file("absent.db"), readOnly: true) }
    }

    /// A sos.db written by the previous pacerd (schema v3): opening it adds the status report's
    /// columns and keeps every alert, message and delivery as it was.
    @Test func aVersion3FileIsMigratedWithEveryRowKept() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("sos.db")
        do {
            let queue = try DatabaseQueue(path: path)
            try AlertSchema.migrator.migrate(queue, upTo: "v3 voice call")
            try queue.write { db in
                try db.execute(sql: """
                    INSERT INTO alert (id, uuid, kind, test, state, raised_ms, heart_rate, call_placed_ms, call_state)
                    VALUES (1, 'old-1', 'hr_high', 0, 'open', 1778398640000, 203, 1778398641000, 'terminated');
                    INSERT INTO message (id, alert_id, sequence, type, created_ms, sms, body) VALUES (1, 1, 0, 'alert', 1778398640000, 'SOS old', '{}');
                    INSERT INTO delivery (message_id, channel, target, attempts, acknowledged_ms) VALUES (1, 'sms', '+393470000001', 1, 1778398642000);
                    INSERT INTO delivery (message_id, channel, target, attempts, last_error) VALUES (1, 'sms', '+393470000002', 2, 'No network');
                    INSERT INTO delivery (message_id, channel, target, attempts, replaced_ms) VALUES (1, 'https', 'https://x/v1/alerts', 0, 1778398643000);
                    """)
            }
            let applied = try queue.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
            #expect(!applied.contains("v4 sms delivery reports"))
        }

        let store = try AlertStore(path: path)
        let alert = try #require(try store.recent(limit: 10).first)
        #expect(alert.uuid == "old-1" && alert.state == "open" && alert.heartRate == 203 && alert.callState == "terminated")
        #expect(alert.deliveries.map(\.key.target) == ["https://x/v1/alerts", "+393470000001", "+393470000002"])
        #expect(alert.deliveries.map(\.attempts) == [0, 1, 2])
        #expect(alert.deliveries.allSatisfy { $0.reportState == nil && $0.reportedMs == nil })
        #expect(alert.deliveries.map(DeliveryReportText.status) == ["replaced", "sent", "pending"])
        #expect(try store.pending().map(\.key.target) == ["+393470000002"], "still owed after the migration")

        // The new columns work on the old rows.
        let sent = alert.deliveries[1].key
        try store.reported(sent, state: SMSDeliveryState.completedReceived.rawValue, atMs: 1_778_398_650_000)
        let reported = try #require(try store.recent(limit: 10).first?.deliveries.first { $0.key == sent })
        #expect(reported.reportState == 0 && reported.reportedMs == 1_778_398_650_000)
        #expect(DeliveryReportText.status(reported) == "delivered")
        try store.reported(sent, state: 0x46, atMs: 1_778_398_660_000)
        let expired = try #require(try store.recent(limit: 10).first?.deliveries.first { $0.key == sent })
        #expect(DeliveryReportText.status(expired) == "not delivered: error-validity-period-expired")
        // A report changes nothing about what is owed.
        #expect(try store.pending().map(\.key.target) == ["+393470000002"])
    }

    @Test func aTemporaryErrorOrAnUnconfirmedForwardStaysSent() {
        var delivery = Delivery(key: .init(messageID: 1, channel: .sms, target: "+39"), alertUUID: "a", kind: "hr_high", test: false, sequence: 0,
                                type: "alert", sms: "", body: "", attempts: 1, lastError: nil, acknowledgedMs: 1)
        for state: UInt32 in [0x01, 0x02, 0x21, 0x100] {
            delivery.reportState = state
            #expect(DeliveryReportText.status(delivery) == "sent", "0x\(String(state, radix: 16))")
        }
        delivery.reportState = 0x62
        #expect(DeliveryReportText.status(delivery) == "not delivered: temporary-fatal-error-no-response-from-sme")
        delivery.key.channel = .https
        #expect(DeliveryReportText.status(delivery) == "acknowledged")
    }
}
