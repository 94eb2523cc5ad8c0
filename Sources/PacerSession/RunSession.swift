import PacerConfig
import PacerContract
import PacerCore

/// The live run's decisions as a pure reducer: `handle(input, now:)` returns the actions to carry
/// out. It reads no clock (the pipeline thread reads it once per input and passes it), touches no
/// store, speaker, status socket or thread, and makes no UUID; what it needs of an effect comes
/// back as an input (`RunInput.runBegun`, `.recorded`, ...). So starting, stopping, resuming after
/// a restart, the strap, the buttons, auto-start, store failures and reloads are tested on
/// injected time. `RunSessionExecutor` (PacerDaemon) carries the actions out.
///
/// An effect that answers is always among the last actions of a `handle`: what depends on its
/// outcome is decided when the outcome comes, so the actions run in the order they were decided.
public struct RunSession: Sendable {
    public private(set) var configuration: PacerConfiguration
    private var timebase = Timebase()
    /// Where the run is. A stopped run stays `closing` while the store refuses its last writes.
    private enum RunState: Sendable {
        case idle
        case recording(RecordingProgress)
        case closing(RecordingProgress)
    }

    private var run: RunState = .idle
    private var gps = GPSStatus()
    private var malformedLines = 0
    private var storeProblem: String?
    /// Whether the interrupted run pacerd started with may still be continued; nil once decided.
    private var resumable: ResumePolicy?
    /// The heart-rate strap, on CLOCK_MONOTONIC; what goes into a run is stamped on the timebase.
    private var strap = StrapState()
    /// Notifications during a run before its first fix: they cannot be placed on its timeline.
    private var heartRateWithoutTime = 0
    private var buttons: ButtonGestureClassifier
    private var autoStart: AutoStartDetector
    private var lastSOSRun: SessionRun?
    /// Where the newest 2D/3D fix put the device, run or not: whether it is in a privacy zone.
    private var lastFixCoordinate: Coordinate?
    private var nextBatteryCheckNs: UInt64 = 0
    public private(set) var deviceBatteryPercent: Int?
    /// The sentence of the last readiness check, for the control reply.
    public private(set) var lastReadiness: String?
    private var lastStatus: DaemonStatus?
    /// How long before the first fix the run being continued was interrupted, for the journal.
    private var continuingGapSeconds = 0.0
    /// The command being handled waits for an effect's outcome before it is answered.
    private var replyOwed = false
    /// pacerd is stopping: a run that cannot be closed is lost, and the journal hears so.
    private var shuttingDown = false
    /// The training plan and today's date in its timezone (`WhatAStartStarts`).
    public private(set) var plan = PlanToday.none
    /// The planned session the run being recorded follows: followed once the run is stored.
    private var runningPlannedID: String?
    /// Race mode (`pacerctl race start`), while it is on: it lasts as long as the run.
    private var race: RaceSession?

    /// The input being handled: its time, the actions decided so far, and the effects, which go last.
    private var nowNs: UInt64 = 0
    private var actions: [RunAction] = []
    private var effects: [RunAction] = []

    public static let batteryCheckNs: UInt64 = 30_000_000_000

    /// `resumable` is the interrupted run pacerd may continue (its window closes on the monotonic clock).
    public init(configuration: PacerConfiguration, resumable: ResumePolicy? = nil) {
        self.configuration = configuration
        self.resumable = resumable
        buttons = ButtonGestureClassifier(configuration: Self.gestures(configuration))
        autoStart = AutoStartDetector(configuration: Self.autoStartSettings(configuration))
    }

    public static func gestures(_ configuration: PacerConfiguration) -> ButtonGestureConfiguration {
        ButtonGestureConfiguration(longPress: .milliseconds(Int64(configuration.longPressSeconds * 1000)),
                                   veryLongPress: .milliseconds(Int64(configuration.veryLongPressSeconds * 1000)))
    }

    static func autoStartSettings(_ configuration: PacerConfiguration) -> AutoStartConfiguration {
        AutoStartConfiguration(minimumSpeed: configuration.autoStartSpeed, sustainedSeconds: configuration.autoStartAfterSeconds)
    }

    /// When a held button next needs a look (a very long press fires while still held).
    public var buttonDeadlineNs: UInt64? {
        buttons.nextDeadline.map { duration in
            let (seconds, attoseconds) = duration.components
            return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        }
    }

    // MARK: Inputs

