import PacerConfig
import PacerCore
import Testing
@testable import PacerSession

/// Plays the pipeline's executor for `RunSession`, in memory: it answers each effect the way
/// `RunSessionExecutor` does, with the core's `RunTracker` standing in for the run's recording
/// and the store's answers set by the test. It keeps every other action for the test to read.
final class SessionDriver {
    static let second: UInt64 = 1_000_000_000
    static let t0 = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!
    /// CLOCK_MONOTONIC at run second 0.
    static let base: UInt64 = 1_000 * second

    var session: RunSession
    private var tracker: RunTracker?
    private var runID: Int64?
    private var uuid: String?
    private var runsBegun = 0
    private var nextRunID: Int64 = 1
    /// A timed item came while the store refused the run's row: the next write tries again.
    private var rowOwed = false

    /// The store refuses every write (a full disk) while this is set.
    var storeProblem: String?
    /// What `continueRun` answers: nil continues the run.
    var continueFailure: String?
    var battery: Int?
    var runsWaiting: Int? = 2
    var deleteOutcome = DeleteOutcome.deleted
    /// The cues the coach "decides" with the next step, as a recording hands them back.
    var coachCues: [Cue] = []

    private(set) var notes: [SessionNote] = []
    private(set) var cues: [Cue] = []
    private(set) var statuses: [DaemonStatus] = []
    private(set) var replies: [Result<DaemonStatus, CommandFailure>] = []
    private(set) var sos: [SOSHandOff] = []
    private(set) var uplink: [UplinkHandOff] = []
    private(set) var heartRateOutsideRuns: [Int] = []
    /// Every step the session asked of the recording, in order.
    private(set) var steps: [RecordingStep] = []
    private(set) var coachNews: [CoachNews] = []
    /// What each run begun follows (nil: a free run), in order.
    private(set) var begun: [FollowedWorkout?] = []
    /// Race mode as the session asked to keep it across a restart (nil: off), in order.
    private(set) var raceModes: [(raceID: String, runUUID: String?)?] = []

    init(configuration: PacerConfiguration = PacerConfiguration(), resumable: ResumePolicy? = nil) {
        session = RunSession(configuration: configuration, resumable: resumable)
    }

    static func at(_ second: Int) -> UInt64 { UInt64(Int64(base) + Int64(second) * Int64(Self.second)) }

    /// A 3D fix for run second `i`, heading east at `speed`.
    static func fix(_ i: Int, speed: Double = 3, mode: GPSFix.Mode = .threeD) -> GPSFix {
        GPSFix(time: t0.adding(seconds: Double(i)), mode: mode, latitude: 45.4779, longitude: 9.2241 + Double(i) * speed / 78_000,
               speed: speed, track: 90, eph: 5)
    }

    func send(_ input: RunInput, at nowNs: UInt64) {
        for action in session.handle(input, now: nowNs) { execute(action, nowNs) }
    }

    @discardableResult
    func command(_ command: RunCommand, at nowNs: UInt64) -> Result<DaemonStatus, CommandFailure>? {
        let before = replies.count
        send(.command(command), at: nowNs)
        #expect(replies.count == before + 1, "\(command) answered once")
        return replies.last
    }

    /// One fix per second from run second `from`, received on the second, and a tick after each.
    func run(from: Int = 0, seconds: Int, speed: Double = 3) {
        for i in from..<(from + seconds) {
            send(.gpsLine("TPV \(i)", fix: Self.fix(i, speed: speed), receivedNs: Self.at(i)), at: Self.at(i))
            send(.tick, at: Self.at(i) + 1)
        }
    }

    func key(_ action: ButtonKeyEvent.Action, at nowNs: UInt64, sosAsking: Bool = false) {
        send(.buttonKey(ButtonKeyEvent(keyCode: 28, action: action, time: .nanoseconds(Int64(nowNs))), sosAsking: sosAsking), at: nowNs)
    }

    /// Down, and up `heldNs` later, with the loop's looks at the deadlines in between and after.
    func click(at nowNs: UInt64, heldNs: UInt64 = 100_000_000, sosAsking: Bool = false) {
        key(.press, at: nowNs, sosAsking: sosAsking)
        var t = nowNs
        while let due = session.buttonDeadlineNs, due <= nowNs + heldNs, due > t {
            t = due
            send(.buttonsDue(sosAsking: sosAsking), at: t)
        }
        key(.release, at: nowNs + heldNs, sosAsking: sosAsking)
        if let due = session.buttonDeadlineNs { send(.buttonsDue(sosAsking: sosAsking), at: max(due, nowNs + heldNs)) }
    }

