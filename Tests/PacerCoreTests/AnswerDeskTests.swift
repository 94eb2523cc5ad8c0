import PacerCore
import Testing

/// The device's side of monitors' answers (issue 22), on injected time: each answer heard once,
/// also across a restart (the desk rebuilt from the remembered id); said again every 2 minutes
/// while its alert is open, never after it closes; "where are you?" sends the position.
@Suite(.timeLimit(.minutes(10))) struct AnswerDeskTests {
    static let alert = "6f1c1a52-0000-4000-8000-00000000a1e7"
    static func s(_ seconds: Double) -> UInt64 { UInt64(seconds * 1e9) }

    static func answer(_ id: Int64, _ kind: MonitorAnswer.Kind = .onMyWay, from: String = "Anna", alert: String = alert) -> MonitorAnswer {
        MonitorAnswer(id: id, alertID: alert, from: from, kind: kind, time: Timestamp(milliseconds: 1_780_000_000_000 + id))
    }

    static func said(_ actions: [AnswerDeskAction]) -> [String] {
        actions.compactMap { if case .say(let text, _) = $0 { text } else { nil } }
    }

    @Test func saysEachAnswerOnceAndRemembersItFirst() {
        var desk = AnswerDesk(lastHeardID: 0)
        _ = desk.handle(.openAlerts([Self.alert]), nowNs: 0)
        let actions = desk.handle(.fetched([Self.answer(2, .text("Stay where you are")), Self.answer(1)]), nowNs: Self.s(1))
        #expect(actions == [
            .heard(Self.answer(1), lastHeardID: 1), .say("Anna is on the way", answerID: 1),
            .heard(Self.answer(2, .text("Stay where you are")), lastHeardID: 2), .say("Anna says: Stay where you are", answerID: 2),
        ])
        // Fetched again (a long-poll retried from an older cursor): nothing new.
        #expect(desk.handle(.fetched([Self.answer(1), Self.answer(2, .text("Stay where you are"))]), nowNs: Self.s(2)).isEmpty)
        #expect(desk.lastHeardID == 2)
    }

    @Test func aRestartFromTheRememberedIDSaysNothingAgain() {
        var before = AnswerDesk(lastHeardID: 0)
        let actions = before.handle(.fetched([Self.answer(7)]), nowNs: Self.s(1))
        let remembered = actions.compactMap { if case .heard(_, let id) = $0 { id } else { nil } }.last
        #expect(remembered == 7)
        var after = AnswerDesk(lastHeardID: remembered ?? 0)
        _ = after.handle(.openAlerts([Self.alert]), nowNs: 0)
        #expect(after.handle(.fetched([Self.answer(7)]), nowNs: Self.s(5)).isEmpty)
        #expect(Self.said(after.handle(.tick, nowNs: Self.s(500))).isEmpty)
        #expect(Self.said(after.handle(.fetched([Self.answer(7), Self.answer(8, from: "Carl")]), nowNs: Self.s(6))) == ["Carl is on the way"])
    }

    @Test func repeatsEveryTwoMinutesWhileTheAlertIsOpen() {
        var desk = AnswerDesk(lastHeardID: 0)
        _ = desk.handle(.openAlerts([Self.alert]), nowNs: 0)
        #expect(Self.said(desk.handle(.fetched([Self.answer(1)]), nowNs: Self.s(10))) == ["Anna is on the way"])
        #expect(desk.nextDueNs == Self.s(130))
        #expect(desk.handle(.tick, nowNs: Self.s(129.9)).isEmpty)
        #expect(Self.said(desk.handle(.tick, nowNs: Self.s(130))) == ["Anna is on the way"])
        #expect(desk.handle(.tick, nowNs: Self.s(131)).isEmpty)
        #expect(Self.said(desk.handle(.tick, nowNs: Self.s(250))) == ["Anna is on the way"])
        // A newer answer of the same monitor takes the old one's place; another monitor's has its own.
        _ = desk.handle(.fetched([Self.answer(2, .text("Two minutes away")), Self.answer(3, from: "Carl")]), nowNs: Self.s(260))
        #expect(Self.said(desk.handle(.tick, nowNs: Self.s(380))) == ["Anna says: Two minutes away", "Carl is on the way"])
    }

    @Test func noRepeatOnceTheAlertClosesOrForAnAlertNotOpen() {
        var desk = AnswerDesk(lastHeardID: 0)
        _ = desk.handle(.openAlerts([Self.alert]), nowNs: 0)
        _ = desk.handle(.fetched([Self.answer(1)]), nowNs: Self.s(1))
        // The runner cancels before the repeat.
        _ = desk.handle(.openAlerts([]), nowNs: Self.s(60))
        #expect(desk.nextDueNs == nil)
        #expect(desk.handle(.tick, nowNs: Self.s(121)).isEmpty)
        // An answer to an alert this device does not have open is said once, not repeated.
        #expect(Self.said(desk.handle(.fetched([Self.answer(2, alert: "other")]), nowNs: Self.s(130))) == ["Anna is on the way"])
        #expect(desk.nextDueNs == nil)
        // Reopened (another alert) does not bring back the closed one's answer.
        _ = desk.handle(.openAlerts(["new"]), nowNs: Self.s(140))
        #expect(desk.handle(.tick, nowNs: Self.s(400)).isEmpty)
    }

    @Test func whereAreYouSendsThePositionAndSaysNothing() {
        var desk = AnswerDesk(lastHeardID: 4)
        let outside = desk.handle(.fetched([Self.answer(5, .whereAreYou, alert: "")]), nowNs: Self.s(1))
        #expect(outside == [.heard(Self.answer(5, .whereAreYou, alert: ""), lastHeardID: 5), .sendPosition(answerID: 5, duringAlert: false)])
        _ = desk.handle(.openAlerts([Self.alert]), nowNs: Self.s(2))
        let during = desk.handle(.fetched([Self.answer(6, .whereAreYou)]), nowNs: Self.s(3))
        #expect(during.last == .sendPosition(answerID: 6, duringAlert: true))
        #expect(desk.nextDueNs == nil)
    }

    @Test func privacyZonesHideThePositionOnlyOutsideAnAlert() {
        let home = Coordinate(latitude: 45.4642, longitude: 9.19)
        let zones = [PrivacyZone(center: home, radiusMeters: 200)]
        let park = Coordinate(latitude: 45.4720, longitude: 9.2241)
        #expect(PositionAnswer.decide(position: home, zones: zones, duringAlert: false) == .privatePlace)
        #expect(PositionAnswer.decide(position: home, zones: zones, duringAlert: true) == .send)
        #expect(PositionAnswer.decide(position: park, zones: zones, duringAlert: false) == .send)
        #expect(PositionAnswer.decide(position: nil, zones: zones, duringAlert: true) == .noPosition)
    }
}
