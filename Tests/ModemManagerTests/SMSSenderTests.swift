import Foundation
import ModemManager
import PacerTestSupport
import Systemd
import Testing

/// The SMS sender against the simulated ModemManager on a private dbus-daemon. Serialized: some
/// tests measure how long a send takes.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct SMSSenderTests {
    static let number = "+393331234567"
    static let text = "SOS from Pacer: runner down at 45.50350, 9.17949 (10:42). Heart rate 0."

    /// GSM 03.38's basic character set (128 characters, in code order, ESC as a space) and 32
    /// more: exactly one 160-character GSM-7 part.
    static let gsm7Text: String = {
        let basic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ ÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
            + "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
        return basic + "SOS Pacer runner needs help now!"
    }()

    static func sender(_ sim: ModemManagerSimulator) -> SMSSender {
        let address = sim.address
        return SMSSender(openBus: { () throws(BusError) in try BusConnection.connect(address: address) })
    }

    static func start(_ scenario: ModemManagerSimulator.Scenario = .init()) async throws -> ModemManagerSimulator {
        try await offPool { try ModemManagerSimulator(scenario) }
    }

    @Test func aMessageIsSentAndTheSimulatorReceivesItExactly() async throws {
        let sim = try await Self.start()
        defer { sim.close() }
        let receipt = try await Self.sender(sim).send(text: Self.text, to: Self.number, timeout: .seconds(10))
        #expect(receipt.modem == ModemManagerSimulator.modemPath(0))
        #expect(receipt.message == "/org/freedesktop/ModemManager1/SMS/0")
        #expect(receipt.number == Self.number)
        #expect(receipt.reference == 1)
        let (sent, stats) = try await offPool { (try sim.sent(), try sim.stats()) }
        #expect(sent.map(\.number) == [Self.number])
        #expect(sent.map(\.text) == [Self.text])
        #expect(sent.first?.path == receipt.message)
        // Created, sent once, and deleted again: nothing left in ModemManager.
        #expect(stats.created == 1 && stats.sendCalls == 1 && stats.sent == 1 && stats.deleted == 1 && stats.messages == 0)
    }

    @Test func a160CharacterGSM7TextArrivesUnchanged() async throws {
        #expect(Self.gsm7Text.unicodeScalars.count == 160)
        let sim = try await Self.start()
        defer { sim.close() }
        _ = try await Self.sender(sim).send(text: Self.gsm7Text, to: "+447700900123", timeout: .seconds(10))
        let sent = try await offPool { try sim.sent() }
        #expect(sent.count == 1)
        #expect(sent.first?.number == "+447700900123")
        #expect(sent.first?.text == Self.gsm7Text)
        #expect(Array(sent.first?.text.unicodeScalars ?? "".unicodeScalars) == Array(Self.gsm7Text.unicodeScalars))
    }

    /// Send blocks until the modem has the network's answer: the receipt comes after the delay,
    /// and the message is not SENT before it.
    @Test func sendReturnsOnlyAfterTheModemAnswered() async throws {
        // Long enough that a loaded machine (the whole suite on two cores) still sees it in flight.
        let sim = try await Self.start(.init(sendDelay: 4))
        defer { sim.close() }
        let sender = Self.sender(sim)
        let started = ContinuousClock.now
        let sending = Task { try await sender.send(text: "delayed", to: Self.number, timeout: .seconds(10)) }
        // While the modem is at it, nothing has been sent. Watched for as long as the send may
        // take: on a loaded machine the send can reach the modem well after it was started.
        let inFlight = try await offPool { () -> (Bool, [ModemManagerSimulator.SentMessage]) in
            let deadline = ContinuousClock.now + .seconds(10)
            while try sim.stats().pending != 1 {
                let sent = try sim.sent()
                if !sent.isEmpty || ContinuousClock.now >= deadline { return (false, sent) }
                usleep(20_000)
            }
            return (true, try sim.sent())
        }
        #expect(inFlight.0, "the send never reached the modem")
        #expect(inFlight.1.isEmpty)
        let receipt = try await sending.value
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .seconds(4), "\(elapsed)")
        #expect(receipt.elapsed >= .seconds(4))
        #expect(elapsed < .seconds(10), "\(elapsed)")
        #expect(try await offPool { try sim.sent() }.map(\.text) == ["delayed"])
    }

    @Test func anInjectedNetworkErrorIsSendFailedAndNothingIsSent() async throws {
        let sim = try await Self.start(.init(sendDelay: 0.1))
        defer { sim.close() }
        try await offPool { try sim.failNextSends(count: 2, errorName: "org.freedesktop.ModemManager1.Error.Message.NetworkTimeout", message: "Network timeout") }
        let sender = Self.sender(sim)
        await #expect(throws: SMSError.sendFailed(name: "org.freedesktop.ModemManager1.Error.Message.NetworkTimeout", message: "Network timeout")) {
            try await sender.send(text: Self.text, to: Self.number, timeout: .seconds(10))
        }
        await #expect(throws: SMSError.sendFailed(name: "org.freedesktop.ModemManager1.Error.Message.NetworkTimeout", message: "Network timeout")) {
            try await sender.send(text: Self.text, to: Self.number, timeout: .seconds(10))
        }
        let (sent, stats) = try await offPool { (try sim.sent(), try sim.stats()) }
        #expect(sent.isEmpty)
        #expect(stats.failed == 2 && stats.deleted == 2 && stats.messages == 0)
        // The failures are used up: the next one goes out.
        _ = try await sender.send(text: "third time", to: Self.number, timeout: .seconds(10))
        #expect(try await offPool { try sim.sent() }.map(\.text) == ["third time"])
    }

    @Test func aCoreFailureReadsWellInTheJournal() async throws {
        let sim = try await Self.start(.init(sendDelay: 0.05))
        defer { sim.close() }
        try await offPool { try sim.failNextSends(count: 1, errorName: "org.freedesktop.ModemManager1.Error.Core.Failed", message: "CMS error 500") }
        do {
            _ = try await Self.sender(sim).send(text: Self.text, to: Self.number, timeout: .seconds(10))
            Issue.record("the send succeeded")
        } catch {
            #expect(error == .sendFailed(name: "org.freedesktop.ModemManager1.Error.Core.Failed", message: "CMS error 500"))
            #expect(error.description == "the modem could not send the message: org.freedesktop.ModemManager1.Error.Core.Failed: CMS error 500")
        }
        #expect(try await offPool { try sim.sent() }.isEmpty)
    }

    @Test func aSendThatNeverAnswersTimesOutWithinTheTimeout() async throws {
        let sim = try await Self.start()
        defer { sim.close() }
        try await offPool { try sim.setHang(true) }
        let started = ContinuousClock.now
        await #expect(throws: SMSError.timedOut(.milliseconds(1500))) {
            try await Self.sender(sim).send(text: Self.text, to: Self.number, timeout: .milliseconds(1500))
        }
        let elapsed = ContinuousClock.now - started
        // Returned at all (the modem never answers); how promptly is for a benchmark, not a unit
        // test on a loaded machine.
        #expect(elapsed >= .milliseconds(1400) && elapsed < .seconds(10), "\(elapsed)")
        let (sent, stats) = try await offPool { (try sim.sent(), try sim.stats()) }
        #expect(sent.isEmpty)
        #expect(stats.hung == 1)
        // The timed-out message is left alone: it may still go out.
        #expect(stats.deleted == 0 && stats.messages == 1)
        #expect(SMSError.timedOut(.milliseconds(1500)).description == "no answer from ModemManager within 1.5 seconds")
    }

    @Test func withoutModemManagerOnTheBusItSaysSo() async throws {
        let bus = try await offPool { try PrivateBus() }
        defer { bus.stop() }
        let address = bus.address
        let sender = SMSSender(openBus: { () throws(BusError) in try BusConnection.connect(address: address) })
        await #expect(throws: SMSError.modemManagerNotRunning) {
            try await sender.send(text: Self.text, to: Self.number, timeout: .seconds(5))
        }
        await #expect(throws: SMSError.modemManagerNotRunning) { try await sender.modems() }
        #expect(SMSError.modemManagerNotRunning.description == "ModemManager is not running (nobody owns org.freedesktop.ModemManager1)")
    }

    @Test func withoutAModemThatDoesSMSItIsNoModem() async throws {
        let empty = try await Self.start(.init(modems: []))
        defer { empty.close() }
        await #expect(throws: SMSError.noModem) {
            try await Self.sender(empty).send(text: Self.text, to: Self.number, timeout: .seconds(5))
        }
        #expect(try await Self.sender(empty).modems() == [])

        let dataOnly = try await Self.start(.init(modems: [.init(model: "EM7455", messaging: false)]))
        defer { dataOnly.close() }
        await #expect(throws: SMSError.noModem) {
            try await Self.sender(dataOnly).send(text: Self.text, to: Self.number, timeout: .seconds(5))
        }
        let modems = try await Self.sender(dataOnly).modems()
        #expect(modems.map(\.model) == ["EM7455"])
        #expect(modems.first?.canSendSMS == false)
    }

    @Test func aModemUnpluggedAndPluggedInAgainIsUsedUnderItsNewPath() async throws {
        let sim = try await Self.start(.init(sendDelay: 0.05))
        defer { sim.close() }
        let sender = Self.sender(sim)
        #expect(try await sender.send(text: "one", to: Self.number, timeout: .seconds(5)).modem == ModemManagerSimulator.modemPath(0))
        _ = try await offPool { try sim.removeModem() }
        await #expect(throws: SMSError.noModem) {
            try await sender.send(text: "two", to: Self.number, timeout: .seconds(5))
        }
        let added = try await offPool { try sim.addModem() }
        #expect(added == ModemManagerSimulator.modemPath(1))
        #expect(try await sender.send(text: "three", to: Self.number, timeout: .seconds(5)).modem == added)
        #expect(try await offPool { try sim.sent() }.map(\.text) == ["one", "three"])
    }

    @Test func aRestartedModemManagerIsUsedWithoutAnythingToReset() async throws {
        let sim = try await Self.start(.init(sendDelay: 0.05))
        defer { sim.close() }
        let sender = Self.sender(sim)
        _ = try await sender.send(text: "before", to: Self.number, timeout: .seconds(5))
        try await offPool { try sim.restart() }
        _ = try await sender.send(text: "after", to: Self.number, timeout: .seconds(5))
        #expect(try await offPool { try sim.sent() }.map(\.text) == ["after"])
    }

    @Test func aModemNotEnabledOrNotRegisteredFailsWithModemManagersReason() async throws {
        let sim = try await Self.start(.init(modems: [.init(state: 3)], sendDelay: 0.05))
        defer { sim.close() }
        let sender = Self.sender(sim)
        await #expect(throws: SMSError.createFailed(name: "org.freedesktop.ModemManager1.Error.Core.WrongState", message: "Cannot create SMS: device not yet enabled")) {
            try await sender.send(text: Self.text, to: Self.number, timeout: .seconds(5))
        }
        // Enabled but searching for a network: the modem refuses the message.
        try await offPool { try sim.setModemState(7) }
        await #expect(throws: SMSError.sendFailed(name: "org.freedesktop.ModemManager1.Error.Message.NoNetwork", message: "No network")) {
            try await sender.send(text: Self.text, to: Self.number, timeout: .seconds(5))
        }
        try await offPool { try sim.setModemState(8) }
        _ = try await sender.send(text: Self.text, to: Self.number, timeout: .seconds(5))
    }

    /// A registered modem is preferred over one that is not, whatever their order.
    @Test func theRegisteredModemIsChosen() async throws {
        let sim = try await Self.start(.init(modems: [.init(model: "searching", state: 7), .init(model: "registered")], sendDelay: 0.05))
        defer { sim.close() }
        let receipt = try await Self.sender(sim).send(text: Self.text, to: Self.number, timeout: .seconds(5))
        #expect(receipt.modem == ModemManagerSimulator.modemPath(1))
    }

    /// ModemManager 1.20 itself never shows SENDING: the sender must not depend on it.
    @Test func itWorksWhenStateStaysUnknownUntilSent() async throws {
        let sim = try await Self.start(.init(sendDelay: 0.2, sendingState: false))
        defer { sim.close() }
        _ = try await Self.sender(sim).send(text: Self.text, to: Self.number, timeout: .seconds(5))
        #expect(try await offPool { try sim.sent() }.count == 1)
    }

    @Test func modemsDescribeEachModemForAStatusCommand() async throws {
        let sim = try await Self.start(.init(modems: [.init(ownNumber: "+15555550199", signal: 61), .init(model: "EG25-G", state: 3, messaging: false)]))
        defer { sim.close() }
        let modems = try await Self.sender(sim).modems()
        #expect(modems.map(\.path) == [ModemManagerSimulator.modemPath(0), ModemManagerSimulator.modemPath(1)])
        let first = try #require(modems.first)
        #expect(first.manufacturer == "Quectel" && first.model == "EC25" && first.revision == "EC25EFAR06A08M4G")
        #expect(first.equipmentIdentifier == "867698041234567")
        #expect(first.state == .registered)
        #expect(first.signalQuality == 61 && first.signalRecent)
        #expect(first.accessTechnologyNames == ["lte"])
        #expect(first.ownNumbers == ["+15555550199"])
        #expect(first.canSendSMS)
        #expect(first.description == "Quectel EC25 (/org/freedesktop/ModemManager1/Modem/0): registered, lte, signal 61%")
        #expect(modems[1].state == .disabled)
        #expect(modems[1].accessTechnologies == 0)
        #expect(modems[1].description == "Quectel EG25-G (/org/freedesktop/ModemManager1/Modem/1): disabled, signal 74%, no SMS")

        try await offPool { try sim.setSignalQuality(12) }
        #expect(try await Self.sender(sim).modems().first?.signalQuality == 12)
    }

    @Test func aClosedOrUnreachableBusIsReported() async throws {
        let sim = try await Self.start()
        defer { sim.close() }
        let bus = try BusConnection.connect(address: sim.address)
        let shared = SMSSender(bus: bus)
        #expect(try await shared.modems().count == 1)
        bus.close()
        await #expect(throws: SMSError.busClosed) {
            try await shared.send(text: Self.text, to: Self.number, timeout: .seconds(5))
        }

        let nowhere = SMSSender(openBus: { () throws(BusError) in try BusConnection.connect(address: "unix:path=/nonexistent/pacer-bus") })
        do {
            _ = try await nowhere.send(text: Self.text, to: Self.number, timeout: .seconds(5))
            Issue.record("sent through no bus")
        } catch {
            guard case .busUnavailable(let why) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(!why.isEmpty)
        }
    }
}
