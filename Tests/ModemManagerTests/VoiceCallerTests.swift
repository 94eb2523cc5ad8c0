import Foundation
import ModemManager
import PacerTestSupport
import Synchronization
import Systemd
import Testing

/// The voice caller against the simulated ModemManager's Voice and Call interfaces.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct VoiceCallerTests {
    static let number = "+393331234567"

    static func caller(_ sim: ModemManagerSimulator) -> VoiceCaller {
        let address = sim.address
        return VoiceCaller(openBus: { () throws(BusError) in try BusConnection.connect(address: address) })
    }

    /// The states `onState` saw, in order.
    final class States: Sendable {
        private let seen = Mutex<[CallState]>([])
        func add(_ state: CallState) { seen.withLock { $0.append(state) } }
        var all: [CallState] { seen.withLock { $0 } }
    }

    @Test func aCallGoesThroughItsStatesAndIsHungUp() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(ringDelay: 0.2, answerDelay: 0.3)) }
        defer { sim.close() }
        let states = States()
        let call = try await Self.caller(sim).place(to: Self.number, timeout: .seconds(10)) { states.add($0) }
        #expect(call.modem == ModemManagerSimulator.modemPath(0))
        #expect(call.path == "/org/freedesktop/ModemManager1/Call/0")
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { states.all.last == .active }
        #expect(states.all == [.dialing, .ringingOut, .active])
        try await call.hangUp(timeout: .seconds(5))
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { try sim.calls().first?.endedBy == "client" }
        #expect(states.all == [.dialing, .ringingOut, .active, .terminated])
        let calls = try await offPool { try sim.calls() }
        #expect(calls.map(\.number) == [Self.number])
        #expect(calls.first?.states == ["unknown", "dialing", "ringing-out", "active", "terminated"])
        // Terminated: its object is deleted again, nothing left in ModemManager.
        try await waitOffPool(timeout: .seconds(5), every: .milliseconds(20)) {
            try sim.control("GetStats", "", [])["data"]?[0]?["calls"]?["data"]?.int == 0
        }
        // Hanging up what is over is no error.
        try await call.hangUp(timeout: .seconds(5))
    }

    @Test func theOtherEndHangingUpIsTerminated() async throws {
        let sim = try await offPool { try ModemManagerSimulator(.init(ringDelay: 0.1, answerDelay: nil)) }
        defer { sim.close() }
        try await offPool { try sim.setCallTiming(ringDelay: 0.1, answerDelay: nil, remoteHangupAfter: nil) }
        let states = States()
        _ = try await Self.caller(sim).place(to: "112", timeout: .seconds(10)) { states.add($0) }
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { states.all.last == .ringingOut }
        // Never answered, still ringing.
        try await Task.sleep(for: .seconds(1))
        #expect(states.all == [.dialing, .ringingOut])
        #expect(try await offPool { try sim.remoteHangup() } == 1)
        try await waitOffPool(timeout: .seconds(10), every: .milliseconds(20)) { states.all.last == .terminated }
        #expect(try await offPool { try sim.calls() }.first?.endedBy == "remote")
    }

    @Test func withoutAVoiceModemOrANetworkItFailsAndSaysWhy() async throws {
        let silent = try await offPool { try ModemManagerSimulator(.init(modems: [.init(voice: false)])) }
        defer { silent.close() }
        await #expect(throws: CallError.noVoiceModem) {
            _ = try await Self.caller(silent).place(to: Self.number, timeout: .seconds(5)) { _ in }
        }
        let searching = try await offPool { try ModemManagerSimulator(.init(modems: [.init(state: 7)])) }
        defer { searching.close() }
        do {
            _ = try await Self.caller(searching).place(to: Self.number, timeout: .seconds(5)) { _ in }
            Issue.record("a modem without a network started a call")
        } catch {
            guard case .startFailed(let name, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(name == "org.freedesktop.ModemManager1.Error.Core.Failed")
            #expect("\(error)".hasPrefix("the modem could not start the call"))
        }
    }
}
