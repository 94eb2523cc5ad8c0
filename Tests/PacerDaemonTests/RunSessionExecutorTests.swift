import BlueZ
import Foundation
import PacerConfig
import PacerCore
import PacerSession
import SOS
import Store
import Synchronization
import Systemd
import Testing
import Uplink
@testable import PacerDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The run executor in-process, on injected time: no daemon process, no gpsd, no sleeps. Each
/// test feeds it gpsd lines, strap events, key events and commands at chosen CLOCK_MONOTONIC
/// times and reads what it said (journal, status, cues, SOS lane, uplink) and what it stored.
@Suite(.timeLimit(.minutes(10))) struct RunSessionExecutorTests {
    static let t0 = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!
    static let second: UInt64 = 1_000_000_000
    /// CLOCK_MONOTONIC at the first fix: any value will do, as long as it is the same clock throughout.
    static let base: UInt64 = 1_000 * second
    static let strap = StrapAddress("A0:9E:1A:00:00:01")!

    /// What the executor sent to the journal (the log is Sendable, so this is too).
    final class JournalRecord: Sendable {
        let entries = Mutex<[(priority: JournalPriority, message: String, fields: [String: String])]>([])
    }

    /// A executor and everything it hands out, recorded.
    final class Harness {
        let directory: String
        let store: RunStore
        let executor: RunSessionExecutor
        private let record = JournalRecord()
        var statuses: [DaemonStatus] = []
        var cues: [Cue] = []
        var lane: [LaneInput] = []
        var uplink: [Uplink.Input] = []
        var sosAsking = false

        init(configuration: PacerConfiguration = PacerConfiguration(), directory: String? = nil, resumeCandidate: (RunStore) throws -> StoredRun? = { _ in nil },
             startedNs: UInt64 = RunSessionExecutorTests.base) throws {
            self.directory = try directory ?? Self.temporaryDirectory()
            store = try RunStore(path: self.directory + "/pacer.db")
            let record = self.record
            let log = DaemonLog { priority, message, fields in record.entries.withLock { $0.append((priority, message, fields)) } }
            executor = RunSessionExecutor(configuration: configuration, store: store, log: log, resumeCandidate: try resumeCandidate(store), startedNs: startedNs)
            executor.onStatusChange = { [unowned self] in statuses.append($0) }
            executor.onCue = { [unowned self] cue, _ in cues.append(cue) }
            executor.toSOS = { [unowned self] in lane.append($0) }
            executor.sosIsAsking = { [unowned self] in sosAsking }
            executor.toUplink = { [unowned self] in uplink.append($0) }
        }

        static func temporaryDirectory() throws -> String {
            var template = Array((NSTemporaryDirectory() + "pacer-executor-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
            return String(cString: made)
        }

        var journal: [String] { record.entries.withLock { $0.map(\.message) } }
        func said(_ text: String) -> Bool { journal.contains { $0.contains(text) } }
        func priority(of text: String) -> JournalPriority? { record.entries.withLock { $0.first { $0.message.contains(text) }?.priority } }

        func send(_ input: DaemonInput, at nowNs: UInt64) { executor.handle(input, nowNs: nowNs) }

        @discardableResult
        func command(_ command: RunCommand, at nowNs: UInt64) -> Result<DaemonStatus, CommandFailure> {
            let reply = Mutex<Result<DaemonStatus, CommandFailure>?>(nil)
            executor.handle(.command(command, reply: { result in reply.withLock { $0 = result } }), nowNs: nowNs)
            return reply.withLock { $0 }!
        }

        /// One 3D fix per second for `seconds` from run second `from`, heading east at `speed`; a tick after each.
        func run(from: Int = 0, seconds: Int, speed: Double = 3) {
            for i in from..<(from + seconds) {
                let nowNs = RunSessionExecutorTests.at(i)
                send(.gpsLine(RunSessionExecutorTests.tpv(i, speed: speed), receivedNs: nowNs), at: nowNs)
                executor.tick(nowNs: nowNs + 1)
            }
        }

        func press(_ action: ButtonKeyEvent.Action, at nowNs: UInt64) {
            send(.buttonKey(ButtonKeyEvent(keyCode: 28, action: action, time: .nanoseconds(Int64(nowNs)))), at: nowNs)
        }

        /// Down, and up again `heldNs` later; a release counts once it has settled, as the loop
        /// sees when it wakes at the classifier's deadline.
        func click(at nowNs: UInt64, heldNs: UInt64 = 100_000_000) {
            press(.press, at: nowNs)
            executor.advanceButtons(nowNs: nowNs + heldNs)
            press(.release, at: nowNs + heldNs)
            executor.advanceButtons(nowNs: nowNs + heldNs + 500_000_000)
        }

        func cleanUp() { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A gpsd TPV for run second `i`, moving east at `speed` m/s from a fixed start.
    static func tpv(_ i: Int, speed: Double, mode: Int = 3) -> String {
        let time = t0.adding(seconds: Double(i)).iso8601
        let lon = 9.224132983 + Double(i) * speed / (111_320 * cos(45.4779 * .pi / 180))
        return #"{"class":"TPV","device":"/dev/pts/1","mode":\#(mode),"time":"\#(time)","ept":0.005,"lat":45.477902000,"lon":\#(lon),"alt":122.3,"track":90.0,"speed":\#(speed),"eph":5.0}"#
    }

    static func at(_ i: Int) -> UInt64 { UInt64(Int64(base) + Int64(i) * Int64(second)) }

    @Test func aShortPressStartsALongPressStopsAndTheRunIsStored() throws {
        let h = try Harness()
        defer { h.cleanUp() }
        h.send(.gpsLink(.connected), at: Self.at(-2))
        h.click(at: Self.at(-2))
        #expect(h.executor.status(nowNs: Self.at(-1)).phase == .waitingForFix)
        #expect(h.said("run started; it is recorded from the first GPS fix"))
        h.run(seconds: 30)
        let recording = h.executor.status(nowNs: Self.at(30))
        #expect(recording.phase == .recording && recording.runID == 1 && recording.gps == .fix3D)
        #expect(recording.distance > 60)
        #expect(h.lane.contains { if case .run(let run?) = $0 { run.id == 1 && !run.paused } else { false } })
        #expect(h.uplink.contains { if case .position(let position, _, _) = $0 { position.run_id?.count == 36 } else { false } })
        // A second short press is a lap; a long one (held past long_press_s) stops.
        h.click(at: Self.at(31))
        #expect(h.said("lap by the runner"))
        h.click(at: Self.at(32), heldNs: 2 * Self.second)
        // The loop's next tick publishes what the settled gesture changed.
        h.executor.tick(nowNs: Self.at(35))
        #expect(h.executor.status(nowNs: Self.at(40)).phase == .idle)
        #expect(h.said("run 1 stopped:"))
        #expect(h.uplink.contains { if case .wake(let reason) = $0 { reason == "run 1 finished" } else { false } })
        #expect(try h.store.run(1)?.state == .finished)
        #expect(try h.store.track(1).samples.count >= 29)
        // STATUS= followed: idle, recording, idle. (A gesture settled by `advanceButtons` is published
        // with the next input or tick; here the first fix came first.)
        let phases = h.statuses.map(\.phase)
        #expect(phases.first == .idle && phases.contains(.recording) && phases.last == .idle, "\(phases)")
    }

    @Test func aPressWhileTheLaneAsksAnswersItInsteadOfStartingARun() throws {
        let h = try Harness()
        defer { h.cleanUp() }
        h.sosAsking = true
        h.click(at: Self.at(0))
        #expect(h.lane.contains { if case .answer = $0 { true } else { false } })
        #expect(h.executor.status(nowNs: Self.at(1)).phase == .idle)
        // The very long press is the lane's own: the pipeline does nothing with it.
        h.sosAsking = false
        h.click(at: Self.at(2), heldNs: 28 * Self.second)
        #expect(h.executor.status(nowNs: Self.at(30)).phase == .idle)
        // A reset forgets a press in progress.
        h.press(.press, at: Self.at(40))
        h.send(.buttonsReset, at: Self.at(40))
        h.press(.release, at: Self.at(40) + 100_000_000)
        h.executor.advanceButtons(nowNs: Self.at(41))
        #expect(h.executor.status(nowNs: Self.at(41)).phase == .idle)
    }

    @Test func commandsAreRefusedWhenTheyDoNotFit() throws {
        let h = try Harness()
        defer { h.cleanUp() }
        h.send(.gpsLink(.connected), at: Self.at(0))
        #expect(h.command(.stop, at: Self.at(0)) == .failure(CommandFailure(code: .conflict, message: "no run in progress")))
        #expect(h.command(.control(.pause), at: Self.at(0)) == .failure(CommandFailure(code: .conflict, message: "no run in progress")))
        #expect(h.command(.delete(runID: 9), at: Self.at(0)) == .failure(CommandFailure(code: .notFound, message: "no run 9")))
        guard case .success = h.command(.start, at: Self.at(0)) else { Issue.record("start refused"); return }
        #expect(h.command(.start, at: Self.at(0)) == .failure(CommandFailure(code: .conflict, message: "a run is already started (waiting for a GPS fix)")))
        h.run(seconds: 10)
        #expect(h.command(.start, at: Self.at(10)) == .failure(CommandFailure(code: .conflict, message: "run 1 is already being recorded")))
        #expect(h.command(.control(.resume), at: Self.at(10)) == .failure(CommandFailure(code: .conflict, message: "the run is not paused")))
        guard case .success(let paused) = h.command(.control(.pause), at: Self.at(10)) else { Issue.record("pause refused"); return }
        #expect(paused.phase == .paused)
        #expect(h.lane.last.map { if case .run(let run?) = $0 { run.paused } else { false } } == true)
        #expect(h.command(.control(.pause), at: Self.at(10)) == .failure(CommandFailure(code: .conflict, message: "the run is already paused")))
        #expect(h.command(.delete(runID: 1), at: Self.at(10)) == .failure(CommandFailure(code: .conflict, message: "run 1 is being recorded; stop it first")))
        #expect(h.command(.stop, at: Self.at(11)).map(\.phase) == .success(.idle))
        #expect(h.command(.delete(runID: 1), at: Self.at(12)).map(\.phase) == .success(.idle))
        #expect(try h.store.run(1) == nil)
        // Say and readiness speak; readiness keeps its sentence for the reply.
        _ = h.command(.say("hello"), at: Self.at(13))
        #expect(h.cues.last?.text == "hello")
        guard case .success(let ready) = h.command(.readiness, at: Self.at(13)) else { Issue.record("readiness refused"); return }
        #expect(ready.readiness?.hasPrefix("GPS 3D fix") == true)
    }

    @Test func aRunStartsByItselfWhenTheRunnerKeepsMovingAndNotAgainUntilStill() throws {
        var configuration = PacerConfiguration()
        configuration.autoStart = true
        configuration.autoStartSpeed = 2
        configuration.autoStartAfterSeconds = 10
        let h = try Harness(configuration: configuration)
        defer { h.cleanUp() }
        h.run(seconds: 5, speed: 0.2)
        #expect(h.executor.status(nowNs: Self.at(5)).phase == .idle)
        h.run(from: 5, seconds: 20, speed: 3)
        #expect(h.said("starting a run by itself ([run] auto_start)"))
        #expect(h.executor.status(nowNs: Self.at(25)).phase == .recording)
        #expect(h.command(.stop, at: Self.at(25)).map(\.phase) == .success(.idle))
        // Still moving after the stop: no new run starts by itself.
        h.run(from: 26, seconds: 30, speed: 3)
        #expect(h.executor.status(nowNs: Self.at(56)).phase == .idle)
    }

    @Test func aFlappingStrapIsLostAndFoundAndItsBpmReachesTheRun() throws {
        let h = try Harness()
        defer { h.cleanUp() }
        h.send(.strapChoice(StrapChoice(straps: [Self.strap], source: .paired, adapter: nil)), at: Self.at(0))
        #expect(h.executor.status(nowNs: Self.at(0)).strap.link == .searching)
        _ = h.command(.start, at: Self.at(0))
        // Before the first fix a notification has no place on the run's timeline.
        h.send(.strap(.connected(Self.strap, name: "Polar H10")), at: Self.at(0))
        h.send(.strap(.notification(Self.strap, value: [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02], receivedNs: Self.at(0))), at: Self.at(0))
        #expect(h.said("heart rate is recorded from the run's first GPS fix"))
        for cycle in 0..<3 {
            let from = cycle * 10
            for i in from..<(from + 5) {
                h.run(from: i, seconds: 1)
                h.send(.strap(.notification(Self.strap, value: [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02], receivedNs: Self.at(i) + 500_000_000)), at: Self.at(i) + 500_000_000)
            }
            #expect(h.executor.status(nowNs: Self.at(from + 5)).strap.text == "HR 72")
            h.send(.strap(.disconnected(Self.strap, reason: "timeout")), at: Self.at(from + 5))
            h.run(from: from + 5, seconds: 5)
            #expect(h.executor.status(nowNs: Self.at(from + 10)).strap.text == "HR strap lost, reconnecting")
            h.send(.strap(.connected(Self.strap, name: "Polar H10")), at: Self.at(from + 10))
        }
        #expect(h.journal.filter { $0.contains("disconnected (timeout); reconnecting") }.count == 3)
        #expect(h.journal.filter { $0.contains("connected again") }.count == 3)
        #expect(h.priority(of: "disconnected (timeout)") == .warning)
        h.send(.strap(.battery(Self.strap, percent: 5)), at: Self.at(31))
        h.send(.strap(.battery(Self.strap, percent: 4)), at: Self.at(31))
        #expect(h.journal.filter { $0.contains("battery low") }.count == 1)
        _ = h.command(.stop, at: Self.at(32))
        // Only what came after the first fix is stored: 3 cycles of 5 notifications.
        #expect(try h.store.track(1).heartRate.count == 15)
    }

    /// A run interrupted by a stop of pacerd, left as the store leaves it.
    static func interruptedRun(in directory: String, seconds: Int) throws {
        let h = try Harness(directory: directory)
        _ = h.command(.start, at: at(0))
        h.run(seconds: seconds)
        _ = try h.store.recoverInterruptedRuns()
    }

    @Test func anInterruptedRunContinuesWhenTheFirstFixComesWithinTheWindow() throws {
        let directory = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.interruptedRun(in: directory, seconds: 40)
        let h = try Harness(directory: directory, resumeCandidate: { try $0.run(1) })
        // Nothing is decided before a fix, however many ticks.
        for i in 0..<10 { h.executor.tick(nowNs: Self.at(100 + i)) }
        #expect(h.uplink.isEmpty)
        h.run(from: 120, seconds: 20)
        #expect(h.said("continuing run 1, interrupted"))
        #expect(h.uplink.contains { if case .releaseHeldRun(let reason) = $0 { reason == "run 1 continued" } else { false } })
        #expect(h.executor.status(nowNs: Self.at(140)).runID == 1)
        _ = h.command(.stop, at: Self.at(141))
        #expect(try h.store.runCount() == 1)
        #expect(try h.store.run(1)?.state == .finished)
    }

    @Test func anInterruptedRunStaysInterruptedPastTheWindowOrTheDeadlineOrANewRun() throws {
        for way in ["late fix", "deadline", "new run"] {
            let directory = try Harness.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try Self.interruptedRun(in: directory, seconds: 20)
            let h = try Harness(directory: directory, resumeCandidate: { try $0.run(1) }, startedNs: Self.at(0))
            switch way {
            case "late fix":
                h.run(from: 700, seconds: 1)
                #expect(h.said("run 1 stays interrupted: the first fix came "), "\(h.journal)")
                #expect(h.said(" s after its last sample"))
            case "deadline":
                h.executor.tick(nowNs: Self.at(599))
                #expect(h.uplink.isEmpty)
                h.executor.tick(nowNs: Self.at(600))
                #expect(h.said("run 1 stays interrupted: no GPS fix within 600 s of the start"))
            default:
                _ = h.command(.start, at: Self.at(1))
                #expect(h.said("run 1 stays interrupted: a new run was started"))
            }
            #expect(h.uplink.count { if case .releaseHeldRun(let reason) = $0 { reason == "run 1 stays interrupted" } else { false } } == 1, "\(way)")
            h.executor.tick(nowNs: Self.at(2000))
            #expect(h.uplink.count { if case .releaseHeldRun = $0 { true } else { false } } == 1, "\(way): decided once")
        }
    }

    @Test func aReloadMidRunKeepsTheRunsTrackingSettings() throws {
        let h = try Harness()
        defer { h.cleanUp() }
        _ = h.command(.start, at: Self.at(0))
        h.run(seconds: 10)
        var changed = PacerConfiguration()
        changed.tracking.pauseBelowSpeed += 0.1
        changed.units = .imperial
        h.send(.reload(changed), at: Self.at(10))
        #expect(h.said("configuration reloaded; new tracking settings apply from the next run"))
        #expect(h.executor.configuration.units == .imperial)
        #expect(h.executor.status(nowNs: Self.at(10)).line.contains(" mi,"))
        h.run(from: 10, seconds: 10)
        #expect(h.executor.status(nowNs: Self.at(20)).phase == .recording)
        _ = h.command(.stop, at: Self.at(21))
        // Idle, the same reload is only a reload.
        h.send(.reload(changed), at: Self.at(22))
        #expect(h.journal.last == "configuration reloaded")
    }

    @Test func linesThatAreNotGpsdJSONAreSkippedAndCounted() throws {
        let h = try Harness()
        defer { h.cleanUp() }
        h.send(.gpsLink(.connected), at: Self.at(0))
        h.send(.gpsLink(.lost(reason: "connection refused")), at: Self.at(0))
        #expect(h.priority(of: "lost gpsd at") == .warning)
        for i in 0..<100 { h.send(.gpsLine("not json \(i)", receivedNs: Self.at(0)), at: Self.at(0)) }
        #expect(h.journal.filter { $0.contains("is not valid gpsd JSON") }.count == 2)
        #expect(h.said("skipped (100 so far)"))
    }

    /// Mounting a small tmpfs needs root; elsewhere the test is skipped.
    @Test(.enabled(if: DiskFullTests.canMount, "needs root to mount a tmpfs"))
    func aFullStoreIsSaidOnceAndWhatWaitsIsWrittenWhenSpaceReturns() throws {
        let directory = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mountPoint = directory + "/small"
        mkdir(mountPoint, 0o755)
        try #require(mount("tmpfs", mountPoint, "tmpfs", 0, "size=8m") == 0)
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }
        let h = try Harness(directory: mountPoint)
        _ = h.command(.start, at: Self.at(0))
        h.run(seconds: 10)
        let filler = mountPoint + "/filler"
        try Data(count: max(0, DiskFullTests.freeBytes(mountPoint) - 24 * 1024)).write(to: URL(fileURLWithPath: filler))
        h.run(from: 10, seconds: 600)
        let full = h.executor.status(nowNs: Self.at(610))
        #expect(full.storeProblem != nil && full.line.contains("NOT SAVING"))
        // Said once per episode, however many ticks retry: the tmpfs's last few KiB can take a
        // small batch now and then, which ends an episode.
        let episodes = h.journal.filter { $0.contains("saving the run failed") || $0.contains("the store takes writes again") }
        #expect(episodes.first?.contains("saving the run failed") == true)
        #expect(zip(episodes, episodes.dropFirst()).allSatisfy { $0.contains("failed") != $1.contains("failed") }, "\(episodes)")
        #expect(h.priority(of: "saving the run failed") == .error)
        try FileManager.default.removeItem(atPath: filler)
        h.run(from: 610, seconds: 2)
        #expect(h.executor.status(nowNs: Self.at(612)).storeProblem == nil)
        #expect(h.said("recording resumed with nothing lost"))
        _ = h.command(.stop, at: Self.at(613))
        #expect(try h.store.track(1).samples.count >= 600)
        #expect(try h.store.run(1)?.state == .finished)
    }

    @Test func shutdownClosesTheRun() throws {
        let h = try Harness()
        defer { h.cleanUp() }
        _ = h.command(.start, at: Self.at(0))
        h.run(seconds: 10)
        let done = Mutex(false)
        h.send(.shutdown(done: { done.withLock { $0 = true } }), at: Self.at(10))
        #expect(done.withLock { $0 })
        #expect(try h.store.run(1)?.state == .finished)
    }

    @Test func anInterruptedRunTheStoreCannotContinueStaysInterrupted() throws {
        let directory = try Harness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.interruptedRun(in: directory, seconds: 20)
        let h = try Harness(directory: directory, resumeCandidate: { try $0.run(1) })
        // Gone before its first fix (a `pacerctl delete` from another process).
        try h.store.deleteRun(1)
        h.run(from: 30, seconds: 3)
        #expect(h.said("cannot continue run 1 ("), "\(h.journal)")
        #expect(h.priority(of: "cannot continue run 1") == .error)
        #expect(h.uplink.count { if case .releaseHeldRun(let reason) = $0 { reason == "run 1 stays interrupted" } else { false } } == 1)
        #expect(h.executor.status(nowNs: Self.at(33)).phase == .idle)
        #expect(try h.store.runCount() == 0, "nothing recorded into a run that did not continue")
    }

    /// The pipeline thread's loop on an injected clock and queue: each input is handled at the
    /// clock's reading for it, a held button's deadline cuts the wait short, the tick comes once a
    /// second, and the shutdown ends the loop once the run is closed.
    @Test func theLoopWaitsForAnInputAButtonOrTheTickAndStopsAtTheShutdown() throws {
        let h = try Harness()
        defer { h.cleanUp() }
        var now = Self.at(0)
        var queued: [(at: UInt64, input: DaemonInput)] = []
        var waits: [UInt64] = []
        var beats: [UInt64] = []
        var loop = PipelineLoop(executor: h.executor, take: { deadline in
            waits.append(deadline)
            guard !queued.isEmpty, queued[0].at <= deadline else {
                now = max(now, deadline)
                return nil
            }
            let next = queued.removeFirst()
            now = next.at
            return next.input
        }, clock: { now }, heartbeat: { beats.append($0) })
        func turn() -> Bool { loop.turn() }
        // The first tick comes at once: STATUS= from the start.
        #expect(h.statuses.map(\.line) == ["Idle, gpsd not reachable, HR strap not paired"])
        queued = [(Self.at(0) + 100_000_000, .gpsLink(.connected))]
        #expect(turn())
        #expect(waits == [Self.at(1)])
        #expect(h.statuses.last?.line == "Idle, GPS no fix, HR strap not paired")
        #expect(turn())
        #expect(waits.last == Self.at(1) && beats.last == Self.at(1), "nothing queued: the tick")
        // A click: after the release the wait ends at the debounce, not at the next tick.
        let press = Self.at(1) + 200_000_000
        queued = [(press, .buttonKey(ButtonKeyEvent(keyCode: 28, action: .press, time: .nanoseconds(Int64(press))))),
                  (press + 100_000_000, .buttonKey(ButtonKeyEvent(keyCode: 28, action: .release, time: .nanoseconds(Int64(press + 100_000_000)))))]
        #expect(turn() && turn())
        #expect(h.executor.status(nowNs: now).phase == .idle)
        #expect(turn())
        #expect(waits.last == press + 130_000_000, "the release settles after 30 ms")
        #expect(h.executor.status(nowNs: now).phase == .waitingForFix)
        let done = Mutex(false)
        queued = [(Self.at(2) + 500_000_000, .shutdown(done: { done.withLock { $0 = true } }))]
        #expect(turn())
        #expect(!turn(), "the shutdown ends the loop")
        #expect(done.withLock { $0 })
        #expect(h.said("run stopped before any GPS fix: nothing to store"))
        #expect(beats.last == Self.at(2) + 500_000_000)
    }
}
