import Foundation
import PacerCore
import PacerTestSupport
import Testing

/// The scenario's moves on the world (an SOS, a strap drop, a gpsd restart), each waiting on
/// what it causes with a deadline, and the checks afterwards (Scene+Checks.swift).
struct Scene: Sendable {
    let world: EndToEndWorld
    let log: NMEAEpochs

    /// Polls `condition` (off the cooperative pool: it may run busctl or curl) until it holds;
    /// after `timeout`, fails with pacerd's latest journal.
    func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ condition: @escaping @Sendable () throws -> Bool) async throws {
        try await waitOffPool(
            timeout: timeout, every: .milliseconds(50),
            orFail: "timed out after \(timeout) waiting for \(what); pacerd's journal ends:\n\(world.daemon.stderr.suffix(6000))", condition)
    }

    /// Waits until pacerd's run has its sample of `epoch` (or a later one).
    func waitForSample(of epoch: Int, timeout: Duration = .seconds(30)) async throws {
        let time = log.times[epoch]
        try await world.daemon.waitForStatus(timeout: timeout, every: .milliseconds(100)) { status in
            (status["last_sample_time"] as? String).flatMap(Timestamp.init(iso8601:)).map { $0 >= time } == true
        }
    }

    /// A control of the simulated strap (busctl), off the cooperative pool.
    func strap(_ control: @escaping @Sendable (BluetoothSimulator) throws -> Void) async throws {
        let bluetooth = world.bluetooth
        try await offPool { try control(bluetooth) }
    }

    /// The strap reports `highBpm` until the SOS has reached the contact (SMS) and pacer-cloud and
    /// pacerd has said so; then the heart rate is back to normal and the runner cancels: the
    /// false alarm goes the same ways. Returns the alert's id.
    func sos(highBpm: UInt16, normalBpm: [UInt16], rateHz: Double) async throws -> String {
        let world = world
        try await strap { try $0.startStream(address: EndToEndWorld.strap, rateHz: rateHz, bpm: [highBpm]) }
        try await waitUntil("the SOS to reach the contact and pacer-cloud") {
            try world.modem.sent().contains { $0.text.hasPrefix("SOS: HIGH heart rate") }
                && ((try? world.cloud.json("/v1/alerts?state=open"))?["alerts"] as? [Any])?.count == 1
        }
        try await strap { try $0.startStream(address: EndToEndWorld.strap, rateHz: rateHz, bpm: normalBpm) }
        let open = try #require(try world.cloud.json("/v1/alerts?state=open")["alerts"] as? [[String: Any]])
        let alertID = try #require(open.first?["alert_id"] as? String)
        try await waitUntil("pacerd to say what acknowledged the alert") {
            world.cues.contains { $0.kind == "sos" && $0.text.hasPrefix("Emergency alert sent") }
        }

        let cancel = try await world.daemon.ctl("sos", "cancel")
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(cancel.stdout.hasPrefix("cancelled 1 alert:"), "\(cancel.stdout)")
        try await waitUntil("the false alarm to reach the contact and pacer-cloud") {
            try world.modem.sent().contains { $0.text.hasPrefix("FALSE ALARM") }
                && ((try? world.cloud.json("/v1/alerts?state=cancelled"))?["alerts"] as? [Any])?.count == 1
        }
        try await waitUntil("pacerd to say what acknowledged the false alarm") {
            world.cues.contains { $0.kind == "sos" && $0.text.hasPrefix("False alarm message sent") }
        }
        return alertID
    }

    /// The strap's link drops (it stays in range); pacerd connects to it again.
    func strapDrop() async throws {
        let world = world
        let before = try await offPool { try world.bluetooth.stats(address: EndToEndWorld.strap) }
        try await strap { try $0.dropLink(address: EndToEndWorld.strap) }
        try await waitUntil("pacerd to connect to the strap again") {
            world.journal.contains { $0.message.hasSuffix("(\(EndToEndWorld.strap)) connected again") }
        }
        try await world.daemon.waitForStatus(every: .milliseconds(100)) { status in
            let hr = status["hr"] as? [String: Any]
            return hr?["state"] as? String == "connected" && hr?["reading"] as? String == "live"
        }
        let after = try await offPool { try world.bluetooth.stats(address: EndToEndWorld.strap) }
        #expect(after.disconnects == before.disconnects + 1, "one link lost")
        #expect(after.connects == before.connects + 1, "and one made again")
    }

    /// gpsd goes away once pacerd has what it played (the epochs the receiver sends meanwhile
    /// are lost) and a new one comes up on the same port with the rest of the log; pacerd
    /// reconnects and the run goes on, across a gap the core bridges. `lastReleased`: when the
    /// last epoch before the gap was played.
    func restartGPSD(_ first: GPSFake, lastReleased: ContinuousClock.Instant, player: GPSPlayer, plan: RunPlan,
                     secondLog: String) async throws -> GPSFake {
        let world = world, daemon = world.daemon
        try await waitForSample(of: plan.restartAfter - 1)
        let connected = { @Sendable in world.journal.count(where: { $0.message.hasPrefix("connected to gpsd at ") }) }
        let bridged = { @Sendable in world.journal.count(where: { $0.message.hasPrefix("GPS fix regained after ") }) }
        let connectedBefore = connected(), bridgedBefore = bridged()
        await first.stop()
        try await waitUntil("pacerd to notice gpsd gone") { world.journal.contains { $0.message.hasPrefix("lost gpsd at ") } }

        let second = try GPSFake(log: secondLog, port: daemon.gpsPort, options: WholeRunTests.gpsfake)
        try await second.start()
        // Held until pacerd watches: gpsd keeps nothing for a client that connects later.
        try await waitUntil("pacerd to reconnect to gpsd") { connected() > connectedBefore }
        // The receiver went on at one epoch a second while gpsd was away: its first epoch after
        // the lost ones comes that long after the last one played, so the run's clock (GPS time)
        // and the heart rate's (wall time) still agree across the gap, as on the device.
        let lost = plan.partB.lowerBound - plan.restartAfter
        try await Task.sleep(until: lastReleased + .seconds(lost))
        player.attach(second, epochs: plan.partB)
        player.play(through: log.count - 1, every: .seconds(1))
        let firstAgain = log.times[plan.partB.lowerBound]
        try await daemon.waitForStatus(every: .milliseconds(100)) { status in
            status["state"] as? String == "recording" && status["run"] as? Int == 1
                && (status["last_sample_time"] as? String).flatMap(Timestamp.init(iso8601:)).map { $0 >= firstAgain } == true
        }
        try await waitUntil("the gap to be bridged") { bridged() > bridgedBefore }
        return second
    }
}