    public mutating func handle(_ input: RunInput, now: UInt64) -> [RunAction] {
        nowNs = now
        actions = []
        effects = []
        switch input {
        case .gpsLine(let line, let fix, let receivedNs):
            gpsLine(line, fix: fix, receivedNs: receivedNs)
        case .malformedGPSLine(let line, let error):
            // Not recorded: the run's raw log must stay a stream that replays. Noted the first
            // time and then every 100th, so a babbling receiver does not flood the journal.
            malformedLines += 1
            if malformedLines == 1 || malformedLines % 100 == 0 {
                let preview = line.count > 80 ? String(line.prefix(80)) + "…" : line
                note(SessionNote(.warning, "gps", "gpsd sent a line that is not valid gpsd JSON (\(error)); skipped (\(malformedLines) so far): \(preview)"))
            }
        case .gpsLink(let link):
            note(gps.linkChanged(to: link, server: "\(configuration.gpsHost):\(configuration.gpsPort)", runID: active?.runID))
        case .strap(let signal):
            strapSignal(signal)
        case .strapNotification(let value, let receivedNs):
            heartRateNotification(value, receivedNs: receivedNs)
        case .strapChoice(let selection):
            note(strap.select(selection))
        case .command(let command):
            replyOwed = false
            perform(command, replying: true)
        case .buttonKey(let key, let sosAsking):
            for gesture in buttons.handle(key) { perform(gesture, sosAsking: sosAsking) }
        case .buttonsReset:
            buttons.reset()
        case .buttonsDue(let sosAsking):
            for gesture in buttons.advance(to: .nanoseconds(Int64(now))) { perform(gesture, sosAsking: sosAsking) }
        case .tick:
            tick()
        case .reload(let newConfiguration):
            reload(newConfiguration)
        case .plan(let newPlan):
            plan = newPlan
        case .shutdown:
            shutDown()
        case .runBegun(let progress):
            runBegun(progress)
        case .runContinued(let runID, let result):
            runContinued(runID, result)
        case .recorded(let step, let outcome):
            recorded(step, outcome)
        case .deviceBattery(let percent):
            deviceBattery(percent)
        case .readinessFacts(let batteryPercent, let runsWaiting):
            readiness(batteryPercent: batteryPercent, runsWaiting: runsWaiting)
        case .runDeleted(let runID, let outcome):
            runDeleted(runID, outcome)
        case .raceReply(let raceID, let reply):
            raceReply(raceID, reply)
        case .raceContinued(let mode, let replayed):
            raceContinued(mode, replayed: replayed)
        }
        tellSOSTheRun()
        publishStatus(onlyIfStateChanged: !isTick(input))
        let decided = actions + effects
        actions = []
        effects = []
        return decided
    }

    private func isTick(_ input: RunInput) -> Bool {
        if case .tick = input { true } else { false }
    }

    /// The run being recorded or closed.
    private var active: RecordingProgress? {
        switch run {
        case .idle: nil
        case .recording(let progress), .closing(let progress): progress
        }
    }

    private var isRecording: Bool {
        if case .recording = run { true } else { false }
    }

    private mutating func note(_ note: SessionNote?) {
        if let note { actions.append(.note(note)) }
    }

    private mutating func record(_ step: RecordingStep) {
        effects.append(.record(step))
    }

    /// The lane names the run in its alerts; it watches whether or not one records.
    private mutating func tellSOSTheRun() {
        let current = active.flatMap { progress in progress.uuid.map { SessionRun(id: progress.runID, uuid: $0, paused: progress.isPaused) } }
        guard current != lastSOSRun else { return }
        lastSOSRun = current
        actions.append(.toSOS(.run(current)))
    }

    // MARK: GPS