    func said(_ text: String) -> Bool { notes.contains { $0.message.contains(text) } }
    func count(_ text: String) -> Int { notes.count { $0.message.contains(text) } }
    func status(at nowNs: UInt64) -> DaemonStatus { session.status(nowNs: nowNs) }

    // MARK: The executor's part

    private func execute(_ action: RunAction, _ nowNs: UInt64) {
        switch action {
        case .note(let note): notes.append(note)
        case .say(let cue, _): cues.append(cue)
        case .publishStatus(let status): statuses.append(status)
        case .reply(let reply): replies.append(reply)
        case .toSOS(let handOff): sos.append(handOff)
        case .toUplink(let handOff): uplink.append(handOff)
        case .beginRun(let tracking, _, let followed):
            begun.append(followed)
            runsBegun += 1
            tracker = RunTracker(configuration: tracking)
            runID = nil
            uuid = "run-uuid-\(runsBegun)"
            send(.runBegun(progress), at: nowNs)
        case .continueRun(let id, let tracking, _):
            if let continueFailure {
                send(.runContinued(runID: id, .failure(StoreRefusal(continueFailure))), at: nowNs)
            } else {
                tracker = RunTracker(configuration: tracking)
                runID = id
                uuid = "interrupted-uuid"
                send(.runContinued(runID: id, .success(progress)), at: nowNs)
            }
        case .record(let step):
            guard tracker != nil else { return }
            steps.append(step)
            let result = perform(step)
            let outcome = RecordingOutcome(result, progress: progress, cues: coachCues)
            coachCues = []
            send(.recorded(step, outcome), at: nowNs)
            if case .finish = step, case .success = result { tracker = nil }
        case .readDeviceBattery:
            send(.deviceBattery(battery), at: nowNs)
        case .gatherReadiness:
            send(.readinessFacts(batteryPercent: battery, runsWaiting: runsWaiting), at: nowNs)
        case .deleteRun(let id):
            send(.runDeleted(runID: id, deleteOutcome), at: nowNs)
        case .heartRateOutsideRun(let bpm, _):
            heartRateOutsideRuns.append(bpm)
        case .raceMode(let raceID, let runUUID):
            raceModes.append(raceID.map { ($0, runUUID) })
        }
    }

    private var progress: RecordingProgress {
        RecordingProgress(runID: runID, uuid: uuid, isPaused: tracker?.isPaused ?? false, distance: tracker?.summary.distance ?? 0,
                          movingTime: tracker?.summary.movingTime ?? 0, lastSampleTime: tracker?.lastSample?.time)
    }

    /// As `RunRecording`: the run's row comes with its first timed item, and a refused write
    /// keeps what it had in memory.
    private func perform(_ step: RecordingStep) -> Result<[TrackerEvent], StoreRefusal> {
        var events: [TrackerEvent] = []
        var timed = false
        switch step {
        case .gpsLine(_, let fix, _):
            events = fix.map { tracker!.ingest($0) } ?? []
            timed = events.contains { if case .sample = $0 { true } else { false } }
        case .heartRate(_, let sample, _, _):
            events = sample.map { tracker!.ingest($0) } ?? []
            timed = sample != nil
        case .control(let control, _):
            events = tracker!.apply(control)
        case .advance(let time):
            return .success(tracker!.advance(to: time))
        case .commit(let force):
            if let storeProblem, force || runID != nil { return .failure(StoreRefusal(storeProblem)) }
            if force { timed = rowOwed } else { return .success([]) }
        case .finish:
            if let storeProblem { return .failure(StoreRefusal(storeProblem)) }
            return .success(tracker!.finish())
        case .coach(let news):
            coachNews.append(news)
            return .success([])
        }
        if timed || rowOwed, runID == nil {
            if let storeProblem {
                rowOwed = true
                return .failure(StoreRefusal(storeProblem))
            }
            rowOwed = false
            runID = nextRunID
            nextRunID += 1
        }
        return .success(events)
    }
}
