import Foundation
import PacerCore
import PacerTestSupport
import Store
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The storage issue's acceptance check: a recorder (`pacerctl replay --record`, the daemon's
/// recording path) writes a replayed run into a store at a chosen pace and is killed with SIGKILL
/// at random moments, ≥ 50 times, always into the same store file. Every time: the file passes
/// `PRAGMA integrity_check`, at most 5 s of run time is lost, and reopening finds the run
/// `interrupted` with its summary rebuilt from what was durable. No run is duplicated or lost.
///
/// The kill moments come from a seeded generator; the seed is printed, and
/// `PACER_CRASH_SEED=N swift test --filter CrashRecoveryTests` repeats a sequence;
/// `PACER_CRASH_VERBOSE=1` prints every kill.
@Suite(.timeLimit(.minutes(10))) struct CrashRecoveryTests {
    /// 14 min 23 s of GPS and 15 min of 1 Hz heart rate starting at the same instant.
    static let gpsLog = PacerCtlTests.sharedData + "/sim/hairpins-1.gpsd.jsonl"
    static let heartRateLog = PacerCtlTests.sharedData + "/hr/hr-normal-1.jsonl"

    static let killedIterations = 60
    /// Most kills: the 15-minute run replays in about 0.9 s, and the kill moment is drawn
    /// uniformly over the whole process lifetime (start-up, the run, its end).
    static let fastPace = 1000.0
    /// Every fifth kill: the first 4 s of run time (before the first durable batch) last 160 ms
    /// of wall time, and the kill moment is drawn over start-up plus the first ~5 s of the run.
    static let earlyPace = 25.0
    static let earlyWindowMs = 200.0
    /// The budget (the recorder commits every 4 s of run time).
    static let lossBudgetMs: Int64 = 5000

    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// How a recorder process ended.
    enum Ending: Equatable {
        case killed
        case exited(Int32)
        case signaled(Int32)
    }

    /// One `pacerctl replay --record` process, spawned directly so that its PID stays ours (a
    /// zombie until `waitpid`) and SIGKILL can never reach another process.
    final class Recorder {
        let pid: pid_t
        let stderrPath: String
        let started = ContinuousClock.now
        private(set) var ending: Ending?

        init(db: String, pace: Double, stderrPath: String) throws {
            self.stderrPath = stderrPath
            let arguments = [PacerCtlTests.binary, "replay", "--gps", CrashRecoveryTests.gpsLog,
                             "--hr", CrashRecoveryTests.heartRateLog, "--record", db,
                             "--pace", String(pace), "--progress"]
            let errFD = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard errFD >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            defer { close(errFD) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, errFD, 2)
            // Nothing else of the test process (other tests' pipes) leaks into the child. (glibc
            // ignores a close of a descriptor that is no longer open.)
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for fd in descriptors.compactMap({ Int32($0) }) where fd > 2 && fd != errFD {
                posix_spawn_file_actions_addclose(&actions, fd)
            }
            let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { for arg in argv { free(arg) } }
            var child: pid_t = 0
            let rc = posix_spawn(&child, PacerCtlTests.binary, &actions, nil, argv, environ)
            guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
            pid = child
        }

        /// SIGKILL (unless it already ended) and reap. Idempotent: also the safety net in `defer`.
        @discardableResult
        func kill() -> Ending {
            if let ending { return ending }
            _ = Glibc.kill(pid, SIGKILL)  // our unreaped child: the PID cannot have been reused
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
            let signal = status & 0x7f
            let ended: Ending = signal == 0 ? .exited((status >> 8) & 0xff) : signal == SIGKILL ? .killed : .signaled(signal)
            ending = ended
            return ended
        }

        /// Waits for it to end by itself (a bounded wait; killed past the bound).
        func wait(atMost limit: Duration) -> Ending {
            let deadline = ContinuousClock.now + limit
            var status: Int32 = 0
            while ending == nil, ContinuousClock.now < deadline {
                let r = waitpid(pid, &status, WNOHANG)
                if r == pid {
                    let signal = status & 0x7f
                    ending = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
                } else {
                    usleep(2000)
                }
            }
            return kill()
        }

        var stderr: String {
            (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        }

        /// The run time (ms since the run's start) of the last epoch it reported ingested: only
        /// complete `t N` lines count (a line cut by the kill is not a report).
        var lastProgress: Int64? {
            var last: Int64?
            for line in stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            where line.hasPrefix("t ") {
                if let t = Int64(line.dropFirst(2)) { last = t }
            }
            return last
        }
    }

    /// What the store shows right after a kill, checked as the next recorder would see it.
    struct Outcome {
        var durableMs: Int64?
        var lossMs: Int64 = 0
    }

    enum KillOutcome {
        /// Killed before the run's first item: the run row is created with it.
        case noRun
        /// The kill came after the run was finished (its last commit, or the process had exited).
        case finished(StoredRun)
        /// Killed mid-run and, as asked, not recovered here: the next recorder's start does it.
        case leftRecording(StoredRun)
        case interrupted(StoredRun, Outcome)
    }

    /// Right after a kill, as the next recorder sees the store: integrity, exactly one new run (or
    /// none), every earlier run still there, and recovery of exactly the run this recorder started.
    static func inspectAfterKill(db: String, known: [Int64: String], ending: Ending, progress: Int64?, stderr: String,
                                 recover: Bool, context: String) throws -> KillOutcome {
        let run: StoredRun
        do {
            // Read-write, like the next recorder; closed at the end of this block so that
            // recovery happens here and not when the next recorder opens the file.
            let store = try RunStore(path: db)
            #expect(try store.integrityCheck() == "ok", "\(context)")
            let all = try store.runs(limit: 100_000)
            let new = all.filter { known[$0.id] == nil }
            #expect(new.count <= 1, "\(context): \(new.count) new runs")
            #expect(all.count == known.count + new.count, "\(context): a stored run disappeared")
            for old in all where known[old.id] != nil {
                #expect(old.uuid == known[old.id], "\(context): run \(old.id) changed identity")
                #expect(old.state != .recording, "\(context): run \(old.id) is recording again")
            }
            guard let started = new.first else {
                #expect(try store.recoverInterruptedRuns() == [], "\(context)")
                #expect(ending == .killed, "\(context): \(ending), stderr: \(stderr)")
                #expect(progress == nil, "\(context): progress \(progress ?? -1) reported but no run stored")
                return .noRun
            }
            run = started
            if ending != .killed || run.state == .finished {
                #expect(ending == .killed || ending == .exited(0), "\(context): \(ending), stderr: \(stderr)")
                #expect(run.state == .finished, "\(context): a recorder that exited left its run \(run.state)")
                #expect(try store.recoverInterruptedRuns() == [], "\(context)")
                return .finished(run)
            }
            #expect(run.state == .recording, "\(context)")
            if !recover { return .leftRecording(run) }
            let recovered = try store.recoverInterruptedRuns()
            #expect(recovered == [run.id], "\(context): recovered \(recovered), expected [\(run.id)]")
        }
        return .interrupted(run, try checkInterrupted(run.id, db: db, progress: progress, context: context))
    }

    static func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    @Test(.enabled(if: PacerCtlTests.hasSharedData))
    func sigkillAtRandomMomentsLosesAtMostFiveSecondsAndNoRun() async throws {
        let seed = ProcessInfo.processInfo.environment["PACER_CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("CrashRecoveryTests: seed \(seed) (PACER_CRASH_SEED=\(seed) repeats the draws; moments scale with the measured timing)")
        var rng = SplitMix64(state: seed)
        let verbose = ProcessInfo.processInfo.environment["PACER_CRASH_VERBOSE"] != nil

        let directory = NSTemporaryDirectory() + "pacer-crash-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let db = directory + "/pacer.db"
        let errPath = directory + "/stderr.txt"

        /// Every run the store should hold: id → uuid.
        var known: [Int64: String] = [:]

        // 1. Not killed: exits 0 with the run finished. Also measures the process's timing
        //    (start-up until the first epoch, whole lifetime) to spread the kills over.
        //    Off the cooperative pool: it waits for the recorder's whole life.
        let (startupMs, lifetimeMs, unkilledEnding, unkilledStderr) = try await offPool {
            let recorder = try Recorder(db: db, pace: Self.fastPace, stderrPath: errPath)
            defer { recorder.kill() }
            var firstEpoch: Duration?
            while firstEpoch == nil, ContinuousClock.now - recorder.started < .seconds(20) {
                if recorder.lastProgress != nil { firstEpoch = ContinuousClock.now - recorder.started } else { usleep(500) }
            }
            let ending = recorder.wait(atMost: .seconds(60))
            let lifetime = ContinuousClock.now - recorder.started
            return (Self.milliseconds(firstEpoch ?? .milliseconds(50)), Self.milliseconds(lifetime), ending, recorder.stderr)
        }
        #expect(unkilledEnding == .exited(0), "stderr: \(unkilledStderr)")
        do {
            let store = try RunStore(path: db)
            #expect(try store.recoverInterruptedRuns() == [])
            let runs = try store.runs(limit: 10)
            try #require(runs.count == 1)
            #expect(runs[0].state == .finished)
            #expect(runs[0].distance > 3000)
            known[runs[0].id] = runs[0].uuid
        }
        print("CrashRecoveryTests: unkilled recorder: first epoch after \(Int(startupMs)) ms, exit after \(Int(lifetimeMs)) ms")

        // 2. The kills.
        var maxLossMs: Int64 = 0
        var noRun = 0, beforeFirstCommit = 0, completedBeforeKill = 0, killedWithData = 0
        var leftForTheNextRecorder: (id: Int64, progress: Int64?)?
        for iteration in 1...Self.killedIterations {
            let last = iteration == Self.killedIterations
            let early = iteration % 5 == 0 && !last
            let pace = early ? Self.earlyPace : Self.fastPace
            // The last kill lands mid-run and is left for the next recorder's own recovery.
            let delayMs = last ? startupMs + Double.random(in: 0.25...0.75, using: &rng) * (lifetimeMs - startupMs)
                : early ? Double.random(in: 0...(startupMs + Self.earlyWindowMs), using: &rng)
                : Double.random(in: 0...lifetimeMs, using: &rng)
            let context = "iteration \(iteration), seed \(seed), pace \(pace), kill after \(Int(delayMs)) ms"

            let recorder = try Recorder(db: db, pace: pace, stderrPath: errPath)
            defer { recorder.kill() }
            try await Task.sleep(until: recorder.started + .microseconds(Int64(delayMs * 1000)), clock: .continuous)
            let ending = recorder.kill()
            let progress = recorder.lastProgress
            let stderr = recorder.stderr

            if verbose {
                print("CrashRecoveryTests: \(context): \(ending), last t \(progress.map(String.init) ?? "-") ms")
            }
            switch try Self.inspectAfterKill(db: db, known: known, ending: ending, progress: progress, stderr: stderr,
                                             recover: !last, context: context) {
            case .noRun:
                noRun += 1
            case .finished(let run):
                known[run.id] = run.uuid
                completedBeforeKill += 1
            case .leftRecording(let run):
                known[run.id] = run.uuid
                leftForTheNextRecorder = (run.id, progress)
            case .interrupted(let run, let outcome):
                known[run.id] = run.uuid
                maxLossMs = max(maxLossMs, outcome.lossMs)
                if outcome.durableMs == nil { beforeFirstCommit += 1 } else { killedWithData += 1 }
            }
        }

        // 3. The next recorder (not killed) recovers the last killed run itself and finishes its own.
        do {
            let (ending, recorderStderr) = try await offPool {
                let recorder = try Recorder(db: db, pace: Self.fastPace, stderrPath: errPath)
                defer { recorder.kill() }
                return (recorder.wait(atMost: .seconds(60)), recorder.stderr)
            }
            #expect(ending == .exited(0), "final run: stderr: \(recorderStderr)")
            let store = try RunStore(path: db, readOnly: true)
            #expect(try store.integrityCheck() == "ok")
            let runs = try store.runs(limit: 100_000)
            let new = runs.filter { known[$0.id] == nil }
            try #require(new.count == 1)
            #expect(new[0].state == .finished)
            known[new[0].id] = new[0].uuid
            if let left = leftForTheNextRecorder {
                #expect(recorderStderr.contains("run \(left.id) was interrupted"), "stderr: \(recorderStderr)")
                let outcome = try Self.checkInterrupted(left.id, db: db, progress: left.progress,
                                                        context: "last kill, recovered by pacerctl")
                maxLossMs = max(maxLossMs, outcome.lossMs)
                if outcome.durableMs == nil { beforeFirstCommit += 1 } else { killedWithData += 1 }
            }
        }

        // 4. No run duplicated or lost, none left recording.
        let store = try RunStore(path: db, readOnly: true)
        let runs = try store.runs(limit: 100_000)
        let startedRuns = Self.killedIterations + 2 - noRun
        #expect(runs.count == startedRuns)
        #expect(Set(runs.map(\.uuid)).count == runs.count)
        #expect(Set(runs.map(\.id)) == Set(known.keys))
        #expect(runs.allSatisfy { $0.state != .recording })
        #expect(runs.filter { $0.state == .interrupted }.count == beforeFirstCommit + killedWithData)
        #expect(beforeFirstCommit + killedWithData + completedBeforeKill + noRun == Self.killedIterations)
        #expect(maxLossMs <= Self.lossBudgetMs)
        print("CrashRecoveryTests: \(Self.killedIterations) SIGKILLs (seed \(seed)): \(killedWithData) mid-run, "
              + "\(beforeFirstCommit) after the run started but before its first durable batch, "
              + "\(noRun) before the run existed, \(completedBeforeKill) after it had finished; "
              + "max run time lost \(maxLossMs) ms (budget \(Self.lossBudgetMs) ms); \(runs.count) runs stored")
    }

    /// An interrupted run as reopened: state, lost run time within budget, summary rebuilt from
    /// the durable track, and nothing durable beyond what the recorder had reported.
    static func checkInterrupted(_ id: Int64, db: String, progress: Int64?, context: String) throws -> Outcome {
        let reopened = try RunStore(path: db, readOnly: true)
        let run = try #require(try reopened.run(id), "\(context)")
        #expect(run.state == .interrupted, "\(context)")
        let track = try reopened.track(id)
        let times = track.samples.map(\.time.milliseconds) + track.heartRate.map(\.time.milliseconds)
        let durableMs = times.max().map { $0 - run.startTime.milliseconds }
        // Run time reported ingested minus run time durable (nothing reported: nothing to lose).
        let lossMs = max(0, (progress ?? 0) - (durableMs ?? 0))
        #expect(lossMs <= lossBudgetMs, "\(context): lost \(lossMs) ms of run time (last t \(progress ?? -1), durable \(durableMs ?? -1))")
        // A commit can land between an epoch's ingestion and its progress line: one epoch ahead at most.
        #expect((durableMs ?? 0) <= (progress ?? 0) + 1000, "\(context): durable \(durableMs ?? -1) ms but reported \(progress ?? -1)")
        #expect(run.endTime?.milliseconds == run.startTime.milliseconds + (durableMs ?? 0), "\(context): end time")
        #expect(run.distance == (track.samples.last?.distance ?? 0), "\(context): distance")
        #expect(run.elapsedTime == Double(durableMs ?? 0) / 1000, "\(context): elapsed time")
        return Outcome(durableMs: durableMs, lossMs: lossMs)
    }
}