    private mutating func gpsLine(_ line: String, fix: GPSFix?, receivedNs: UInt64) {
        if let fix {
            var timedFixNs: UInt64?
            if fix.mode == .twoD || fix.mode == .threeD, let time = fix.time, fix.status != .simulated {
                timebase.synchronize(gps: time, monotonicNs: receivedNs)
                timedFixNs = receivedNs
                if var position = AlertPosition(fix) {
                    // The lane runs on the monotonic clock; the offset turns it back into GPS time.
                    position.time = StrapState.monotonicTime(receivedNs)
                    actions.append(.toSOS(.position(position, wallMinusMonotonicMs: time.milliseconds - Int64(receivedNs / 1_000_000))))
                }
                if let latitude = fix.latitude, let longitude = fix.longitude { lastFixCoordinate = Coordinate(latitude: latitude, longitude: longitude) }
                if let uuid = active?.uuid, let latitude = fix.latitude, let longitude = fix.longitude {
                    actions.append(.toUplink(.position(LivePosition(time: time, latitude: latitude, longitude: longitude, accuracyMeters: fix.eph,
                                                                    speed: fix.speed, heartRate: strap.lastBpm, runUUID: uuid),
                                                       latitude: latitude, longitude: longitude)))
                }
            }
            gps.fix(mode: fix.mode, timedFixAtNs: timedFixNs)
            if let resumable, let time = fix.time, fix.mode == .twoD || fix.mode == .threeD {
                switch resumable.firstFix(at: time) {
                case .resume(let gap):
                    self.resumable = nil
                    continuingGapSeconds = gap
                    // Recording from here: the line goes into the continued run once it is open.
                    run = .recording(RecordingProgress(runID: resumable.runID, uuid: nil))
                    effects.append(.continueRun(runID: resumable.runID, tracking: configuration.tracking, coach: newCoach(workout: nil)))
                case .stayInterrupted(let reason):
                    leaveInterrupted(resumable.runID, resumable.note(leaving: reason))
                }
            }
            if active == nil, configuration.autoStart, let start = autoStart.ingest(fix) {
                note(SessionNote(.notice, "run", "moving since \(start.movingSince.iso8601): starting a run by itself ([run] auto_start)"))
                startRun(.button)
            }
        }
        guard isRecording else { return }
        record(.gpsLine(line, fix: fix, receivedNs: receivedNs))
    }

    /// The interrupted run will not be continued: it is uploaded like a finished run, so the
    /// uplink, which held it back until this was decided, may now send it.
    private mutating func leaveInterrupted(_ runID: Int64, _ why: SessionNote) {
        resumable = nil
        note(why)
        actions.append(.toUplink(.releaseHeldRun(reason: "run \(runID) stays interrupted")))
    }

    private mutating func runContinued(_ runID: Int64, _ result: Result<RecordingProgress, StoreRefusal>) {
        switch result {
        case .success(let progress):
            run = .recording(progress)
            note(SessionNote(.notice, "run", "continuing run \(runID), interrupted \(Int(continuingGapSeconds)) s before this fix", runID: runID))
            // It records again, so it is not packaged; the uplink held it back until now.
            actions.append(.toUplink(.releaseHeldRun(reason: "run \(runID) continued")))
        case .failure(let refusal):
            run = .idle
            leaveInterrupted(runID, SessionNote(.error, "run", "cannot continue run \(runID) (\(refusal)); it stays interrupted", runID: runID))
        }
    }

    private mutating func report(_ events: [TrackerEvent]) {
        let runID = active?.runID
        for event in events {
            switch event {
            case .split(let split):
                note(SessionNote(.info, "run", "split \(split.index): \(FixedDecimal.format(split.distance, decimals: 0) ?? "?") m in \(FixedDecimal.format(split.time, decimals: 1) ?? "?") s", runID: runID))
            case .lap(let lap):
                note(SessionNote(.info, "run", "lap \(lap.index): \(FixedDecimal.format(lap.distance, decimals: 0) ?? "?") m in \(FixedDecimal.format(lap.time, decimals: 1) ?? "?") s", runID: runID))
            case .gpsLost(let time):
                note(SessionNote(.warning, "gps", "GPS fix lost at \(time.iso8601)", runID: runID))
            case .gpsRegained(_, let outage):
                note(SessionNote(.info, "gps", "GPS fix regained after \(FixedDecimal.format(outage, decimals: 0) ?? "?") s; the gap is bridged", runID: runID))
            case .warning(let warning):
                note(SessionNote(.warning, "gps", warning.text, runID: runID, fields: ["WARNING_KIND": warning.kind]))
            case .sample, .motion, .fixSkipped:
                break
            }
        }
    }

    // MARK: Heart rate

    private mutating func strapSignal(_ signal: StrapSignal) {
        if case .battery(_, let percent) = signal, active != nil, let time = timebase.time(atMonotonic: nowNs) {
            record(.coach(.strapBattery(percent, at: time)))
        }
        note(strap.handle(signal, runID: active?.runID, lowBatteryPercent: configuration.coach.lowBatteryPercent))
    }

