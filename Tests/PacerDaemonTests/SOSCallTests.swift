import Foundation
import PacerTestSupport
import Testing

/// `[sos] call`: one voice call per alert through the simulated ModemManager's Voice interface,
/// after the texts; hung up on `pacerctl sos cancel`; never placed again after a restart.
extension SOSTests {
    static let callNumber = "+15550100112"

    /// The calls the simulated modem was asked to place (busctl, off the cooperative pool).
    static func calls(_ world: World) async throws -> [ModemManagerSimulator.PlacedCall] {
        try await offPool { try world.modem.calls() }
    }

    @Test func anAlertPlacesOneCallAfterTheTextsAndCancelHangsItUp() async throws {
        let world = try await offPool { try World(extraSOS: "call = \"\(Self.callNumber)\"") }
        defer { world.close() }
        try await world.start()

        // A test proves the channels; it never calls.
        let test = try await world.daemon.ctl("sos", "test", "--wait", "20")
        #expect(test.status == 0, "\(test.stdout)\n\(test.stderr)")
        #expect(try await Self.calls(world).isEmpty, "a test alert placed a call")

        #expect(try await world.daemon.ctl("sos", "raise").status == 0)
        try await waitOffPool(timeout: .seconds(20), every: .milliseconds(50)) {
            try world.modem.calls().first?.states.contains("active") == true
        }
        let stderr = world.daemon.stderr
        let firstText = try #require(stderr.range(of: "dispatched: sms"), "no SMS dispatch in the journal")
        let calling = try #require(stderr.range(of: "calling …112"), "the call is not in the journal: \(stderr)")
        #expect(firstText.lowerBound < calling.lowerBound, "the call was placed before the texts were started")
        for state in ["call dialing", "call ringing-out", "call active"] {
            #expect(stderr.contains(state), "the journal does not say \(state)")
        }
        #expect(!stderr.contains(Self.callNumber), "the whole number is in the journal")

        // Ringing on and answered: still exactly one call.
        try await Task.sleep(for: .seconds(2))
        var calls = try await Self.calls(world)
        #expect(calls.count == 1, "\(calls)")
        #expect(calls.first?.number == Self.callNumber)
        #expect(calls.first?.endedBy == "")
        #expect(try await world.sentTexts().count >= 2 + 2, "the texts (the test's and the alert's) went out as well")

        let cancel = try await world.daemon.ctl("sos", "cancel")
        #expect(cancel.status == 0, "\(cancel.stderr)")
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { try world.modem.calls().first?.endedBy == "client" }
        calls = try await Self.calls(world)
        #expect(calls.count == 1)
        #expect(calls.first?.states == ["unknown", "dialing", "ringing-out", "active", "terminated"])
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { world.daemon.stderr.contains("call terminated") }
        #expect(world.daemon.stderr.contains("hanging up the call (cancelled)"))
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// The other end hangs up; pacerd stops with the alert open and starts again: the alert's
    /// follow-ups go on, its call is not placed again.
    @Test func aRestartedDaemonNeverCallsAgain() async throws {
        let world = try await offPool { try World(modem: .init(sendDelay: 0.3, remoteHangupAfter: 1), extraSOS: "call = \"\(Self.callNumber)\"") }
        defer { world.close() }
        try await world.start()
        #expect(try await world.daemon.ctl("sos", "raise").status == 0)
        try await waitOffPool(timeout: .seconds(20), every: .milliseconds(50)) { try world.modem.calls().first?.endedBy == "remote" }
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { world.daemon.stderr.contains("call terminated") }
        #expect(await world.daemon.stop() == .exited(0))

        try await world.start()
        // The lane resumed the alert: "device restarted" went to both contacts.
        try await waitOffPool(timeout: .seconds(30), every: .milliseconds(50)) {
            try world.modem.sent().filter { $0.text.hasPrefix("SOS update, device restarted") }.count == 2
        }
        try await Task.sleep(for: .seconds(2))
        let calls = try await Self.calls(world)
        #expect(calls.count == 1, "a call was placed again after the restart: \(calls)")
        #expect(world.daemon.stderr.contains("its call was placed before the restart; it is not placed again"))
        #expect(!world.daemon.stderr.contains("calling …"))
        #expect(await world.daemon.stop() == .exited(0))
    }

    /// `pacerctl sos` and `pacerctl status` show the call: ringing while it rings, active once
    /// answered, ended once hung up.
    @Test func theCallsStateIsShownBySosStatusAndStatus() async throws {
        let world = try await offPool { try World(modem: .init(ringDelay: 0.2, answerDelay: 3), extraSOS: "call = \"\(Self.callNumber)\"") }
        defer { world.close() }
        try await world.start()
        let quiet = try await world.daemon.ctl("status")
        #expect(!quiet.stdout.contains("SOS call"), "\(quiet.stdout)")

        #expect(try await world.daemon.ctl("sos", "raise").status == 0)
        try await waitOffPool(timeout: .seconds(20), every: .milliseconds(50)) { try world.modem.calls().first?.states.last == "ringing-out" }
        try await waitOffPool(timeout: .seconds(5), every: .milliseconds(50)) { world.daemon.stderr.contains("call ringing-out") }
        let ringing = try await world.daemon.ctl("sos", "status")
        #expect(ringing.stdout.contains("call: ringing (alert "), "\(ringing.stdout)")
        #expect(try await world.daemon.ctl("status").stdout.contains("SOS call: ringing"))
        let json = try await world.daemon.ctl("sos", "status", "--json")
        #expect(json.stdout.contains(#""state":"ringing""#), "\(json.stdout)")
        #expect(json.stdout.contains(#""call_state":"ringing-out""#), "\(json.stdout)")

        try await waitOffPool(timeout: .seconds(20), every: .milliseconds(50)) { world.daemon.stderr.contains("call active") }
        #expect(try await world.daemon.ctl("sos", "status").stdout.contains("call: active (alert "))
        #expect(try await world.daemon.ctl("sos", "cancel").status == 0)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(50)) { world.daemon.stderr.contains("call terminated") }
        #expect(try await world.daemon.ctl("sos", "status").stdout.contains("call: ended (alert "))
        #expect(try await world.daemon.ctl("status").stdout.contains("SOS call: ended"))
        #expect(await world.daemon.stop() == .exited(0))
    }

    @Test func withoutACallNumberNoCallIsPlaced() async throws {
        let world = try await offPool { try World() }
        defer { world.close() }
        try await world.start()
        #expect(try await world.daemon.ctl("sos", "raise").status == 0)
        try await waitOffPool(timeout: .seconds(20), every: .milliseconds(50)) { try world.modem.sent().count == 2 }
        try await Task.sleep(for: .seconds(2))
        #expect(try await Self.calls(world).isEmpty)
        #expect(!world.daemon.stderr.contains("calling"))
        #expect(await world.daemon.stop() == .exited(0))
    }
}
