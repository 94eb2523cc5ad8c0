import PacerConfig
import PacerCore
import Testing
@testable import PacerSession

@Suite(.timeLimit(.minutes(10))) struct StatusWordingTests {
    static let second: UInt64 = 1_000_000_000

    @Test func gpsIsUnreachableUntilConnectedAndAFixIsFreshForFiveSeconds() {
        var gps = GPSStatus()
        #expect(gps.state(nowNs: 0) == .gpsdUnreachable)
        #expect(gps.linkChanged(to: .connected, server: "127.0.0.1:2947", runID: nil) == SessionNote(.info, "gps", "connected to gpsd at 127.0.0.1:2947"))
        #expect(gps.linkChanged(to: .connected, server: "127.0.0.1:2947", runID: nil) == nil)
        #expect(gps.state(nowNs: 0) == .noFix)
        gps.fix(mode: .threeD, timedFixAtNs: 10 * Self.second)
        #expect(gps.state(nowNs: 10 * Self.second) == .fix3D)
        #expect(gps.state(nowNs: 15 * Self.second - 1) == .fix3D)
        #expect(gps.state(nowNs: 15 * Self.second) == .noFix)
        gps.fix(mode: .twoD, timedFixAtNs: 16 * Self.second)
        #expect(gps.state(nowNs: 16 * Self.second) == .fix2D)
        // A fix without a time refreshes nothing, but its mode counts while the last timed one is fresh.
        gps.fix(mode: .noFix, timedFixAtNs: nil)
        #expect(gps.state(nowNs: 17 * Self.second) == .noFix)
        let lost = gps.linkChanged(to: .lost(reason: "connection refused"), server: "127.0.0.1:2947", runID: 4)
        #expect(lost == SessionNote(.warning, "gps", "lost gpsd at 127.0.0.1:2947 (connection refused); reconnecting", runID: 4))
        #expect(gps.state(nowNs: 17 * Self.second) == .gpsdUnreachable)
        #expect(gps.linkChanged(to: .connecting, server: "127.0.0.1:2947", runID: 4) == nil)
        #expect(gps.link == .connecting)
    }

    @Test func theStatusLineNamesRunGPSAndStrap() {
        var status = DaemonStatus()
        #expect(status.line == "Idle, gpsd not reachable, HR strap not paired")
        status.phase = .waitingForFix
        status.gps = .noFix
        #expect(status.line == "Run started, waiting for a GPS fix, GPS no fix, HR strap not paired")
        status.phase = .recording
        status.runID = 12
        status.distance = 5214
        status.gps = .fix3D
        status.strap.link = .connected
        status.strap.reading = .live(bpm: 142, rrIntervalsMs: [], age: 0)
        #expect(status.line == "Recording run 12: 5.21 km, GPS 3D fix, HR 142")
        status.units = .imperial
        status.phase = .paused
        status.gps = .fix2D
        #expect(status.line == "Paused run 12: 3.24 mi, GPS 2D fix, HR 142")
        status.storeProblem = "disk full"
        #expect(status.line == "Paused run 12: 3.24 mi, NOT SAVING (disk full), GPS 2D fix, HR 142")
    }

    @Test func onlyAChangeOfStateIsSentAtOnce() {
        var before = DaemonStatus()
        before.phase = .recording
        before.runID = 1
        var after = before
        after.distance = 100
        after.movingTime = 30
        after.strap.lastBpm = 120
        #expect(after.sameState(as: before))
        after.gps = .fix3D
        #expect(!after.sameState(as: before))
        after = before
        after.strap.link = .lost
        #expect(!after.sameState(as: before))
    }

    @Test func theStrapSaysWhatItReads() {
        var strap = StrapStatus()
        strap.link = .searching
        #expect(strap.text == "HR strap not found")
        strap.link = .connected
        let readings: [(HeartRateReading, String, String)] = [
            (.disconnected, "HR no data", "disconnected"), (.noData, "HR no data", "no_data"),
            (.noContact(age: 1), "HR no skin contact", "no_contact"), (.stale(lastBpm: 80, age: 9), "HR no recent data", "stale"),
            (.live(bpm: 90, rrIntervalsMs: [], age: 0), "HR 90", "live"),
        ]
        for (reading, text, name) in readings {
            strap.reading = reading
            #expect(strap.text == text && strap.readingName == name)
        }
        #expect(strap.liveBpm == 90)
        strap.reading = .noData
        #expect(strap.liveBpm == nil)
    }

    @Test func readinessWordsForGPS() {
        let spoken: [DaemonStatus.GPSState: String] = [
            .fix3D: "GPS 3D fix", .fix2D: "GPS 2D fix", .noFix: "No GPS fix yet", .gpsdUnreachable: "GPS receiver not available",
        ]
        for (state, words) in spoken { #expect(state.spoken == words) }
    }
}