    private mutating func heartRateNotification(_ value: [UInt8], receivedNs: UInt64) {
        let (result, malformed) = strap.notification(value, receivedNs: receivedNs, runID: active?.runID)
        note(malformed)
        if active == nil, case .success(let measurement) = result, measurement.sample(at: Timestamp(milliseconds: 0)).isValid {
            actions.append(.heartRateOutsideRun(bpm: measurement.bpm, receivedNs: receivedNs))
        }
        guard isRecording else { return }
        guard let time = timebase.time(atMonotonic: receivedNs) else {
            heartRateWithoutTime += 1
            if heartRateWithoutTime == 1 { note(SessionNote(.info, "hr", "heart rate is recorded from the run's first GPS fix, which sets its clock")) }
            return
        }
        // Every packet, malformed too, goes into the raw log: a replay then decodes what the daemon decoded.
        let sample: HeartRateSample? = if case .success(let measurement) = result { measurement.sample(at: time) } else { nil }
        record(.heartRate(value, sample: sample, time: time, receivedNs: receivedNs))
    }

    // MARK: Buttons and commands

    /// Short press: start a run, or a lap while running. Long press: stop. Very long: SOS, raised by
    /// the lane from its own reading of the keys (#7).
    private mutating func perform(_ gesture: ButtonGestureEvent, sosAsking: Bool) {
        if gesture.gesture != .veryLongPress, sosAsking {
            note(SessionNote(.notice, "buttons", "button \(gesture.gesture): answers \"Are you OK?\""))
            actions.append(.toSOS(.answer))
            return
        }
        let command: RunCommand
        switch gesture.gesture {
        case .shortPress:
            guard active != nil else {
                if let refusal = startRun(.button) { note(SessionNote(.notice, "buttons", "button \(gesture.gesture): \(refusal.message)")) }
                return
            }
            command = .control(.lap)
        case .longPress: command = .stop
        case .veryLongPress:
            // The SOS lane reads the same key events and raises on its own: raising here too
            // would only wait behind this pipeline.
            return
        }
        if let refusal = perform(command, replying: false) {
            note(SessionNote(.notice, "buttons", "button \(gesture.gesture): \(refusal.message)"))
        }
    }

    /// Carries out a command or refuses it. A command whose answer waits for an effect's outcome
    /// is answered when that comes (`answerOwedReply`).
    @discardableResult
    private mutating func perform(_ command: RunCommand, replying: Bool) -> CommandFailure? {
        let refusal: CommandFailure?
        var waits = false
        switch command {
        case .status:
            refusal = nil
        case .start:
            refusal = startRun(.free)
            waits = refusal == nil
        case .startWorkout(let workout):
            refusal = startRun(.workout(workout))
            waits = refusal == nil
        case .startPlanned:
            refusal = startRun(.planned)
            waits = refusal == nil
        case .stop:
            refusal = stopRun()
            waits = refusal == nil
        case .say(let text):
            actions.append(.say(Cue(time: StrapState.monotonicTime(nowNs), kind: .message, text: text), atNs: nowNs))
            refusal = nil
        case .readiness:
            effects.append(.gatherReadiness)
            refusal = nil
            waits = true
        case .control(let control):
            refusal = apply(control)
            waits = refusal == nil
        case .startRace(let mode):
            let started = startRace(mode)
            refusal = started.0
            waits = started.waits
        case .stopRace:
            refusal = stopRace()
        case .delete(let runID):
            if runID == active?.runID {
                refusal = CommandFailure(code: .conflict, message: "run \(runID) is being recorded; stop it first")
            } else {
                effects.append(.deleteRun(runID: runID))
                refusal = nil
                waits = true
            }
        }
        guard replying else { return refusal }
        if let refusal {
            actions.append(.reply(.failure(refusal)))
        } else if waits {
            replyOwed = true
        } else {
            actions.append(.reply(.success(status(nowNs: nowNs))))
        }
        return refusal
    }

    /// The command waiting for an outcome is answered (with the status as it is now).
    private mutating func answerOwedReply() {
        guard replyOwed else { return }
        replyOwed = false
        actions.append(.reply(.success(status(nowNs: nowNs))))
    }

