import BlueZ
import FoundationEssentials
import GPSD
import PacerConfig
import PacerContract
import PacerCore
import PacerReplay
import PacerSession
import Recording
import SOS
import Uplink
import Store
import Systemd
import Threads

/// The live pipeline: gpsd lines, commands and ticks in; the run recorded, the status kept.
///
/// Owned by the pipeline thread and only ever used there, so it needs no locks. Each gpsd line is
/// recorded raw and then decoded and fed through `RunRecording`, the same path `pacerctl replay
/// --record` takes, so replaying a run's raw lines gives exactly what was stored.
final class RunController {
    private(set) var configuration: PacerConfiguration
    let store: RunStore
    private let log: DaemonLog
    private let decoder = GPSDecoder()
    private var timebase = Timebase()
    /// Where the run is. A stopped run stays `closing` while the store refuses its last writes.
    private enum RunState {
        case idle
        case recording(RunRecording)
        case closing(RunRecording)
    }

    private var run: RunState = .idle

    /// The run being recorded or closed, for reading.
    private var recording: RunRecording? {
        switch run {
        case .idle: nil
        case .recording(let recording), .closing(let recording): recording
        }
    }

    /// Lets `change` work on the run's recording in place: it is taken out of `run` meanwhile,
    /// so that its batch is not copied on every line. `change` must not read `run`.
    private func changeRecording<T>(_ change: (inout RunRecording) -> T) -> T? {
        switch run {
        case .idle:
            return nil
        case .recording(var recording):
            run = .idle
            defer { run = .recording(recording) }
            return change(&recording)
        case .closing(var recording):
            run = .idle
            defer { run = .closing(recording) }
            return change(&recording)
        }
    }

    private var gps = GPSStatus()
    private var malformedLines = 0
    private var storeProblem: String?

    /// The run that was interrupted when pacerd last stopped, while it may still be continued.
    /// Until that is decided, the uplink holds it back (`Uplink.start(holding:)`).
    private var resumable: (run: StoredRun, policy: ResumePolicy)?

    /// The heart-rate strap, on CLOCK_MONOTONIC; what goes into a run is stamped on the timebase instead.
    private var strap = StrapState()
    /// Notifications during a run before its first fix: they cannot be placed on its timeline.
    private var heartRateWithoutTime = 0

    private var buttons: ButtonGestureClassifier
    private var autoStart: AutoStartDetector

    /// Called whenever the status line changes (STATUS=).
    var onStatusChange: (DaemonStatus) -> Void = { _ in }
    /// Called with each cue the coach decides, and CLOCK_MONOTONIC of the input that triggered it
    /// (for the cue latency the speech side reports).
    var onCue: (Cue, UInt64) -> Void = { _, _ in }
    /// The SOS lane: positions, motion and the run's state go to it (strap notifications reach
    /// it directly from HeartRateService, not through here).
    var toSOS: (LaneInput) -> Void = { _ in }
    /// Whether the SOS lane waits for an answer to "Are you OK?" (any short or long press answers).
    var sosIsAsking: () -> Bool = { false }
    /// The uplink: woken when a run is finished, fed the live position while one records.
    var toUplink: (Uplink.Input) -> Void = { _ in }
    private var lastSOSRun: LaneRun?
    /// The workout the next run follows (`pacerctl run start --workout FILE`).
    private var workout: Workout?
    private var nextBatteryCheckNs: UInt64 = 0
    private var powerSupply: PowerSupply?
    private var lastStatus: DaemonStatus?

    /// `startedNs` is CLOCK_MONOTONIC now: the resume candidate's window closes from it.
    init(configuration: PacerConfiguration, store: RunStore, log: DaemonLog, resumeCandidate: StoredRun? = nil, startedNs: UInt64) {
        self.configuration = configuration
        self.store = store
        self.log = log
        resumable = resumeCandidate.map { run in
            (run, ResumePolicy(runID: run.id, lastSampleTime: run.endTime ?? run.startTime,
                               windowSeconds: RunRecording.resumeWindowSeconds, startedNs: startedNs))
        }
        powerSupply = PowerSupply(configuration.battery)
        buttons = ButtonGestureClassifier(configuration: Self.gestures(configuration))
        autoStart = AutoStartDetector(configuration: Self.autoStartSettings(configuration))
    }

