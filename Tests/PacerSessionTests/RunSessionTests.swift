import PacerConfig
import PacerCore
import Testing
@testable import PacerSession

/// The run session on injected time, its effects answered by `SessionDriver`: no daemon, no
/// store, no clock, no sleeps.
@Suite(.timeLimit(.minutes(10))) struct RunSessionTests {
    typealias D = SessionDriver
    static let second = D.second

    @Test func theStatusLineFollowsTheRunFromIdleToRecordingPausedAndIdleAgain() throws {
        let d = D()
        #expect(d.status(at: D.at(0)).line == "Idle, gpsd not reachable, HR strap not paired")
        d.send(.gpsLink(.connected), at: D.at(0))
        #expect(d.said("connected to gpsd at localhost:2947"))
        #expect(d.statuses.last?.line == "Idle, GPS no fix, HR strap not paired")
        let started = try #require(d.command(.start, at: D.at(0)))
        #expect(started.map(\.line) == .success("Run started, waiting for a GPS fix, GPS no fix, HR strap not paired"))
        #expect(d.said("run started; it is recorded from the first GPS fix"))
        #expect(d.cues.last?.text == "Run started. Waiting for GPS.")
        d.run(seconds: 11)
        #expect(d.status(at: D.at(10)).line == "Recording run 1: 0.03 km, GPS 3D fix, HR strap not paired")
        #expect(d.sos.contains(.run(SessionRun(id: 1, uuid: "run-uuid-1", paused: false))))
        #expect(d.uplink.contains { if case .position(let position, _, _) = $0 { position.run_id == "run-uuid-1" } else { false } })
        // The distance moves with every fix, but only the tick publishes it.
        let published = d.statuses.count
        for i in 11..<31 { d.send(.gpsLine("TPV \(i)", fix: D.fix(i), receivedNs: D.at(i)), at: D.at(i)) }
        #expect(d.statuses.count == published)
        d.send(.tick, at: D.at(30) + 1)
        #expect(d.statuses.count == published + 1)
        #expect(d.statuses.last?.line == "Recording run 1: 0.09 km, GPS 3D fix, HR strap not paired")
        let paused = try #require(d.command(.control(.pause), at: D.at(31)))
        #expect(paused.map(\.line) == .success("Paused run 1: 0.09 km, GPS 3D fix, HR strap not paired"))
        #expect(d.said("pause by the runner"))
        #expect(d.sos.last == .run(SessionRun(id: 1, uuid: "run-uuid-1", paused: true)))
        #expect(d.command(.control(.resume), at: D.at(32))?.map(\.phase) == .success(.recording))
        // A fix older than five seconds no longer counts.
        #expect(d.status(at: D.at(35) - 1).gps == .fix3D)
        #expect(d.status(at: D.at(35)).gps == .noFix)
        #expect(d.command(.stop, at: D.at(36))?.map(\.line) == .success("Idle, GPS no fix, HR strap not paired"))
        #expect(d.said("run 1 stopped: 0.09 km, moving "))
        #expect(d.uplink.last == .wake(reason: "run 1 finished"))
        #expect(d.sos.last == .run(nil))
        // Stopped before a fix, a run leaves nothing to store.
        _ = d.command(.start, at: D.at(100))
        _ = d.command(.stop, at: D.at(101))
        #expect(d.said("run stopped before any GPS fix: nothing to store"))
        var imperial = PacerConfiguration()
        imperial.units = .imperial
        d.send(.reload(imperial), at: D.at(102))
        d.send(.gpsLink(.lost(reason: "connection refused")), at: D.at(102))
        #expect(d.notes.last == SessionNote(.warning, "gps", "lost gpsd at localhost:2947 (connection refused); reconnecting"))
        #expect(d.status(at: D.at(102)).line == "Idle, gpsd not reachable, HR strap not paired")
    }

    @Test func eachButtonGestureDoesItsOneThing() {
        let d = D()
        // A long press with no run is refused, and the journal says why.
        d.click(at: D.at(0), heldNs: 2 * Self.second)
        #expect(d.said("button long press: no run in progress"))
        // Short press idle: a run starts.
        d.click(at: D.at(3))
        #expect(d.status(at: D.at(4)).phase == .waitingForFix)
        #expect(d.replies.isEmpty, "a button is not a command: nothing to answer")
        d.run(from: 4, seconds: 10)
        // Short press running: a lap.
        d.click(at: D.at(14))
        #expect(d.said("lap by the runner"))
        #expect(d.said("lap 1: "))
        #expect(d.steps.contains { if case .control(.lap, let time) = $0 { time != nil } else { false } })
        // Very long: the SOS lane's own, nothing here.
        let notes = d.notes.count
        d.click(at: D.at(16), heldNs: 20 * Self.second)
        #expect(d.status(at: D.at(37)).phase == .recording)
        #expect(d.notes.count == notes)
        // While the lane asks "Are you OK?", a press answers it, whatever its length.
        d.click(at: D.at(40), sosAsking: true)
        d.click(at: D.at(42), heldNs: 2 * Self.second, sosAsking: true)
        #expect(d.sos.count { $0 == .answer } == 2)
        #expect(d.count("answers \"Are you OK?\"") == 2)
        #expect(d.status(at: D.at(45)).phase == .recording)
        // A reset forgets a press in progress.
        d.key(.press, at: D.at(46))
        #expect(d.session.buttonDeadlineNs != nil)
        d.send(.buttonsReset, at: D.at(46))
        #expect(d.session.buttonDeadlineNs == nil)
        d.key(.release, at: D.at(46) + 3 * Self.second)
        #expect(d.status(at: D.at(50)).phase == .recording)
        // Long press: stop.
        d.click(at: D.at(50), heldNs: 2 * Self.second)
        #expect(d.status(at: D.at(53)).phase == .idle)
        #expect(d.said("run 1 stopped"))
        // A reload changes the long press.
        var configuration = PacerConfiguration()
        configuration.longPressSeconds = 5
        configuration.veryLongPressSeconds = 12
        d.send(.reload(configuration), at: D.at(60))
        d.click(at: D.at(61), heldNs: 2 * Self.second)
        #expect(d.status(at: D.at(64)).phase == .waitingForFix, "held 2 s is a short press now")
    }

    @Test func aRunStartsByItselfWhenTheRunnerKeepsMovingAndNotAgainUntilStill() {
        var configuration = PacerConfiguration()
        configuration.autoStart = true
        configuration.autoStartSpeed = 2
        configuration.autoStartAfterSeconds = 10
        let d = D(configuration: configuration)
        d.run(seconds: 5, speed: 0.2)
        #expect(d.status(at: D.at(5)).phase == .idle)
        d.run(from: 5, seconds: 20, speed: 3)
        #expect(d.said("starting a run by itself ([run] auto_start)"))
        #expect(d.status(at: D.at(25)).phase == .recording)
        // The fix that started it is the run's first line.
        if case .gpsLine(let line, _, _)? = d.steps.first { #expect(line == "TPV 15") } else { Issue.record("\(d.steps.first as Any)") }
        #expect(d.command(.stop, at: D.at(25))?.map(\.phase) == .success(.idle))
        d.run(from: 26, seconds: 30, speed: 3)
        #expect(d.status(at: D.at(56)).phase == .idle, "still moving after the stop")
        d.run(from: 56, seconds: 12, speed: 0)
        d.run(from: 68, seconds: 15, speed: 3)
        #expect(d.status(at: D.at(83)).phase == .recording, "still, then moving again")
        // Off by a reload: no more runs by themselves.
        _ = d.command(.stop, at: D.at(83))
        d.send(.reload(PacerConfiguration()), at: D.at(84))
        d.run(from: 84, seconds: 12, speed: 0)
        d.run(from: 96, seconds: 15, speed: 3)
        #expect(d.status(at: D.at(111)).phase == .idle)
    }

    static let strap = "A0:9E:1A:00:00:01"
    static let heartRate72: [UInt8] = [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02]

    /// The health page's daily summary takes readings outside runs only: valid ones, while no run
    /// is being recorded (waiting for its first fix counts as in the run).
    @Test func readingsOutsideRunsGoToTheDailySummaryAndOnlyThose() {
        let d = D()
        d.send(.strapChoice(StrapSelection(straps: [Self.strap], source: .paired, adapter: nil)), at: D.at(0))
        d.send(.strap(.connected(address: Self.strap, name: "Polar H10")), at: D.at(0))
        d.send(.strapNotification(Self.heartRate72, receivedNs: D.at(1)), at: D.at(1))
        // No skin contact, and a malformed packet: no reading.
        d.send(.strapNotification([0x04, 0x00], receivedNs: D.at(2)), at: D.at(2))
        d.send(.strapNotification([0x01], receivedNs: D.at(2)), at: D.at(2))
        #expect(d.heartRateOutsideRuns == [72])
        _ = d.command(.start, at: D.at(3))
        d.send(.strapNotification(Self.heartRate72, receivedNs: D.at(3)), at: D.at(3))
        d.run(from: 4, seconds: 3)
        d.send(.strapNotification(Self.heartRate72, receivedNs: D.at(6)), at: D.at(6))
        #expect(d.heartRateOutsideRuns == [72], "readings in a run are the run's")
        _ = d.command(.stop, at: D.at(7))
        d.send(.strapNotification(Self.heartRate72, receivedNs: D.at(8)), at: D.at(8))
        #expect(d.heartRateOutsideRuns == [72, 72])
    }

    @Test func aFlappingStrapIsSaidOncePerChangeAndItsBpmReachesTheRun() {
        let d = D()
        d.send(.strapChoice(StrapSelection(straps: [Self.strap], source: .paired, adapter: nil)), at: D.at(0))
        #expect(d.said("looking for the heart-rate strap \(Self.strap) (paired with pacerctl)"))
        // Not in range, over and over: said once.
        for i in 0..<5 { d.send(.strap(.searching(address: Self.strap)), at: D.at(i)) }
        #expect(d.count("is not in range; discovering") == 1)
        #expect(d.status(at: D.at(5)).strap.text == "HR strap not found")
        _ = d.command(.start, at: D.at(0))
        d.send(.strap(.connected(address: Self.strap, name: "Polar H10")), at: D.at(0))
        // Before the first fix a notification has no place on the run's timeline.
        d.send(.strapNotification(Self.heartRate72, receivedNs: D.at(0)), at: D.at(0))
        d.send(.strapNotification(Self.heartRate72, receivedNs: D.at(0)), at: D.at(0))
        #expect(d.count("heart rate is recorded from the run's first GPS fix") == 1)
        for cycle in 0..<3 {
            let from = cycle * 10
            for i in from..<(from + 5) {
                d.run(from: i, seconds: 1)
                d.send(.strapNotification(Self.heartRate72, receivedNs: D.at(i) + 500_000_000), at: D.at(i) + 500_000_000)
            }
            #expect(d.status(at: D.at(from + 5)).strap.text == "HR 72")
            d.send(.strap(.disconnected(address: Self.strap, reason: "timeout")), at: D.at(from + 5))
            d.run(from: from + 5, seconds: 5)
            #expect(d.status(at: D.at(from + 10)).strap.text == "HR strap lost, reconnecting")
            d.send(.strap(.connectFailed(address: Self.strap, reason: "le-connection-abort-by-local")), at: D.at(from + 10))
            #expect(d.status(at: D.at(from + 10)).strap.text == "HR strap lost, reconnecting", "lost until it is back")
            d.send(.strap(.connected(address: Self.strap, name: "Polar H10")), at: D.at(from + 10))
        }
        #expect(d.count("disconnected (timeout); reconnecting") == 3)
        #expect(d.count("connected again") == 3)
        #expect(d.notes.first { $0.message.contains("disconnected (timeout)") }?.level == .warning)
        #expect(d.notes.first { $0.message.contains("disconnected (timeout)") }?.runID == 1)
        // Only what came after the first fix goes into the run: 3 cycles of 5 notifications.
        #expect(d.steps.count { if case .heartRate(_, let sample?, _, _) = $0 { sample.bpm == 72 } else { false } } == 15)
        // The live position carries the last bpm.
        #expect(d.uplink.contains { if case .position(let position, _, _) = $0 { position.heart_rate == 72 } else { false } })
        // A low battery is said once per connection, and the coach hears every reading.
        d.send(.strap(.battery(address: Self.strap, percent: 5)), at: D.at(31))
        d.send(.strap(.battery(address: Self.strap, percent: 4)), at: D.at(31))
        #expect(d.count("battery low") == 1)
        #expect(d.coachNews.count { if case .strapBattery = $0 { true } else { false } } == 2)
        // A malformed packet is still recorded raw, with no sample.
        d.send(.strapNotification([0x01], receivedNs: D.at(32)), at: D.at(32))
        #expect(d.said("the strap sent a malformed heart-rate packet"))
        #expect(d.steps.contains { if case .heartRate([0x01], nil, _, _) = $0 { true } else { false } })
        d.send(.strap(.unavailable(reason: "no adapter")), at: D.at(33))
        d.send(.strap(.unavailable(reason: "no adapter")), at: D.at(34))
        #expect(d.count("heart rate unavailable: no adapter; retrying") == 1)
        #expect(d.status(at: D.at(34)).strap.text == "HR: Bluetooth unavailable")
    }

    /// An interrupted run whose last sample was at run second `lastSecond`, pacerd started at `startedAt`.
    static func resumable(lastSecond: Int = 40, startedAt: Int = 0) -> ResumePolicy {
        ResumePolicy(runID: 7, lastSampleTime: D.t0.adding(seconds: Double(lastSecond)), windowSeconds: 600, startedNs: D.at(startedAt))
    }

    @Test func anInterruptedRunContinuesWhenTheFirstFixComesWithinTheWindow() {
        let d = D(resumable: Self.resumable())
        // Nothing is decided before a fix, however many ticks; a fix without a time decides nothing.
        for i in 0..<10 { d.send(.tick, at: D.at(100 + i)) }
        d.send(.gpsLine("TPV", fix: GPSFix(time: nil, mode: .noFix, latitude: nil, longitude: nil), receivedNs: D.at(110)), at: D.at(110))
        #expect(d.uplink.isEmpty)
        d.run(from: 120, seconds: 20)
        #expect(d.said("continuing run 7, interrupted 80 s before this fix"))
        #expect(d.uplink.first == .releaseHeldRun(reason: "run 7 continued"))
        #expect(d.status(at: D.at(140)).runID == 7)
        #expect(d.sos.contains(.run(SessionRun(id: 7, uuid: "interrupted-uuid", paused: false))))
        // The fix that decided is the first line of the continued run.
        if case .gpsLine(let line, _, _)? = d.steps.first { #expect(line == "TPV 120") } else { Issue.record("\(d.steps.first as Any)") }
        _ = d.command(.stop, at: D.at(141))
        #expect(d.uplink.last == .wake(reason: "run 7 finished"))
        // Decided once: a later run is a new one.
        _ = d.command(.start, at: D.at(150))
        #expect(!d.said("stays interrupted"))
    }

    @Test func anInterruptedRunStaysInterruptedPastTheWindowTheDeadlineANewRunOrAFailedContinue() {
        for way in ["late fix", "deadline", "new run", "cannot continue"] {
            let d = D(resumable: Self.resumable())
            switch way {
            case "late fix":
                d.run(from: 700, seconds: 1)
                #expect(d.said("run 7 stays interrupted: the first fix came 660 s after its last sample"))
            case "deadline":
                d.send(.tick, at: D.at(599))
                #expect(d.uplink.isEmpty)
                d.send(.tick, at: D.at(600))
                #expect(d.said("run 7 stays interrupted: no GPS fix within 600 s of the start"))
            case "new run":
                _ = d.command(.start, at: D.at(1))
                #expect(d.said("run 7 stays interrupted: a new run was started"))
                #expect(d.status(at: D.at(1)).phase == .waitingForFix)
            default:
                d.continueFailure = "no such table: raw_lines"
                d.run(from: 60, seconds: 3)
                #expect(d.said("cannot continue run 7 (no such table: raw_lines); it stays interrupted"))
                #expect(d.notes.first { $0.message.hasPrefix("cannot continue") }?.level == .error)
                #expect(d.status(at: D.at(63)).phase == .idle)
                #expect(d.steps.isEmpty, "nothing recorded into a run that did not continue")
            }
            #expect(d.uplink.count { $0 == .releaseHeldRun(reason: "run 7 stays interrupted") } == 1, "\(way)")
            d.send(.tick, at: D.at(2000))
            d.run(from: 2000, seconds: 1)
            #expect(d.uplink.count { if case .releaseHeldRun = $0 { true } else { false } } == 1, "\(way): decided once")
        }
    }

    @Test func aRefusedWriteIsSaidOnceRetriedEveryTickAndRecoveredWithNothingLost() throws {
        let d = D()
        d.send(.gpsLink(.connected), at: D.at(0))
        _ = d.command(.start, at: D.at(0))
        d.run(seconds: 10)
        d.storeProblem = "database or disk is full"
        d.run(from: 10, seconds: 20)
        let full = d.status(at: D.at(30))
        #expect(full.storeProblem == "database or disk is full")
        #expect(full.line == "Recording run 1: 0.09 km, NOT SAVING (database or disk is full), GPS 3D fix, HR strap not paired")
        #expect(d.count("saving the run failed: database or disk is full. The run goes on") == 1)
        #expect(d.notes.first { $0.message.contains("saving the run failed") }?.level == .error)
        #expect(d.coachNews.contains { if case .storage(full: true, _) = $0 { true } else { false } })
        // Each tick retries with everything (forced), not only what is due.
        let forced = d.steps.count { if case .commit(force: true) = $0 { true } else { false } }
        #expect(forced >= 19)
        // Stopping while full: the command is answered, the run stays closing and is retried.
        let stopped = try #require(d.command(.stop, at: D.at(30)))
        #expect(stopped.map(\.phase) == .success(.recording))
        d.send(.tick, at: D.at(31))
        #expect(d.status(at: D.at(31)).phase == .recording)
        #expect(d.count("closing the run failed") == 0, "the same problem is not said again")
        d.storeProblem = nil
        d.send(.tick, at: D.at(32))
        #expect(d.count("the store takes writes again; recording resumed with nothing lost") == 1)
        #expect(d.coachNews.contains { if case .storage(full: false, _) = $0 { true } else { false } })
        #expect(d.said("run 1 stopped"))
        #expect(d.status(at: D.at(33)).line == "Idle, GPS 3D fix, HR strap not paired")
    }

    @Test func aRunThatCannotBeClosedAtShutdownIsSaidToBeLost() {
        let d = D()
        d.send(.shutdown, at: D.at(0))
        #expect(d.notes.isEmpty, "nothing to close")
        _ = d.command(.start, at: D.at(0))
        d.run(seconds: 5)
        d.storeProblem = "disk I/O error"
        d.send(.shutdown, at: D.at(6))
        #expect(d.said("closing the run failed: disk I/O error"))
        #expect(d.notes.last == SessionNote(.critical, "store", "stopping with run data not saved: disk I/O error. It is lost.", runID: 1))
        // A pause, a heart rate or a first fix refused is said in its own words.
        let e = D()
        e.storeProblem = "disk I/O error"
        _ = e.command(.start, at: D.at(0))
        e.run(seconds: 1)
        #expect(e.said("starting the run failed: disk I/O error"))
        e.send(.strap(.connected(address: Self.strap, name: "H10")), at: D.at(1))
        e.send(.strapNotification(Self.heartRate72, receivedNs: D.at(1)), at: D.at(1))
        #expect(e.said("recording heart rate failed: disk I/O error"))
        _ = e.command(.control(.lap), at: D.at(1))
        #expect(e.said("recording a lap failed: disk I/O error"))
        #expect(e.status(at: D.at(1)).phase == .waitingForFix, "no row yet")
        e.storeProblem = nil
        e.run(from: 1, seconds: 2)
        #expect(e.status(at: D.at(3)).runID == 1)
        e.storeProblem = "disk full"
        e.send(.strapNotification(Self.heartRate72, receivedNs: D.at(3)), at: D.at(3))
        #expect(e.said("saving the run failed: disk full"))
        _ = e.command(.control(.pause), at: D.at(4))
        e.storeProblem = nil
        e.send(.tick, at: D.at(5))
        e.storeProblem = "disk gone"
        e.send(.gpsLine("TPV", fix: D.fix(6), receivedNs: D.at(6)), at: D.at(6))
        #expect(e.said("saving the run failed: disk gone"))
        _ = e.command(.control(.resume), at: D.at(7))
        #expect(e.status(at: D.at(7)).phase == .recording)
    }

    @Test func aReloadMidRunKeepsTheRunsTrackingSettingsAndAppliesTheRest() {
        var changed = PacerConfiguration()
        changed.units = .imperial
        changed.tracking.pauseBelowSpeed *= 1.5
        let d = D()
        _ = d.command(.start, at: D.at(0))
        d.run(seconds: 10)
        d.send(.reload(changed), at: D.at(10))
        #expect(d.notes.last?.message == "configuration reloaded; new tracking settings apply from the next run")
        #expect(d.session.configuration.units == .imperial)
        #expect(d.status(at: D.at(10)).line.contains(" mi,"))
        #expect(d.statuses.last?.units == .imperial, "the new units are published at once")
        d.run(from: 10, seconds: 10)
        #expect(d.status(at: D.at(20)).phase == .recording)
        _ = d.command(.stop, at: D.at(21))
        d.send(.reload(changed), at: D.at(22))
        #expect(d.notes.last?.message == "configuration reloaded")
        // The next run starts with the new tracking settings.
        _ = d.command(.start, at: D.at(23))
        d.run(from: 23, seconds: 2)
        d.send(.reload(changed), at: D.at(25))
        #expect(d.notes.last?.message == "configuration reloaded", "the same settings: nothing to keep")
    }

    @Test func commandsAreRefusedWhenTheyDoNotFitAndAnsweredWhenDone() throws {
        let d = D()
        d.send(.gpsLink(.connected), at: D.at(0))
        #expect(d.command(.stop, at: D.at(0)) == .failure(CommandFailure(code: .conflict, message: "no run in progress")))
        #expect(d.command(.control(.pause), at: D.at(0)) == .failure(CommandFailure(code: .conflict, message: "no run in progress")))
        d.deleteOutcome = .noSuchRun
        #expect(d.command(.delete(runID: 9), at: D.at(0)) == .failure(CommandFailure(code: .notFound, message: "no run 9")))
        d.deleteOutcome = .failed("database is locked")
        #expect(d.command(.delete(runID: 9), at: D.at(0)) == .failure(CommandFailure(code: .internalError, message: "could not delete run 9: database is locked")))
        #expect(d.command(.start, at: D.at(0)).map { (try? $0.get())?.phase } == .waitingForFix)
        #expect(d.command(.start, at: D.at(0)) == .failure(CommandFailure(code: .conflict, message: "a run is already started (waiting for a GPS fix)")))
        d.run(seconds: 10)
        #expect(d.command(.startWorkout(Workout(name: "intervals", items: [])), at: D.at(10))
            == .failure(CommandFailure(code: .conflict, message: "run 1 is already being recorded")))
        #expect(d.command(.control(.resume), at: D.at(10)) == .failure(CommandFailure(code: .conflict, message: "the run is not paused")))
        _ = d.command(.control(.pause), at: D.at(10))
        #expect(d.command(.control(.pause), at: D.at(10)) == .failure(CommandFailure(code: .conflict, message: "the run is already paused")))
        #expect(d.command(.delete(runID: 1), at: D.at(10)) == .failure(CommandFailure(code: .conflict, message: "run 1 is being recorded; stop it first")))
        _ = d.command(.stop, at: D.at(11))
        d.deleteOutcome = .deleted
        #expect(d.command(.delete(runID: 1), at: D.at(12))?.map(\.phase) == .success(.idle))
        #expect(d.notes.last == SessionNote(.notice, "store", "run 1 deleted", runID: 1))
        #expect(d.command(.status, at: D.at(12))?.map(\.phase) == .success(.idle))
        // Say and readiness speak; readiness keeps its sentence for the reply.
        _ = d.command(.say("hello"), at: D.at(13))
        #expect(d.cues.last?.text == "hello")
        d.battery = 80
        let ready = try #require(d.command(.readiness, at: D.at(13)))
        let sentence = "GPS 3D fix. No heart rate strap. Battery 80 percent. 2 runs waiting for upload."
        #expect(ready.map(\.readiness) == .success(sentence))
        #expect(d.cues.last?.text == sentence)
        // A workout run names its workout.
        _ = d.command(.startWorkout(Workout(name: "intervals", items: [])), at: D.at(14))
        #expect(d.said("run started with the workout \"intervals\""))
    }

    @Test func theDeviceBatteryIsReadEveryThirtySecondsAndTheLaneHearsChanges() {
        let d = D()
        d.battery = 50
        d.send(.tick, at: D.at(0))
        #expect(d.sos == [.deviceBattery(50)])
        #expect(d.status(at: D.at(0)).deviceBatteryPercent == 50)
        d.battery = 49
        d.send(.tick, at: D.at(29))
        #expect(d.session.deviceBatteryPercent == 50, "not read again before 30 s")
        d.send(.tick, at: D.at(30))
        #expect(d.sos.last == .deviceBattery(49))
        d.send(.tick, at: D.at(60))
        #expect(d.sos.count == 2, "unchanged: not told again")
        // During a run with a clock, the coach hears it too.
        _ = d.command(.start, at: D.at(61))
        d.run(from: 61, seconds: 2)
        d.send(.tick, at: D.at(95))
        #expect(d.coachNews.contains(.deviceBattery(49, at: D.t0.adding(seconds: 95))))
        d.battery = nil
        d.send(.tick, at: D.at(130))
        #expect(d.session.deviceBatteryPercent == 49, "no reading: the last one stays")
    }

    @Test func gpsdLinesThatAreNotJSONAreCountedAndTheLaneHearsEveryPosition() {
        let d = D()
        for i in 0..<100 { d.send(.malformedGPSLine("not json \(i)", error: "unexpected character"), at: D.at(0)) }
        #expect(d.count("is not valid gpsd JSON (unexpected character)") == 2)
        #expect(d.said("skipped (100 so far)"))
        d.send(.malformedGPSLine(String(repeating: "x", count: 200), error: "too long"), at: D.at(0))
        _ = d.command(.start, at: D.at(0))
        d.run(seconds: 20)
        // Positions go to the lane on the monotonic clock with the offset back to GPS time.
        let position = d.sos.compactMap { if case .position(let p, let offset) = $0 { (p, offset) } else { nil } }.last
        #expect(position?.0.time == Timestamp(milliseconds: Int64(D.at(19) / 1_000_000)))
        #expect(position?.1 == D.t0.milliseconds - Int64(D.base / 1_000_000))
        // Every fix carries its Doppler speed: the lane judges the body's motion from it.
        #expect(position?.0.dopplerSpeed != nil)
        let positions = d.sos.count { if case .position = $0 { true } else { false } }
        for i in 20..<40 { d.send(.tick, at: D.at(i)) }
        #expect(d.sos.count { if case .position = $0 { true } else { false } } == positions, "no fix, no position")
        d.run(from: 40, seconds: 3)
        #expect(d.said("GPS fix regained after"))
        // A simulated fix or one without a time does not set the clock; a non-TPV line is still recorded.
        d.send(.gpsLine("SKY", fix: nil, receivedNs: D.at(43)), at: D.at(43))
        #expect(d.steps.contains { if case .gpsLine("SKY", nil, _) = $0 { true } else { false } })
    }

    @Test func coachCuesAreSaidAtTheTimeOfTheInputThatBroughtThem() {
        let d = D()
        _ = d.command(.start, at: D.at(0))
        d.coachCues = [Cue(time: D.t0, kind: .message, text: "first kilometre")]
        d.run(seconds: 1)
        #expect(d.cues.last?.text == "first kilometre")
        var quiet = PacerConfiguration()
        quiet.voice.enabled = false
        let e = D(configuration: quiet)
        _ = e.command(.start, at: D.at(0))
        #expect(e.cues.isEmpty, "voice off: no \"waiting for GPS\"")
        e.run(seconds: 1)
        _ = e.command(.stop, at: D.at(1))
        _ = e.command(.start, at: D.at(2))
        #expect(e.notes.last { $0.message.hasPrefix("run started") }?.message == "run started", "the clock is set: no wait")
    }

    @Test func theStatusSaysWhenTheNewestFixIsInAPrivacyZoneAndPublishesTheChangeAtOnce() {
        var configuration = PacerConfiguration()
        // 50 m around the first fix; the runner heads east at 3 m/s, out of it after about 17 s.
        configuration.upload.privacyZones = [PrivacyZone(center: Coordinate(latitude: 45.4779, longitude: 9.2241), radiusMeters: 50)]
        let d = D(configuration: configuration)
        #expect(d.status(at: D.at(0)).inPrivatePlace == nil, "no fix yet: not known")
        d.send(.gpsLine("TPV 0", fix: D.fix(0), receivedNs: D.at(0)), at: D.at(0))
        #expect(d.status(at: D.at(0)).inPrivatePlace == true)
        #expect(d.statuses.last?.inPrivatePlace == true)
        let published = d.statuses.count
        // Leaving the zone changes no word of the line, yet is published without waiting for a tick.
        for i in 1..<30 { d.send(.gpsLine("TPV \(i)", fix: D.fix(i), receivedNs: D.at(i)), at: D.at(i)) }
        #expect(d.status(at: D.at(29)).inPrivatePlace == false)
        #expect(d.statuses.count == published + 1 && d.statuses.last?.inPrivatePlace == false)
        // Without zones nothing is private.
        let open = D()
        open.send(.gpsLine("TPV 0", fix: D.fix(0), receivedNs: D.at(0)), at: D.at(0))
        #expect(open.status(at: D.at(0)).inPrivatePlace == false)
    }
}