    /// Starts what `WhatAStartStarts` decides for the request, or says why not.
    @discardableResult
    private mutating func startRun(_ request: StartRequest) -> CommandFailure? {
        if let active {
            let message = active.runID.map { "run \($0) is already being recorded" } ?? "a run is already started (waiting for a GPS fix)"
            return CommandFailure(code: .conflict, message: message)
        }
        let workout: Workout?
        switch WhatAStartStarts.decide(request, plan: plan) {
        case .refuse(let why): return CommandFailure(code: .conflict, message: why)
        case .free: (workout, runningPlannedID) = (nil, nil)
        case .follow(let followed, let planned): (workout, runningPlannedID) = (followed, planned?.id)
        }
        run = .recording(RecordingProgress(uuid: nil))
        effects.append(.beginRun(tracking: configuration.tracking, coach: newCoach(workout: workout),
                                 following: workout.map { FollowedWorkout(name: $0.name, plannedSessionID: runningPlannedID) }))
        startingWorkout = workout
        return nil
    }

    /// The workout of the run being begun, for the journal once it has.
    private var startingWorkout: Workout?

    private mutating func runBegun(_ progress: RecordingProgress) {
        run = .recording(progress)
        if let resumable, case .stayInterrupted(let reason) = ResumePolicy.newRunStarted {
            leaveInterrupted(resumable.runID, resumable.note(leaving: reason))
        }
        note(SessionNote(.notice, "run", (timebase.isSynchronized ? "run started" : "run started; it is recorded from the first GPS fix")
            + (startingWorkout.map { " with the workout \"\($0.name)\"" } ?? "")
            + (runningPlannedID.map { " (planned session \($0) of \(plan.today ?? "today"))" } ?? "")))
        startingWorkout = nil
        if let race { actions.append(.raceMode(raceID: race.mode.id, runUUID: progress.uuid)) }
        if !timebase.isSynchronized, configuration.voice.enabled {
            // The coach speaks from the first fix, which sets the run's clock; say now why it waits.
            actions.append(.say(Cue(time: StrapState.monotonicTime(nowNs), kind: .runState, text: "Run started. Waiting for GPS."), atNs: nowNs))
        }
        answerOwedReply()
    }

    private mutating func stopRun() -> CommandFailure? {
        guard case .recording(let progress) = run else { return CommandFailure(code: .conflict, message: "no run in progress") }
        run = .closing(progress)
        record(.finish)
        return nil
    }

    private mutating func apply(_ control: RunControl) -> CommandFailure? {
        guard case .recording(let progress) = run else { return CommandFailure(code: .conflict, message: "no run in progress") }
        if control == .pause, progress.isPaused { return CommandFailure(code: .conflict, message: "the run is already paused") }
        if control == .resume, !progress.isPaused { return CommandFailure(code: .conflict, message: "the run is not paused") }
        // Recorded in the raw log where it happened, so a replay applies it at the same place.
        record(.control(control, time: timebase.time(atMonotonic: nowNs)))
        return nil
    }

    private mutating func runDeleted(_ runID: Int64, _ outcome: DeleteOutcome) {
        let refusal: CommandFailure? = switch outcome {
        case .deleted: nil
        case .noSuchRun: CommandFailure(code: .notFound, message: "no run \(runID)")
        case .failed(let error): CommandFailure(code: .internalError, message: "could not delete run \(runID): \(error)")
        }
        if let refusal {
            if replyOwed { actions.append(.reply(.failure(refusal))) }
            replyOwed = false
            return
        }
        note(SessionNote(.notice, "store", "run \(runID) deleted", runID: runID))
        answerOwedReply()
    }

    /// The coach for a new run, or none when voice is off.
    private func newCoach(workout: Workout?) -> Coach? {
        guard configuration.voice.enabled else { return nil }
        return Coach(configuration: configuration.coach, workout: workout)
    }

    /// "GPS 3D fix. Heart rate 72. Battery 80 percent. 3 runs waiting for upload."
    private mutating func readiness(batteryPercent: Int?, runsWaiting: Int?) {
        let time = StrapState.monotonicTime(nowNs)
        let cue = Coach.readiness(at: time, gps: gps.state(nowNs: nowNs).spoken, heartRate: strap.sensor.reading(at: time),
                                  batteryPercent: batteryPercent, runsWaiting: runsWaiting, plannedToday: plan.next?.workout.name)
        lastReadiness = cue.text
        actions.append(.say(cue, atNs: nowNs))
        answerOwedReply()
    }

    // MARK: Race mode

