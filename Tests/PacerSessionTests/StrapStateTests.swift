import PacerCore
import Testing
@testable import PacerSession

@Suite(.timeLimit(.minutes(10))) struct StrapStateTests {
    static let address = "A0:9E:1A:00:00:01"
    static let worn: [UInt8] = [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02]  // 72 bpm, contact
    static let malformed: [UInt8] = [0x17, 0x01, 0x01]
    static let second: UInt64 = 1_000_000_000

    static func paired() -> StrapState {
        var strap = StrapState()
        _ = strap.select(StrapSelection(straps: [address], source: .paired, adapter: nil))
        return strap
    }

    static func connected() -> StrapState {
        var strap = paired()
        _ = strap.handle(.connected(address: address, name: "Polar H10"), runID: nil, lowBatteryPercent: 20)
        return strap
    }

    @Test func notPairedUntilAStrapIsChosen() {
        var strap = StrapState()
        #expect(strap.status(nowNs: 0).link == .notPaired)
        #expect(strap.status(nowNs: 0).text == "HR strap not paired")
        let none = strap.select(StrapSelection(straps: [], source: .none, adapter: "hci0"))
        #expect(none?.level == .notice && none?.message.contains("no heart-rate strap paired") == true)
        #expect(strap.status(nowNs: 0).link == .notPaired)
        // The same choice again says nothing.
        #expect(strap.select(StrapSelection(straps: [], source: .none, adapter: "hci0")) == nil)
    }

    @Test func choosingStrapsSearchesAndNamesWhereTheChoiceCameFrom() {
        var strap = StrapState()
        let configured = strap.select(StrapSelection(straps: [Self.address, "A0:9E:1A:00:00:02"], source: .config, adapter: nil))
        #expect(configured?.message == "looking for the heart-rate strap A0:9E:1A:00:00:01, then A0:9E:1A:00:00:02 ([hr] in the config)")
        #expect(strap.status(nowNs: 0).link == .searching && strap.status(nowNs: 0).address == Self.address)
        let paired = strap.select(StrapSelection(straps: [Self.address], source: .paired, adapter: nil))
        #expect(paired?.message == "looking for the heart-rate strap A0:9E:1A:00:00:01 (paired with pacerctl)")
    }

    @Test func aProblemRetriedEverySecondIsSaidOnce() {
        var strap = Self.paired()
        let first = strap.handle(.searching(address: Self.address), runID: 7, lowBatteryPercent: 20)
        #expect(first == SessionNote(.info, "hr", "heart-rate strap \(Self.address) is not in range; discovering", runID: 7))
        for _ in 0..<5 { #expect(strap.handle(.searching(address: Self.address), runID: 7, lowBatteryPercent: 20) == nil) }
        let failed = strap.handle(.connectFailed(address: Self.address, reason: "le-connection-abort-by-local"), runID: nil, lowBatteryPercent: 20)
        #expect(failed?.message == "cannot connect to the heart-rate strap \(Self.address): le-connection-abort-by-local; retrying")
        #expect(strap.handle(.connectFailed(address: Self.address, reason: "le-connection-abort-by-local"), runID: nil, lowBatteryPercent: 20) == nil)
        #expect(strap.status(nowNs: 0).problem == "le-connection-abort-by-local")
        let down = strap.handle(.unavailable(reason: "no adapter"), runID: nil, lowBatteryPercent: 20)
        #expect(down?.level == .warning && down?.message == "heart rate unavailable: no adapter; retrying")
        #expect(strap.handle(.unavailable(reason: "no adapter"), runID: nil, lowBatteryPercent: 20) == nil)
        #expect(strap.status(nowNs: 0).link == .bluetoothUnavailable && strap.status(nowNs: 0).text == "HR: Bluetooth unavailable")
    }

    @Test func flappingStrapIsLostUntilItConnectsAgain() {
        var strap = Self.connected()
        #expect(strap.status(nowNs: 0).link == .connected && strap.status(nowNs: 0).problem == nil)
        _ = strap.notification(Self.worn, receivedNs: 10 * Self.second, runID: nil)
        #expect(strap.status(nowNs: 11 * Self.second).text == "HR 72")
        for round in 1...3 {
            let lost = strap.handle(.disconnected(address: Self.address, reason: "timeout"), runID: 3, lowBatteryPercent: 20)
            #expect(lost == SessionNote(.warning, "hr", "heart-rate strap \(Self.address) disconnected (timeout); reconnecting", runID: 3))
            // Searching while lost stays "lost": the status says it is reconnecting, not that it was never found.
            _ = strap.handle(.searching(address: Self.address), runID: 3, lowBatteryPercent: 20)
            _ = strap.handle(.connectFailed(address: Self.address, reason: "busy"), runID: 3, lowBatteryPercent: 20)
            #expect(strap.status(nowNs: 12 * Self.second).link == .lost, "round \(round)")
            #expect(strap.status(nowNs: 12 * Self.second).text == "HR strap lost, reconnecting")
            #expect(strap.status(nowNs: 12 * Self.second).problem == "busy")
            // The last bpm is kept across the loss, with its age.
            #expect(strap.lastBpm == 72 && strap.status(nowNs: 12 * Self.second).lastBpmAge == 2)
            let back = strap.handle(.connected(address: Self.address, name: "Polar H10"), runID: 3, lowBatteryPercent: 20)
            #expect(back?.message == "heart-rate strap Polar H10 (\(Self.address)) connected again")
            #expect(strap.status(nowNs: 12 * Self.second).link == .connected)
        }
        // Bluetooth going away while connected disconnects the sensor.
        _ = strap.handle(.unavailable(reason: "bluetoothd gone"), runID: nil, lowBatteryPercent: 20)
        #expect(strap.status(nowNs: 12 * Self.second).reading == .disconnected)
    }

    @Test func lowBatteryIsReportedOncePerConnection() {
        var strap = Self.connected()
        #expect(strap.handle(.battery(address: Self.address, percent: 50), runID: nil, lowBatteryPercent: 20) == nil)
        #expect(strap.status(nowNs: 0).batteryPercent == 50)
        let low = strap.handle(.battery(address: Self.address, percent: 20), runID: 4, lowBatteryPercent: 20)
        #expect(low == SessionNote(.warning, "hr", "heart-rate strap \(Self.address) battery low: 20 %", runID: 4))
        #expect(strap.handle(.battery(address: Self.address, percent: 19), runID: 4, lowBatteryPercent: 20) == nil)
        _ = strap.handle(.disconnected(address: Self.address, reason: "timeout"), runID: nil, lowBatteryPercent: 20)
        _ = strap.handle(.connected(address: Self.address, name: "Polar H10"), runID: nil, lowBatteryPercent: 20)
        #expect(strap.handle(.battery(address: Self.address, percent: 18), runID: nil, lowBatteryPercent: 20) != nil)
    }

    @Test func malformedPacketsAreCountedAndSaidFirstThenEveryHundredth() {
        var strap = Self.connected()
        var said: [Int] = []
        for n in 1...250 {
            let (result, note) = strap.notification(Self.malformed, receivedNs: UInt64(n) * Self.second, runID: nil)
            guard case .failure = result else { Issue.record("packet \(n) decoded"); return }
            if let note {
                said.append(n)
                #expect(note.message.hasSuffix("ignored (\(n) so far): 170101"))
            }
        }
        #expect(said == [1, 100, 200])
        #expect(strap.status(nowNs: 0).malformedPackets == 250)
        // Malformed packets leave no bpm behind.
        #expect(strap.lastBpm == nil && strap.status(nowNs: 0).lastBpmAge == nil)
    }

    @Test func aNewChoiceForgetsTheOldStrap() {
        var strap = Self.connected()
        _ = strap.notification(Self.worn, receivedNs: Self.second, runID: nil)
        #expect(strap.lastBpm == 72)
        _ = strap.select(StrapSelection(straps: ["A0:9E:1A:00:00:09"], source: .config, adapter: nil))
        #expect(strap.lastBpm == nil)
        #expect(strap.status(nowNs: Self.second).link == .searching)
        #expect(strap.status(nowNs: Self.second).reading == .disconnected)
    }

    @Test func monotonicTimeIsMilliseconds() {
        #expect(StrapState.monotonicTime(1_234_567_890) == Timestamp(milliseconds: 1234))
    }
}