    static func gestures(_ configuration: PacerConfiguration) -> ButtonGestureConfiguration {
        ButtonGestureConfiguration(longPress: .milliseconds(Int64(configuration.longPressSeconds * 1000)),
                                   veryLongPress: .milliseconds(Int64(configuration.veryLongPressSeconds * 1000)))
    }

    static func autoStartSettings(_ configuration: PacerConfiguration) -> AutoStartConfiguration {
        AutoStartConfiguration(minimumSpeed: configuration.autoStartSpeed, sustainedSeconds: configuration.autoStartAfterSeconds)
    }

    // MARK: Inputs

    func handle(_ input: DaemonInput, nowNs: UInt64) {
        switch input {
        case .gpsLine(let line, let receivedNs):
            ingest(line: line, receivedNs: receivedNs)
        case .gpsLink(let newLink):
            note(gps.linkChanged(to: newLink, server: "\(configuration.gpsHost):\(configuration.gpsPort)", runID: recording?.runID))
        case .strap(let event):
            strapEvent(event, nowNs: nowNs)
        case .strapChoice(let choice):
            let source: StrapSelection.Source = switch choice.source {
            case .config: .config
            case .paired: .paired
            case .none: .none
            }
            note(strap.select(StrapSelection(straps: choice.straps.map(\.text), source: source, adapter: choice.adapter)))
        case .command(let command, let reply):
            reply(perform(command, nowNs: nowNs))
        case .buttonKey(let key):
            for gesture in buttons.handle(key) { perform(gesture, nowNs: nowNs) }
        case .buttonsReset:
            buttons.reset()
        case .reload(let newConfiguration):
            reload(newConfiguration)
        case .shutdown(let done):
            shutDown(nowNs: nowNs)
            done()
        }
        tellSOSTheRun()
        publishStatus(nowNs: nowNs, onlyIfStateChanged: true)
    }

    /// "Man down" is judged only while a run records and is not paused by hand.
    private func tellSOSTheRun() {
        let current = recording.map { LaneRun(id: $0.runID, uuid: $0.uuid, paused: $0.isPaused) }
        guard current != lastSOSRun else { return }
        lastSOSRun = current
        toSOS(.run(current))
    }

    /// When a held button next needs a look (a very long press fires while still held).
    var buttonDeadlineNs: UInt64? {
        buttons.nextDeadline.map { Self.nanoseconds($0) }
    }