    /// Race mode on: the race's tracker from the next sample on. With no run recording, a run is
    /// started (the answer waits for it), as a runner at the start line expects.
    private mutating func startRace(_ mode: RaceMode) -> (CommandFailure?, waits: Bool) {
        if let race {
            let message = race.mode.id == mode.id ? "race mode is already on for \"\(mode.name)\""
                : "race mode is on for \"\(race.mode.name)\"; pacerctl race stop first"
            return (CommandFailure(code: .conflict, message: message), false)
        }
        var waits = false
        if active == nil {
            if let refusal = startRun(.race) { return (refusal, false) }
            waits = true
        }
        race = RaceSession(mode: mode, units: configuration.coach.units, positionEverySeconds: configuration.race.positionEverySeconds)
        let gun = mode.gunTime.map { "gun at \($0.iso8601)" } ?? "no official start: the gun is when race mode sees its first position"
        note(SessionNote(.notice, "race", "race mode on: \"\(mode.name)\" (bib \(mode.bib), \(FixedDecimal.format(mode.course.length / 1000, decimals: 2) ?? "?") km), "
                         + "\(gun); a position every \(FixedDecimal.format(configuration.race.positionEverySeconds, decimals: 1) ?? "?") s",
                         runID: active?.runID, fields: ["RACE_ID": mode.id]))
        actions.append(.raceMode(raceID: mode.id, runUUID: active?.uuid))
        return (nil, waits)
    }

    private mutating func stopRace() -> CommandFailure? {
        guard let race else { return CommandFailure(code: .conflict, message: "race mode is not on") }
        note(SessionNote(.notice, "race", "race mode off for \"\(race.mode.name)\" (pacerctl race stop); the run goes on", runID: active?.runID,
                         fields: ["RACE_ID": race.mode.id]))
        self.race = nil
        actions.append(.raceMode(raceID: nil, runUUID: nil))
        return nil
    }

    /// The run continued after a restart was in race mode: race mode goes on, its tracker fed the
    /// tracker events of the run's stored inputs (nothing said, nothing queued: that was done
    /// before the restart), so the start crossing, the cue points passed and the progress stand.
    private mutating func raceContinued(_ mode: RaceMode, replayed: [TrackerEvent]) {
        guard race == nil, isRecording else { return }
        race = RaceSession(mode: mode, units: configuration.coach.units, positionEverySeconds: configuration.race.positionEverySeconds)
        _ = race!.ingest(replayed, phrases: nil, nowNs: nowNs, queuing: false)
        let at = race!.tracker.progress.map { ", \(Int($0.rounded())) m along" } ?? ""
        note(SessionNote(.notice, "race", "race mode for \"\(mode.name)\" goes on with the continued run\(at)", runID: active?.runID,
                         fields: ["RACE_ID": mode.id]))
        actions.append(.raceMode(raceID: mode.id, runUUID: active?.uuid))
    }

    /// The cue words, when the coach speaks at all (`[voice] enabled`).
    private var racePhrases: SpokenPhrases? { configuration.voice.enabled ? SpokenPhrases(units: configuration.coach.units) : nil }

    /// The race's part of a pipeline step: the same tracker events `pacerctl replay --course` feeds it.
    private mutating func raceStep(_ events: [TrackerEvent], triggerNs: UInt64) {
        guard race != nil else { return }
        let phrases = racePhrases
        let outcome = race!.ingest(events, phrases: phrases, nowNs: nowNs)
        let runID = active?.runID, name = race!.mode.name, fields = ["RACE_ID": race!.mode.id]
        for event in outcome.events {
            switch event {
            case .started(let at):
                note(SessionNote(.notice, "race", "\(name): start line crossed at \(at.iso8601)", runID: runID, fields: fields))
            case .stage(let index, let at):
                note(SessionNote(.info, "race", "\(name): stage \(index) at \(at.iso8601)", runID: runID, fields: fields))
            case .offCourse(let at, let meters):
                note(SessionNote(.warning, "race", "\(name): off course at \(at.iso8601), \(Int(meters.rounded())) m from the route", runID: runID, fields: fields))
            case .backOnCourse(let at):
                note(SessionNote(.notice, "race", "\(name): back on course at \(at.iso8601)", runID: runID, fields: fields))
            case .finished(let result):
                let gun = result.gunSeconds.map { "gun time \(DaemonStatus.clock($0)), " } ?? ""
                note(SessionNote(.notice, "race", "\(name): finished at \(result.finishTime.iso8601): \(gun)net time \(DaemonStatus.clock(result.netSeconds))",
                                 runID: runID, fields: fields))
            case .progress, .toGo:
                break
            }
        }
        for cue in outcome.cues { actions.append(.say(cue, atNs: triggerNs)) }
        for position in outcome.positions { actions.append(.toUplink(.racePosition(position))) }
    }

