import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct HeartRateSensorTests {
    static let t0 = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!
    static func at(_ seconds: Double) -> Timestamp { t0.adding(seconds: seconds) }

    static let worn: [UInt8] = [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02]  // 72 bpm, contact, RR 340 748
    static let noContact: [UInt8] = [0x04, 0x00]
    static let noContactWithNumber: [UInt8] = [0x04, 0x50]  // some straps keep sending a number
    static let unsupported: [UInt8] = [0x00, 0x55]  // 85 bpm, no contact detection
    static let unsupportedZero: [UInt8] = [0x00, 0x00]
    static let wornZero: [UInt8] = [0x06, 0x00]
    static let malformed: [UInt8] = [0x17, 0x01, 0x01]

    static func connected() -> HeartRateSensor {
        var sensor = HeartRateSensor()
        sensor.connected(name: "Polar H10 ABCD1234", address: "A0:9E:1A:00:00:01")
        return sensor
    }

    @Test func startsDisconnectedWithNothingCounted() {
        let sensor = HeartRateSensor()
        #expect(sensor.reading(at: Self.t0) == .disconnected)
        #expect(sensor.staleAfter == 5)
        #expect(!sensor.isConnected && sensor.name == nil && sensor.address == nil)
        #expect(sensor.notificationCount == 0 && sensor.malformedCount == 0 && sensor.batteryPercent == nil)
    }

    @Test func connectedWithoutNotificationsIsNoData() {
        let sensor = Self.connected()
        #expect(sensor.isConnected && sensor.name == "Polar H10 ABCD1234" && sensor.address == "A0:9E:1A:00:00:01")
        for s in [0.0, 1, 5, 60, 3600] { #expect(sensor.reading(at: Self.at(s)) == .noData) }
    }

    @Test func freshReadingIsLiveUntilTheStaleLimitThenStale() {
        var sensor = Self.connected()
        sensor.notification(Self.worn, at: Self.at(10))
        #expect(sensor.reading(at: Self.at(10)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 0))
        #expect(sensor.reading(at: Self.at(12.5)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 2.5))
        #expect(sensor.reading(at: Self.at(15)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 5))  // at the limit
        #expect(sensor.reading(at: Self.at(15.001)) == .stale(lastBpm: 72, age: 5.001))
        #expect(sensor.reading(at: Self.at(70)) == .stale(lastBpm: 72, age: 60))
        // A new notification makes it live again.
        sensor.notification([0x06, 0x50], at: Self.at(71))
        #expect(sensor.reading(at: Self.at(71.5)) == .live(bpm: 80, rrIntervalsMs: [], age: 0.5))
    }

    @Test func staleLimitIsConfigurable() {
        var sensor = HeartRateSensor(staleAfter: 2)
        sensor.connected(name: nil, address: "00:00:00:00:00:01")
        sensor.notification(Self.worn, at: Self.at(0))
        #expect(sensor.reading(at: Self.at(2)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 2))
        #expect(sensor.reading(at: Self.at(2.001)) == .stale(lastBpm: 72, age: 2.001))
        sensor.staleAfter = 10
        #expect(sensor.reading(at: Self.at(3)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 3))
    }

    @Test func noContactIsASensorStateNotAReading() {
        for packet in [Self.noContact, Self.noContactWithNumber] {
            var sensor = Self.connected()
            sensor.notification(Self.worn, at: Self.at(0))
            sensor.notification(packet, at: Self.at(1))
            #expect(sensor.reading(at: Self.at(1)) == .noContact(age: 0))
            #expect(sensor.reading(at: Self.at(6)) == .noContact(age: 5))
            // An old no-contact report says nothing about now, and the reading before it is older still.
            #expect(sensor.reading(at: Self.at(6.5)) == .noData)
            sensor.notification(Self.worn, at: Self.at(7))
            #expect(sensor.reading(at: Self.at(7)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 0))
        }
    }

    @Test func zeroWithoutDeniedContactIsNoData() {
        for packet in [Self.unsupportedZero, Self.wornZero] {
            var sensor = Self.connected()
            sensor.notification(Self.worn, at: Self.at(0))
            sensor.notification(packet, at: Self.at(1))
            #expect(sensor.reading(at: Self.at(1)) == .noData)
            #expect(sensor.reading(at: Self.at(30)) == .noData)
        }
    }

    @Test func strapWithoutContactDetectionIsLive() {
        var sensor = Self.connected()
        sensor.notification(Self.unsupported, at: Self.at(0))
        #expect(sensor.reading(at: Self.at(1)) == .live(bpm: 85, rrIntervalsMs: [], age: 1))
        #expect(sensor.reading(at: Self.at(9)) == .stale(lastBpm: 85, age: 9))
    }

    @Test func malformedNotificationsAreCountedAndTheLastGoodOneStays() {
        var sensor = Self.connected()
        sensor.notification(Self.worn, at: Self.at(0))
        let result = sensor.notification(Self.malformed, at: Self.at(1))
        #expect(result == .failure(.missingRRInterval))
        sensor.notification([], at: Self.at(2))
        #expect(sensor.notificationCount == 3)
        #expect(sensor.malformedCount == 2)
        #expect(sensor.lastError == .empty)
        #expect(sensor.lastMeasurementTime == Self.at(0))
        #expect(sensor.lastMeasurement?.bpm == 72)
        // Malformed packets do not freshen the reading: it ages from the last good one.
        #expect(sensor.reading(at: Self.at(4)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 4))
        #expect(sensor.reading(at: Self.at(6)) == .stale(lastBpm: 72, age: 6))
        // Only malformed packets since connecting: still no data.
        var fresh = Self.connected()
        fresh.notification(Self.malformed, at: Self.at(0))
        #expect(fresh.reading(at: Self.at(0)) == .noData)
    }

    @Test func disconnectingForgetsTheConnectionButNotTheCounts() {
        var sensor = Self.connected()
        sensor.notification(Self.worn, at: Self.at(0))
        sensor.notification(Self.malformed, at: Self.at(0.5))
        sensor.battery(80)
        sensor.disconnected()
        #expect(sensor.reading(at: Self.at(1)) == .disconnected)
        #expect(!sensor.isConnected && sensor.name == nil && sensor.address == nil)
        #expect(sensor.batteryPercent == nil && sensor.lastMeasurement == nil && sensor.lastMeasurementTime == nil)
        #expect(sensor.notificationCount == 2 && sensor.malformedCount == 1)

        // A late notification while disconnected is counted, not kept.
        sensor.notification(Self.worn, at: Self.at(1))
        #expect(sensor.notificationCount == 3)
        #expect(sensor.reading(at: Self.at(1)) == .disconnected)

        // Reconnecting starts from no data, even right after a reading.
        sensor.connected(name: "Strap", address: "A0:9E:1A:00:00:02")
        #expect(sensor.reading(at: Self.at(1)) == .noData)
        #expect(sensor.name == "Strap" && sensor.address == "A0:9E:1A:00:00:02")
        sensor.notification(Self.worn, at: Self.at(2))
        #expect(sensor.reading(at: Self.at(2)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 0))
        #expect(sensor.notificationCount == 4)
    }

    @Test func connectingAgainWithoutADisconnectStartsOver() {
        var sensor = Self.connected()
        sensor.notification(Self.worn, at: Self.at(0))
        sensor.battery(50)
        sensor.connected(name: nil, address: "A0:9E:1A:00:00:03")
        #expect(sensor.reading(at: Self.at(0)) == .noData)
        #expect(sensor.batteryPercent == nil && sensor.name == nil)
    }

    @Test func batteryIsKeptOnlyWhenConnectedAndAPercentage() {
        var sensor = HeartRateSensor()
        sensor.battery(90)
        #expect(sensor.batteryPercent == nil)
        sensor.connected(name: nil, address: "A0:9E:1A:00:00:01")
        for (value, kept) in [(44, 44), (0, 0), (100, 100), (101, 100), (-1, 100), (255, 100)] {
            sensor.battery(value)
            #expect(sensor.batteryPercent == kept, "battery(\(value))")
        }
    }

    @Test func aClockBeforeTheLastNotificationCountsAsAgeZero() {
        var sensor = Self.connected()
        sensor.notification(Self.worn, at: Self.at(10))
        #expect(sensor.reading(at: Self.at(3)) == .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: 0))
    }

    /// Every packet kind × every age band × connected or not, against the rule table.
    @Test func readingFollowsTheRuleTable() {
        enum Kind: CaseIterable { case worn, unsupported, noContact, zero, malformedOnly }
        let packets: [Kind: [UInt8]] = [.worn: Self.worn, .unsupported: Self.unsupported, .noContact: Self.noContact,
                                        .zero: Self.unsupportedZero, .malformedOnly: Self.malformed]
        for kind in Kind.allCases {
            for age in [0.0, 0.001, 4.999, 5, 5.001, 60] {
                for connected in [true, false] {
                    var sensor = HeartRateSensor()
                    if connected { sensor.connected(name: nil, address: "A0:9E:1A:00:00:01") }
                    sensor.notification(packets[kind]!, at: Self.t0)
                    let reading = sensor.reading(at: Self.at(age))
                    let fresh = age <= 5
                    let expected: HeartRateReading =
                        if !connected { .disconnected }
                        else { switch kind {
                        case .worn: fresh ? .live(bpm: 72, rrIntervalsMs: [332.03125, 730.46875], age: age) : .stale(lastBpm: 72, age: age)
                        case .unsupported: fresh ? .live(bpm: 85, rrIntervalsMs: [], age: age) : .stale(lastBpm: 85, age: age)
                        case .noContact: fresh ? .noContact(age: age) : .noData
                        case .zero, .malformedOnly: .noData
                        } }
                    #expect(reading == expected, "\(kind) age \(age) connected \(connected)")
                }
            }
        }
    }
}