    func advanceButtons(nowNs: UInt64) {
        guard buttons.nextDeadline != nil else { return }
        for gesture in buttons.advance(to: .nanoseconds(Int64(nowNs))) { perform(gesture, nowNs: nowNs) }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// Short press: start a run, or a lap while running. Long press: stop. Very long: SOS, raised by
    /// the lane from its own reading of the keys (#7).
    private func perform(_ gesture: ButtonGestureEvent, nowNs: UInt64) {
        if gesture.gesture != .veryLongPress, sosIsAsking() {
            log(.notice, "buttons", "button \(gesture.gesture): answers \"Are you OK?\"")
            toSOS(.answer)
            return
        }
        let command: RunCommand
        switch gesture.gesture {
        case .shortPress: command = recording == nil ? .start : .control(.lap)
        case .longPress: command = .stop
        case .veryLongPress:
            // The SOS lane reads the same key events and raises on its own: raising here too
            // would only wait behind this pipeline.
            return
        }
        if case .failure(let failure) = perform(command, nowNs: nowNs) {
            log(.notice, "buttons", "button \(gesture.gesture): \(failure.message)")
        }
    }

    /// Once a second, whatever arrives: GPS loss is noticed, a refused write is retried.
    func tick(nowNs: UInt64) {
        if let resumable, case .stayInterrupted(let reason)? = resumable.policy.tick(nowNs: nowNs) {
            leaveInterrupted(resumable.run, resumable.policy.note(leaving: reason))
        }
        if recording != nil {
            if let now = timebase.time(atMonotonic: nowNs) {
                tellSOS(changeRecording { $0.advance(to: now) } ?? [], fixTime: now, receivedNs: nowNs)
            }
            if case .closing = run { commit(force: true, nowNs: nowNs) } else if storeProblem != nil { commit(force: true, nowNs: nowNs) }
        }
        if nowNs >= nextBatteryCheckNs {
            nextBatteryCheckNs = nowNs + Self.batteryCheckNs
            checkDeviceBattery(nowNs: nowNs)
        }
        speakCues(triggeredAt: nowNs)
        publishStatus(nowNs: nowNs)
    }

    // MARK: GPS

    private func ingest(line: String, receivedNs: UInt64) {
        let message: GPSMessage
        do {
            message = try decoder.decode(line)
        } catch {
            // Not recorded: the run's raw log must stay a stream that replays. Logged the first
            // time and then every 100th, so a babbling receiver does not flood the journal.
            malformedLines += 1
            if malformedLines == 1 || malformedLines % 100 == 0 {
                log(.warning, "gps", "gpsd sent a line that is not valid gpsd JSON (\(error)); skipped (\(malformedLines) so far): \(Self.preview(line))")
            }
            return
        }
        if case .fix(let fix) = message {
            var timedFixNs: UInt64?
            if fix.mode == .twoD || fix.mode == .threeD, let time = fix.time, fix.status != .simulated {
                timebase.synchronize(gps: time, monotonicNs: receivedNs)
                timedFixNs = receivedNs
                if var position = AlertPosition(fix) {
                    // The lane runs on the monotonic clock; the offset turns it back into GPS time.
                    position.time = StrapState.monotonicTime(receivedNs)
                    toSOS(.position(position, wallMinusMonotonicMs: time.milliseconds - Int64(receivedNs / 1_000_000)))
                }
                if let uuid = recording?.uuid, let latitude = fix.latitude, let longitude = fix.longitude {
                    toUplink(.position(LivePosition(time: time, latitude: latitude, longitude: longitude, accuracyMeters: fix.eph,
                                                    speed: fix.speed, heartRate: strap.lastBpm, runUUID: uuid),
                                       latitude: latitude, longitude: longitude))
                }
            }
            gps.fix(mode: fix.mode, timedFixAtNs: timedFixNs)
            if let resumable, let time = fix.time, fix.mode == .twoD || fix.mode == .threeD {
                switch resumable.policy.firstFix(at: time) {
                case .resume(let gap): resume(resumable.run, gapSeconds: gap)
                case .stayInterrupted(let reason): leaveInterrupted(resumable.run, resumable.policy.note(leaving: reason))
                }
            }
            if recording == nil, configuration.autoStart, let start = autoStart.ingest(fix) {
                log(.notice, "run", "moving since \(start.movingSince.iso8601): starting a run by itself ([run] auto_start)")
                _ = perform(.start, nowNs: receivedNs)
            }
        }
        guard case .recording = run else { return }
        let ingested = changeRecording { recording -> Result<[TrackerEvent], StoreError>? in
            recording.record(rawLine: line)
            guard case .fix(let fix) = message else { return nil }
            do throws(StoreError) { return .success(try recording.ingest(.fix(fix))) } catch { return .failure(error) }
        }
        switch ingested {
        case .success(let events)??:
            report(events, runID: recording?.runID)
            if case .fix(let fix) = message { tellSOS(events, fixTime: fix.time, receivedNs: receivedNs) }
        case .failure(let error)??:
            storeFailed(error, doing: "starting the run", nowNs: receivedNs)
        default:
            break
        }
        commit(force: false, nowNs: receivedNs)
        speakCues(triggeredAt: receivedNs)
    }

    /// Motion and GPS loss, their run times moved onto the monotonic clock by the fix's offset.
    private func tellSOS(_ events: [TrackerEvent], fixTime: Timestamp?, receivedNs: UInt64) {
        func ns(_ time: Timestamp) -> UInt64 {
            guard let fixTime else { return receivedNs }
            let back = max(0, fixTime.milliseconds - time.milliseconds)
            return receivedNs &- min(receivedNs, UInt64(back) * 1_000_000)
        }
        for event in events {
            switch event {
            case .motion(let moving, let time): toSOS(.motion(moving: moving, atNs: ns(time)))
            case .gpsLost(let time): toSOS(.gpsLost(atNs: ns(time)))
            case .gpsRegained: toSOS(.gpsRegained)
            default: break
            }
        }
    }

    private func resume(_ run: StoredRun, gapSeconds gap: Double) {
        do {
            self.run = .recording(try RunRecording.resuming(run, store: store, configuration: configuration.tracking, coach: newCoach(workout: nil)))
        } catch {
            return leaveInterrupted(run, SessionNote(.error, "run", "cannot continue run \(run.id) (\(error)); it stays interrupted", runID: run.id))
        }
        resumable = nil
        log(.notice, "run", "continuing run \(run.id), interrupted \(Int(gap)) s before this fix", runID: run.id)
        // It records again, so it is not packaged; the uplink held it back until now.
        toUplink(.releaseHeldRun(reason: "run \(run.id) continued"))
    }

    /// The interrupted run will not be continued: it is uploaded like a finished run, so the
    /// uplink, which held it back until this was decided, may now send it.
    private func leaveInterrupted(_ run: StoredRun, _ why: SessionNote) {
        resumable = nil
        note(why)
        toUplink(.releaseHeldRun(reason: "run \(run.id) stays interrupted"))
    }

    private func report(_ events: [TrackerEvent], runID: Int64?) {
        for event in events {
            switch event {
            case .split(let split):
                log(.info, "run", "split \(split.index): \(FixedDecimal.format(split.distance, decimals: 0) ?? "?") m in \(FixedDecimal.format(split.time, decimals: 1) ?? "?") s", runID: runID)
            case .lap(let lap):
                log(.info, "run", "lap \(lap.index): \(FixedDecimal.format(lap.distance, decimals: 0) ?? "?") m in \(FixedDecimal.format(lap.time, decimals: 1) ?? "?") s", runID: runID)
            case .gpsLost(let time):
                log(.warning, "gps", "GPS fix lost at \(time.iso8601)", runID: runID)
            case .gpsRegained(_, let outage):
                log(.info, "gps", "GPS fix regained after \(FixedDecimal.format(outage, decimals: 0) ?? "?") s; the gap is bridged", runID: runID)
            case .warning(let warning):
                log(.warning, "gps", warning.text, runID: runID, fields: ["WARNING_KIND": warning.kind])
            case .sample, .motion, .fixSkipped:
                break
            }
        }
    }

    // MARK: Heart rate

    private func strapEvent(_ event: StrapEvent, nowNs: UInt64) {
        let runID = recording?.runID
        let lowBattery = configuration.coach.lowBatteryPercent
        switch event {
        case .unavailable(let reason): note(strap.handle(.unavailable(reason: reason), runID: runID, lowBatteryPercent: lowBattery))
        case .searching(let address): note(strap.handle(.searching(address: address.text), runID: runID, lowBatteryPercent: lowBattery))
        case .connectFailed(let address, let reason):
            note(strap.handle(.connectFailed(address: address.text, reason: reason), runID: runID, lowBatteryPercent: lowBattery))
        case .connected(let address, let name): note(strap.handle(.connected(address: address.text, name: name), runID: runID, lowBatteryPercent: lowBattery))
        case .notification(_, let value, let receivedNs):
            heartRateNotification(value, receivedNs: receivedNs)
        case .battery(let address, let percent):
            if let time = timebase.time(atMonotonic: nowNs) {
                changeRecording { $0.coach { $0.strapBattery(percent, at: time) } }
            }
            note(strap.handle(.battery(address: address.text, percent: percent), runID: runID, lowBatteryPercent: lowBattery))
        case .disconnected(let address, let reason):
            note(strap.handle(.disconnected(address: address.text, reason: reason), runID: runID, lowBatteryPercent: lowBattery))
        }
    }

    private func heartRateNotification(_ value: [UInt8], receivedNs: UInt64) {
        let (result, malformed) = strap.notification(value, receivedNs: receivedNs, runID: recording?.runID)
        note(malformed)
        guard case .recording = run else { return }
        guard let time = timebase.time(atMonotonic: receivedNs) else {
            heartRateWithoutTime += 1
            if heartRateWithoutTime == 1 { log(.info, "hr", "heart rate is recorded from the run's first GPS fix, which sets its clock") }
            return
        }
        // Every packet, malformed too, goes into the raw log: a replay then decodes what the daemon decoded.
        let ingested = changeRecording { recording -> Result<[TrackerEvent], StoreError>? in
            recording.record(rawLine: HeartRateLine.line(value, time: time))
            guard case .success(let measurement) = result else { return nil }
            do throws(StoreError) { return .success(try recording.ingest(.heartRate(measurement.sample(at: time)))) } catch { return .failure(error) }
        }
        switch ingested {
        case .success(let events)??: report(events, runID: recording?.runID)
        case .failure(let error)??: storeFailed(error, doing: "recording heart rate", nowNs: receivedNs)
        default: break
        }
        commit(force: false, nowNs: receivedNs)
        speakCues(triggeredAt: receivedNs)
    }

    private func note(_ note: SessionNote?) {
        guard let note else { return }
        let priority: JournalPriority = switch note.level {
        case .critical: .critical
        case .error: .error
        case .warning: .warning
        case .notice: .notice
        case .info: .info
        }
        log(priority, note.component, note.message, runID: note.runID, fields: note.fields)
    }

    // MARK: Commands

    private func perform(_ command: RunCommand, nowNs: UInt64) -> Result<DaemonStatus, CommandFailure> {
        let refusal: CommandFailure? = switch command {
        case .status: nil
        case .start: startRun(workout: nil, nowNs: nowNs)
        case .startWorkout(let workout): startRun(workout: workout, nowNs: nowNs)
        case .stop: stopRun(nowNs: nowNs)
        case .say(let text): say(text, nowNs: nowNs)
        case .readiness: readiness(nowNs: nowNs)
        case .control(let control): apply(control, nowNs: nowNs)
        case .delete(let runID): deleteRun(runID)
        }
        speakCues(triggeredAt: nowNs)
        if let refusal { return .failure(refusal) }
        return .success(status(nowNs: nowNs))
    }

    private func startRun(workout: Workout?, nowNs: UInt64) -> CommandFailure? {
        if recording != nil {
            let message: String
            if let runID = recording?.runID { message = "run \(runID) is already being recorded" } else { message = "a run is already started (waiting for a GPS fix)" }
            return CommandFailure(code: .conflict, message: message)
        }
        run = .recording(RunRecording(store: store, configuration: configuration.tracking, coach: newCoach(workout: workout),
                                      uuid: UUID().uuidString.lowercased()))
        if let resumable, case .stayInterrupted(let reason) = ResumePolicy.newRunStarted {
            leaveInterrupted(resumable.run, resumable.policy.note(leaving: reason))
        }
        log(.notice, "run", (timebase.isSynchronized ? "run started" : "run started; it is recorded from the first GPS fix")
            + (workout.map { " with the workout \"\($0.name)\"" } ?? ""))
        if !timebase.isSynchronized, configuration.voice.enabled {
            // The coach speaks from the first fix, which sets the run's clock; say now why it waits.
            onCue(Cue(time: StrapState.monotonicTime(nowNs), kind: .runState, text: "Run started. Waiting for GPS."), nowNs)
        }
        return nil
    }

    private func stopRun(nowNs: UInt64) -> CommandFailure? {
        guard case .recording(let recording) = run else { return CommandFailure(code: .conflict, message: "no run in progress") }
        run = .closing(recording)
        commit(force: true, nowNs: nowNs)
        return nil
    }

    private func apply(_ control: RunControl, nowNs: UInt64) -> CommandFailure? {
        guard case .recording(let active) = run else { return CommandFailure(code: .conflict, message: "no run in progress") }
        let runID = active.runID
        if control == .pause, active.isPaused { return CommandFailure(code: .conflict, message: "the run is already paused") }
        if control == .resume, !active.isPaused { return CommandFailure(code: .conflict, message: "the run is not paused") }
        let line = ControlLine.line(control, time: timebase.time(atMonotonic: nowNs))
        let ingested = changeRecording { recording -> Result<[TrackerEvent], StoreError> in
            // Recorded in the raw log where it happened, so a replay applies it at the same place.
            recording.record(rawLine: line)
            do throws(StoreError) { return .success(try recording.ingest(.control(control))) } catch { return .failure(error) }
        }
        var events: [TrackerEvent] = []
        switch ingested {
        case .success(let decided)?: events = decided
        case .failure(let error)?: storeFailed(error, doing: "recording a \(control.rawValue)", nowNs: nowNs)
        case nil: break
        }
        report(events, runID: runID)
        log(.info, "run", "\(control.rawValue) by the runner", runID: runID)
        return nil
    }

    private func deleteRun(_ runID: Int64) -> CommandFailure? {
        if runID == recording?.runID {
            return CommandFailure(code: .conflict, message: "run \(runID) is being recorded; stop it first")
        }
        do {
            try store.deleteRun(runID)
        } catch {
            if case .noSuchRun = error { return CommandFailure(code: .notFound, message: "no run \(runID)") }
            return CommandFailure(code: .internalError, message: "could not delete run \(runID): \(error)")
        }
        log(.notice, "store", "run \(runID) deleted", runID: runID)
        return nil
    }

    // MARK: Voice

    /// The coach for a new run, or none when voice is off.
    private func newCoach(workout: Workout?) -> Coach? {
        guard configuration.voice.enabled else { return nil }
        return Coach(configuration: configuration.coach, workout: workout)
    }

    private func speakCues(triggeredAt ns: UInt64) {
        for cue in changeRecording({ $0.takeCues() }) ?? [] { onCue(cue, ns) }
    }

    private func say(_ text: String, nowNs: UInt64) -> CommandFailure? {
        onCue(Cue(time: StrapState.monotonicTime(nowNs), kind: .message, text: text), nowNs)
        return nil
    }

    /// "GPS 3D fix. Heart rate 72. Battery 80 percent. 3 runs waiting for upload."
    private func readiness(nowNs: UInt64) -> CommandFailure? {
        let waiting = try? store.runsWaitingForUpload()
        let cue = Coach.readiness(at: StrapState.monotonicTime(nowNs), gps: gps.state(nowNs: nowNs).spoken, heartRate: strap.sensor.reading(at: StrapState.monotonicTime(nowNs)),
                                  batteryPercent: powerSupply?.capacityPercent(), runsWaiting: waiting)
        lastReadiness = cue.text
        onCue(cue, nowNs)
        return nil
    }

    /// The sentence of the last readiness check, for the control reply.
    private(set) var lastReadiness: String?

    static let batteryCheckNs: UInt64 = 30_000_000_000

    private func checkDeviceBattery(nowNs: UInt64) {
        guard let percent = powerSupply?.capacityPercent() else { return }
        if percent != deviceBatteryPercent { toSOS(.deviceBattery(percent)) }
        deviceBatteryPercent = percent
        if let time = timebase.time(atMonotonic: nowNs) {
            changeRecording { $0.coach { $0.deviceBattery(percent, at: time) } }
        }
    }

    private(set) var deviceBatteryPercent: Int?

    // MARK: Store

    /// Commits what is due (or everything, when forced), and closes a stopped run. A refused
    /// write keeps the data in memory and is retried every tick.
    private func commit(force: Bool, nowNs: UInt64) {
        switch run {
        case .idle:
            return
        case .closing:
            let finished = changeRecording { recording -> Result<(summary: RunSummary, runID: Int64?), StoreError> in
                do throws(StoreError) {
                    try recording.finish()
                    return .success((recording.summary, recording.runID))
                } catch {
                    return .failure(error)
                }
            }
            switch finished {
            case .success(let (summary, runID))?:
                if let runID {
                    log(.notice, "run", "run \(runID) stopped: \(FixedDecimal.format(summary.distance / 1000, decimals: 2) ?? "?") km, moving \(FixedDecimal.format(summary.movingTime, decimals: 0) ?? "?") s", runID: runID)
                } else {
                    log(.notice, "run", "run stopped before any GPS fix: nothing to store")
                }
                storeRecovered(nowNs: nowNs)
                speakCues(triggeredAt: nowNs)
                if let runID { toUplink(.wake(reason: "run \(runID) finished")) }
                run = .idle
                // A runner still moving when the run stops must not have a new one start by itself.
                autoStart.reset(untilStill: true)
            case .failure(let error)?:
                storeFailed(error, doing: "closing the run", nowNs: nowNs)
            case nil:
                break
            }
        case .recording:
            let refused = changeRecording { recording -> StoreError? in
                do throws(StoreError) {
                    if force { try recording.commit() } else { try recording.commitIfDue() }
                    return nil
                } catch {
                    return error
                }
            }
            if let refused = refused ?? nil { storeFailed(refused, doing: "saving the run", nowNs: nowNs) } else { storeRecovered(nowNs: nowNs) }
        }
    }

    private func storeFailed(_ error: StoreError, doing what: String, nowNs: UInt64) {
        let text = "\(error)"
        if let time = timebase.time(atMonotonic: nowNs) {
            changeRecording { $0.coach { $0.storage(full: true, at: time) } }
        }
        if storeProblem != text {
            log(.error, "store", "\(what) failed: \(text). The run goes on and what it records is kept in memory until the store takes writes again.", runID: recording?.runID)
        }
        storeProblem = text
    }

    private func storeRecovered(nowNs: UInt64) {
        guard storeProblem != nil else { return }
        storeProblem = nil
        if let time = timebase.time(atMonotonic: nowNs) {
            changeRecording { $0.coach { $0.storage(full: false, at: time) } }
        }
        log(.notice, "store", "the store takes writes again; recording resumed with nothing lost", runID: recording?.runID)
    }

    // MARK: Lifecycle

    private func reload(_ newConfiguration: PacerConfiguration) {
        if recording != nil, newConfiguration.tracking != configuration.tracking {
            // The run in progress keeps the tracking settings it started with, so it stays one
            // consistent replayable result; the new ones apply from the next run.
            log(.notice, "config", "configuration reloaded; new tracking settings apply from the next run")
        } else {
            log(.notice, "config", "configuration reloaded")
        }
        configuration = newConfiguration
        powerSupply = PowerSupply(newConfiguration.battery)
        buttons.configuration = Self.gestures(newConfiguration)
        if autoStart.configuration != Self.autoStartSettings(newConfiguration) {
            autoStart = AutoStartDetector(configuration: Self.autoStartSettings(newConfiguration))
        }
    }

    private func shutDown(nowNs: UInt64) {
        switch run {
        case .idle: return
        case .recording(let recording): run = .closing(recording)
        case .closing: break
        }
        commit(force: true, nowNs: nowNs)
        if recording != nil {
            log(.critical, "store", "stopping with run data not saved: \(storeProblem ?? "unknown error"). It is lost.", runID: recording?.runID)
        }
    }

    // MARK: Status

    func status(nowNs: UInt64) -> DaemonStatus {
        var status = DaemonStatus()
        status.units = configuration.units
        if let active = recording {
            status.runID = active.runID
            status.phase = active.runID == nil ? .waitingForFix : active.isPaused ? .paused : .recording
            status.distance = active.summary.distance
            status.movingTime = active.summary.movingTime
            status.lastSampleTime = active.lastSample?.time
        }
        status.gps = gps.state(nowNs: nowNs)
        status.storeProblem = storeProblem
        status.strap = strap.status(nowNs: nowNs)
        status.readiness = lastReadiness
        status.deviceBatteryPercent = deviceBatteryPercent
        return status
    }

    /// STATUS= when the line changes. After each input only a change of state (run, phase, GPS,
    /// store) is sent at once; the distance, which moves with every fix, is brought up to date
    /// by the tick, once a second. At replay speed that is the difference between one datagram
    /// per fix and one per second.
    private func publishStatus(nowNs: UInt64, onlyIfStateChanged: Bool = false) {
        let current = status(nowNs: nowNs)
        if onlyIfStateChanged, let last = lastStatus, current.sameState(as: last) { return }
        if current.line != lastStatus?.line {
            lastStatus = current
            onStatusChange(current)
        }
    }

    private static func preview(_ line: String) -> String {
        line.count > 80 ? String(line.prefix(80)) + "…" : line
    }
}