    private mutating func raceReply(_ raceID: String, _ reply: RaceReply) {
        guard race?.mode.id == raceID else { return }
        if case .refused(let why) = reply, race?.refused == nil {
            note(SessionNote(.warning, "race", "the cloud takes no positions for \"\(race!.mode.name)\" (\(why)); race mode goes on on the device, "
                             + "and no more positions are queued for it", runID: active?.runID, fields: ["RACE_ID": raceID]))
        }
        let time = timebase.time(atMonotonic: nowNs) ?? StrapState.monotonicTime(nowNs)
        if let cue = race!.reply(reply, phrases: racePhrases, at: time, nowNs: nowNs) { actions.append(.say(cue, atNs: nowNs)) }
    }

    // MARK: Time

    /// Once a second: the resume window's deadline, GPS loss, a refused write retried, the battery.
    private mutating func tick() {
        if let resumable, case .stayInterrupted(let reason)? = resumable.tick(nowNs: nowNs) {
            leaveInterrupted(resumable.runID, resumable.note(leaving: reason))
        }
        if active != nil {
            if let time = timebase.time(atMonotonic: nowNs) { record(.advance(to: time)) }
            if case .closing = run { record(.finish) } else if storeProblem != nil { record(.commit(force: true)) }
        }
        if nowNs >= nextBatteryCheckNs {
            nextBatteryCheckNs = nowNs + Self.batteryCheckNs
            effects.append(.readDeviceBattery)
        }
    }

    private mutating func deviceBattery(_ percent: Int?) {
        guard let percent else { return }
        if percent != deviceBatteryPercent { actions.append(.toSOS(.deviceBattery(percent))) }
        deviceBatteryPercent = percent
        if active != nil, let time = timebase.time(atMonotonic: nowNs) { record(.coach(.deviceBattery(percent, at: time))) }
    }

    // MARK: The recording's answers

    private mutating func recorded(_ step: RecordingStep, _ outcome: RecordingOutcome) {
        switch run {
        case .idle: break
        case .recording: run = .recording(outcome.progress)
        case .closing: run = .closing(outcome.progress)
        }
        let triggerNs: UInt64 = switch step {
        case .gpsLine(_, _, let receivedNs), .heartRate(_, _, _, let receivedNs): receivedNs
        default: nowNs
        }
        for cue in outcome.cues { actions.append(.say(cue, atNs: triggerNs)) }
        switch (step, outcome.result) {
        case (.gpsLine, .success(let events)):
            report(events)
            raceStep(events, triggerNs: triggerNs)
            record(.commit(force: false))
        case (.heartRate, .success(let events)):
            report(events)
            raceStep(events, triggerNs: triggerNs)
            record(.commit(force: false))
        case (.gpsLine, .failure(let refusal)):
            storeFailed(refusal, doing: "starting the run")
            record(.commit(force: false))
        case (.heartRate, .failure(let refusal)):
            storeFailed(refusal, doing: "recording heart rate")
            record(.commit(force: false))
        case (.control(let control, _), let result):
            switch result {
            case .success(let events):
                report(events)
                raceStep(events, triggerNs: triggerNs)
            case .failure(let refusal): storeFailed(refusal, doing: "recording a \(control.rawValue)")
            }
            note(SessionNote(.info, "run", "\(control.rawValue) by the runner", runID: outcome.progress.runID))
            answerOwedReply()
        case (.advance, .success):
            break
        case (.commit, .success):
            storeRecovered()
        case (.commit, .failure(let refusal)), (.advance, .failure(let refusal)), (.coach, .failure(let refusal)):
            storeFailed(refusal, doing: "saving the run")
        case (.finish, .success):
            finished(outcome.progress)
        case (.finish, .failure(let refusal)):
            storeFailed(refusal, doing: "closing the run")
            if shuttingDown {
                note(SessionNote(.critical, "store", "stopping with run data not saved: \(storeProblem ?? "unknown error"). It is lost.", runID: outcome.progress.runID))
            }
            answerOwedReply()
        case (.coach, .success):
            break
        }
    }

