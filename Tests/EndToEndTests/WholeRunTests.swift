import Foundation
import PacerCore
import PacerTestSupport
import Store
import Testing

/// One pacerd life with everything real (issue 9): the park run (tools/demo-data/park-3k)
/// through gpsd (gpsfake) coached by a structured workout and spoken by espeak-ng into WAV
/// files; mid-run, the strap reports a heart rate above the limit (SOS by SMS through the
/// simulated ModemManager and to pacer-cloud), its link drops and comes back, gpsd restarts;
/// the cloud goes away while the run finishes and is back for `pacerctl sync`; then SIGTERM.
/// Afterwards: what the server holds, what was spoken, what the journal says.
@Suite(.serialized, .timeLimit(.minutes(10))) struct WholeRunTests {
    /// Between the moments that matter, 25 epochs (run seconds) a second: the run's 17 minutes
    /// in about 40 s. The strap's 20 notifications a second keep the heart rate dense on the
    /// run's timeline at that pace (the coach calls it lost after 5 s of run time without).
    static let fast = Duration.milliseconds(40)
    static let strapRateHz = 20.0
    static let normalBpm: [UInt16] = (0..<40).map { 130 + UInt16(min($0, 39 - $0)) }
    static let sosBpm: UInt16 = 215
    /// gpsfake paces itself too, a little faster than `fast` (3 sentences an epoch): when it was
    /// starved of CPU it catches up at that pace, not in a burst of epochs with no heart rate
    /// between them. Held: the player releases every sentence.
    static let gpsfake = GPSFake.Options(cycle: 0.01, holdUntilReleased: true)
    /// The epochs before a step, at 6.7 a second: the heart rate 3 notifications an epoch.
    static let approachEpochs = 12
    static let approach = Duration.milliseconds(150)
    /// Epochs the receiver sends while gpsd is away (longer than gpsd takes to restart here):
    /// lost to the run, and more than `gps_lost_after_s`, so the core bridges a GPS outage.
    static let restartGap = 6

    @Test func aWholeRunWithAWorkoutAnSOSAStrapDropAGPSDRestartAndACloudOutage() async throws {
        let began = ContinuousClock.now
        let world = try await offPool { try EndToEndWorld() }
        defer { world.close() }
        let daemon = world.daemon
        let log = try NMEAEpochs(contentsOf: EndToEndWorld.parkNMEA)
        let plan = try await RunPlan.make(log: log, workout: world.workoutPath, gap: Self.restartGap, directory: daemon.directory)
        let partA = daemon.directory.file("park-a.nmea"), partB = daemon.directory.file("park-b.nmea")
        try log.write(plan.partA, to: partA)
        try log.write(plan.partB, to: partB)
        let scene = Scene(world: world, log: log)
        let player = GPSPlayer(log: log)
        defer { player.close() }

        // gpsd with the first part of the log, held until pacerd watches; pacerd connected to it
        // and to the strap, which streams.
        let firstGPSD = try GPSFake(log: partA, port: daemon.gpsPort, options: Self.gpsfake)
        try await firstGPSD.start()
        try await world.startDaemon()
        try await scene.strap { try $0.startStream(address: EndToEndWorld.strap, rateHz: Self.strapRateHz, bpm: Self.normalBpm) }
        try await daemon.waitForStatus(every: .milliseconds(100)) { status in
            status["gps"] as? String == "no_fix" && (status["hr"] as? [String: Any])?["reading"] as? String == "live"
        }
        player.attach(firstGPSD, epochs: plan.partA)

        let start = try await daemon.ctl("run", "start", "--workout", world.workoutPath)
        #expect(start.status == 0, "\(start.stderr)")

        // The run, event by event in the order of its epochs; fast in between.
        var secondGPSD: GPSFake?
        var alertID = ""
        var outageBegan = 0
        let events = plan.steps.map { (epoch: $0.epoch, step: Optional($0.text)) }
            + [plan.sos, plan.strapDrop, plan.restartAfter].map { (epoch: $0, step: String?.none) }
        for (epoch, step) in events.sorted(by: { $0.epoch < $1.epoch }) {
            // Before a step, pacerd catches up with what was played fast, and the epochs up to it
            // come at `approach`: at the fast pace, a strap held up for a moment on a loaded
            // machine leaves 5 s of the run without heart rate, and "heart rate lost" and its
            // "back" (safety cues, which cut a step's announcement off) are decided 10 s of run
            // later; on the approach they come, if at all, before the step.
            let fastThrough = step != nil && epoch > Self.approachEpochs ? epoch - Self.approachEpochs : epoch
            player.play(through: fastThrough, every: Self.fast)
            try await player.waitUntilReleased(through: fastThrough)
            if fastThrough < epoch {
                try await scene.waitForSample(of: fastThrough - 1)
                player.play(through: epoch - 1, every: Self.approach)
                try await player.waitUntilReleased(through: epoch - 1)
            }
            if epoch == plan.restartAfter {
                secondGPSD = try await scene.restartGPSD(firstGPSD, lastReleased: .now, player: player, plan: plan, secondLog: partB)
                continue
            }
            // Real time while what happens here takes wall time, as on the device.
            player.play(through: log.count - 1, every: .seconds(1))
            if let step {
                try await scene.waitUntil("the step \"\(step)\" to be dealt with") { world.cues.contains { $0.kind == "step" && $0.text == step } }
            } else if epoch == plan.sos {
                alertID = try await scene.sos(highBpm: Self.sosBpm, normalBpm: Self.normalBpm, rateHz: Self.strapRateHz)
            } else if epoch == plan.strapDrop {
                try await scene.strapDrop()
            }
            if epoch == plan.cloudDown {
                // The network goes: pacer-cloud stops; the run finishes without it.
                outageBegan = world.journal.count
                try await offPool { _ = world.cloud.stop() }
            }
        }
        // (Each gpsfake is stopped by PID when its last reference goes, also on a failure.)
        let finalGPSD = try #require(secondGPSD)

        // The rest of the log, then the runner stops: the run is packaged, but nothing reaches
        // the cloud.
        player.play(through: log.count - 1, every: Self.fast)
        try await scene.waitForSample(of: log.count - 2, timeout: .seconds(60))
        let stop = try await daemon.ctl("run", "stop")
        #expect(stop.status == 0, "\(stop.stderr)")
        let waiting = try await daemon.waitForStatus(every: .milliseconds(100)) { status in
            let uploads = status["uploads"] as? [String: Any]
            return uploads?["runs"] as? Int == 1 && uploads?["failures_in_a_row"] as? Int ?? 0 >= 1
        }
        #expect((waiting["state"] as? String) == "idle")
        try await scene.waitUntil("the run's stop announcement") { world.cues.contains { $0.kind == "run_state" && $0.text.hasPrefix("Run stopped.") } }
        let beforeReturn = world.journal
        #expect(!beforeReturn.contains { $0.message.contains("is in the cloud") }, "nothing reached the cloud while it was away")

        // The cloud is back; `pacerctl sync` sends what waited, at once.
        try await offPool { try world.cloud.start() }
        let synced = ContinuousClock.now
        let sync = try await daemon.ctl("sync")
        #expect(sync.status == 0, "\(sync.stderr)")
        try await scene.waitUntil("the run to be in the cloud") { world.journal.contains { $0.message.contains("is in the cloud") } }
        let uploadTook = ContinuousClock.now - synced
        try await daemon.waitForStatus(every: .milliseconds(100)) { ($0["uploads"] as? [String: Any])?["runs"] as? Int == 0 }

        // SIGTERM: pacerd stops cleanly.
        #expect(await daemon.stop() == .exited(0))
        #expect(daemon.notify.assignments.contains { $0.line == "STOPPING=1" })
        await finalGPSD.stop()
        let tookAll = ContinuousClock.now - began

        try await scene.checkTheStore(plan: plan)
        try scene.checkTheCloud(alertID: alertID)
        try await scene.checkWhatWasSpoken()
        try scene.checkTheJournal(plan: plan, alertID: alertID, outageBegan: outageBegan, gpsPort: daemon.gpsPort)
        #expect(uploadTook < .seconds(5), "uploaded \(uploadTook) after `pacerctl sync`: at once, not at the backoff's end")
        print("WholeRunTests: the whole scenario took \(tookAll); the upload \(uploadTook) after pacerctl sync")
    }
}
