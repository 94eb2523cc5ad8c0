@testable import CloudSync
import HTTPClient
import PacerContract
import PacerCore
import Testing

/// The answers channel's wire side: what the cloud sends becomes what the desk hears, cleaned
/// again; a kind this pacerd does not know is skipped; the backoff while the cloud is away.
@Suite(.timeLimit(.minutes(10))) struct AnswerPollerTests {
    static func item(_ kind: String, text: String? = nil, from: String = "Anna") -> AlertAnswerItem {
        AlertAnswerItem(id: 3, alert_id: "a1", from: from, kind: kind, text: text, time: "2026-05-10T07:38:20.000Z")
    }

    @Test func wireAnswersBecomeDeskAnswers() {
        #expect(AnswerPoller.answer(Self.item("on_my_way")) == MonitorAnswer(id: 3, alertID: "a1", from: "Anna", kind: .onMyWay,
                                                                              time: Timestamp(iso8601: "2026-05-10T07:38:20.000Z")!))
        #expect(AnswerPoller.answer(Self.item("where_are_you"))?.kind == .whereAreYou)
        // Cleaned again here, whatever the cloud sent, and never longer than 100 characters.
        #expect(AnswerPoller.answer(Self.item("text", text: " <b>Stay</b>\u{7}  put "))?.kind == .text("Stay put"))
        #expect(AnswerPoller.answer(Self.item("text", text: String(repeating: "x", count: 300)))?.kind == .text(String(repeating: "x", count: 100)))
        #expect(AnswerPoller.answer(Self.item("text", text: "<i></i>")) == nil)
        #expect(AnswerPoller.answer(Self.item("call_me")) == nil)
        #expect(AnswerPoller.answer(Self.item("on_my_way", from: "<script>"))?.from == "Someone")
    }

    @Test func backsOffWhileTheCloudCannotBeAsked() {
        var poller = AnswerPoller(cursor: 0, log: { _, _ in })
        let unreachable = AnswerSettings(url: "http://127.0.0.1:1", token: "t", client: HTTPClient.Configuration(), waitSeconds: 1)
        #expect(poller.pauseNs(unreachable) == 1_000_000_000)
        var pauses: [UInt64] = []
        for _ in 0..<8 {
            #expect(poller.poll(unreachable) == nil)
            pauses.append(poller.pauseNs(unreachable) / 1_000_000_000)
        }
        #expect(pauses == [1, 2, 4, 8, 16, 32, 60, 60])
        #expect(poller.cursor == 0)
        // No cloud configured: nothing is asked, a look every 5 s.
        let none = AnswerSettings(url: nil, token: nil, client: HTTPClient.Configuration())
        #expect(poller.poll(none) == nil && poller.pauseNs(none) == 5_000_000_000)
    }
}