    private mutating func finished(_ progress: RecordingProgress) {
        if let runID = progress.runID {
            note(SessionNote(.notice, "run", "run \(runID) stopped: \(FixedDecimal.format(progress.distance / 1000, decimals: 2) ?? "?") km, moving \(FixedDecimal.format(progress.movingTime, decimals: 0) ?? "?") s", runID: runID))
        } else {
            note(SessionNote(.notice, "run", "run stopped before any GPS fix: nothing to store"))
        }
        storeRecovered()
        if let runID = progress.runID { actions.append(.toUplink(.wake(reason: "run \(runID) finished"))) }
        // Stored, the run followed its session: the next start takes the next one planned today.
        if progress.runID != nil, let planned = runningPlannedID { plan.followed.insert(planned) }
        runningPlannedID = nil
        if let race {
            note(SessionNote(.notice, "race", "race mode for \"\(race.mode.name)\" ends with the run", runID: progress.runID))
            self.race = nil
            actions.append(.raceMode(raceID: nil, runUUID: nil))
        }
        run = .idle
        // A runner still moving when the run stops must not have a new one start by itself.
        autoStart.reset(untilStill: true)
        answerOwedReply()
    }

    // MARK: Store

    private mutating func storeFailed(_ refusal: StoreRefusal, doing what: String) {
        let text = refusal.description
        if let time = timebase.time(atMonotonic: nowNs) { record(.coach(.storage(full: true, at: time))) }
        if storeProblem != text {
            note(SessionNote(.error, "store", "\(what) failed: \(text). The run goes on and what it records is kept in memory until the store takes writes again.", runID: active?.runID))
        }
        storeProblem = text
    }

    private mutating func storeRecovered() {
        guard storeProblem != nil else { return }
        storeProblem = nil
        if let time = timebase.time(atMonotonic: nowNs) { record(.coach(.storage(full: false, at: time))) }
        note(SessionNote(.notice, "store", "the store takes writes again; recording resumed with nothing lost", runID: active?.runID))
    }

    // MARK: Lifecycle

    private mutating func reload(_ newConfiguration: PacerConfiguration) {
        if active != nil, newConfiguration.tracking != configuration.tracking {
            // The run in progress keeps the tracking settings it started with, so it stays one
            // consistent replayable result; the new ones apply from the next run.
            note(SessionNote(.notice, "config", "configuration reloaded; new tracking settings apply from the next run"))
        } else {
            note(SessionNote(.notice, "config", "configuration reloaded"))
        }
        configuration = newConfiguration
        buttons.configuration = Self.gestures(newConfiguration)
        if autoStart.configuration != Self.autoStartSettings(newConfiguration) {
            autoStart = AutoStartDetector(configuration: Self.autoStartSettings(newConfiguration))
        }
    }

    private mutating func shutDown() {
        shuttingDown = true
        switch run {
        case .idle: return
        case .recording(let progress): run = .closing(progress)
        case .closing: break
        }
        record(.finish)
    }

    // MARK: Status

    public func status(nowNs: UInt64) -> DaemonStatus {
        var status = DaemonStatus()
        status.units = configuration.units
        if let active {
            status.runID = active.runID
            status.phase = active.runID == nil ? .waitingForFix : active.isPaused ? .paused : .recording
            status.distance = active.distance
            status.movingTime = active.movingTime
            status.lastSampleTime = active.lastSampleTime
        }
        status.gps = gps.state(nowNs: nowNs)
        status.storeProblem = storeProblem
        status.strap = strap.status(nowNs: nowNs)
        status.readiness = lastReadiness
        status.deviceBatteryPercent = deviceBatteryPercent
        // The same check that keeps live positions and run points in a zone on the device.
        status.inPrivatePlace = lastFixCoordinate.map { configuration.upload.privacyZones.hides($0) }
        status.race = race?.status
        return status
    }

    /// STATUS= when the line changes. After each input only a change of state (run, phase, GPS,
    /// store) is sent at once; the distance, which moves with every fix, is brought up to date
    /// by the tick, once a second. At replay speed that is the difference between one datagram
    /// per fix and one per second.
    private mutating func publishStatus(onlyIfStateChanged: Bool) {
        let current = status(nowNs: nowNs)
        if onlyIfStateChanged, let last = lastStatus, current.sameState(as: last) { return }
        // A privacy change leaves the line as it is but must reach the heartbeat at once.
        if current.line != lastStatus?.line || current.inPrivatePlace != lastStatus?.inPrivatePlace {
            lastStatus = current
            actions.append(.publishStatus(current))
        }
    }
}
