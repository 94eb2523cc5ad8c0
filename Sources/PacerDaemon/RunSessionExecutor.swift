import BlueZ
import CloudSync
import FoundationEssentials
import GPSD
import PacerConfig
import PacerContract
import PacerCore
import PacerReplay
import PacerSession
import Recording
import SOS
import Store
import Systemd
import Threads
import Uplink

/// The live pipeline's executor: gpsd lines, strap events, keys, commands and ticks in; the
/// decisions are `RunSession`'s, and this carries out its actions (the run's recording and the
/// store, the journal, speech, STATUS=, the SOS lane and the uplink) and hands what comes of
/// them back to it as inputs.
///
/// Owned by the pipeline thread and only ever used there, so it needs no locks. Each gpsd line is
/// decoded here, recorded raw and then fed through `RunRecording`, the same path `pacerctl replay
/// --record` takes, so replaying a run's raw lines gives exactly what was stored.
final class RunSessionExecutor {
    private(set) var session: RunSession
    let store: RunStore
    private let log: DaemonLog
    private let decoder = GPSDecoder()
    /// The run being recorded or closed.
    private var recording: RunRecording?
    /// The run that was interrupted when pacerd last stopped, until the session decides on it.
    private let resumeCandidate: StoredRun?
    private var powerSupply: PowerSupply?
    /// The training plan from the sync thread; the session gets it with today's date.
    private var devicePlan: DevicePlan?
    /// The configuration as the file says, and the units of the account that owns the device:
    /// the session runs with the file's settings in the account's units.
    private var fileConfiguration: PacerConfiguration
    private var accountUnits: String?
    /// The wall clock (ms since the epoch): "today" in the plan's timezone is read from it.
    var wallClockMs: () -> Int64 = { WallClock.milliseconds() }

    /// Called whenever the status line changes (STATUS=).
    var onStatusChange: (DaemonStatus) -> Void = { _ in }
    /// Called with each cue, and CLOCK_MONOTONIC of the input that triggered it (for the cue
    /// latency the speech side reports).
    var onCue: (Cue, UInt64) -> Void = { _, _ in }
    /// The SOS lane: positions, motion and the run's state go to it (strap notifications reach
    /// it directly from HeartRateService, not through here).
    var toSOS: (LaneInput) -> Void = { _ in }
    /// Whether the SOS lane waits for an answer to "Are you OK?" (any short or long press answers).
    var sosIsAsking: () -> Bool = { false }
    /// The uplink: woken when a run is finished, fed the live position while one records.
    var toUplink: (Uplink.Input) -> Void = { _ in }
    /// A valid strap reading outside runs, with its wall-clock time (ms): the heartbeat's `hr_daily`.
    var heartRateOutsideRun: (Int, Int64) -> Void = { _, _ in }

    /// `startedNs` is CLOCK_MONOTONIC now: the resume candidate's window closes from it.
    init(configuration: PacerConfiguration, store: RunStore, log: DaemonLog, resumeCandidate: StoredRun? = nil, startedNs: UInt64) {
        self.store = store
        self.log = log
        self.resumeCandidate = resumeCandidate
        let resumable = resumeCandidate.map { run in
            ResumePolicy(runID: run.id, lastSampleTime: run.endTime ?? run.startTime, windowSeconds: RunRecording.resumeWindowSeconds, startedNs: startedNs)
        }
        session = RunSession(configuration: configuration, resumable: resumable)
        powerSupply = PowerSupply(configuration.battery)
        fileConfiguration = configuration
    }

    var configuration: PacerConfiguration { session.configuration }

    func status(nowNs: UInt64) -> DaemonStatus { session.status(nowNs: nowNs) }

    /// When a held button next needs a look (a very long press fires while still held).
    var buttonDeadlineNs: UInt64? { session.buttonDeadlineNs }

    // MARK: Inputs

    func handle(_ input: DaemonInput, nowNs: UInt64) {
        switch input {
        case .gpsLine(let line, let receivedNs):
            do {
                let fix: GPSFix? = if case .fix(let fix) = try decoder.decode(line) { fix } else { nil }
                run(.gpsLine(line, fix: fix, receivedNs: receivedNs), nowNs)
            } catch {
                run(.malformedGPSLine(line, error: "\(error)"), nowNs)
            }
        case .gpsLink(let link):
            run(.gpsLink(link), nowNs)
        case .strap(.notification(_, let value, let receivedNs)):
            run(.strapNotification(value, receivedNs: receivedNs), nowNs)
        case .strap(let event):
            if let signal = Self.signal(event) { run(.strap(signal), nowNs) }
        case .strapChoice(let choice):
            let source: StrapSelection.Source = switch choice.source {
            case .config: .config
            case .paired: .paired
            case .none: .none
            }
            run(.strapChoice(StrapSelection(straps: choice.straps.map(\.text), source: source, adapter: choice.adapter)), nowNs)
        case .command(let command, let reply):
            refreshToday(nowNs)
            var answered = false
            run(.command(command), nowNs) { result in
                answered = true
                reply(result)
            }
            // Every command is answered once, even should the session have left one unanswered.
            if !answered { reply(.failure(CommandFailure(code: .internalError, message: "the command was not answered"))) }
        case .buttonKey(let key):
            refreshToday(nowNs)
            run(.buttonKey(key, sosAsking: sosIsAsking()), nowNs)
        case .buttonsReset:
            run(.buttonsReset, nowNs)
        case .reload(let newConfiguration):
            powerSupply = PowerSupply(newConfiguration.battery)
            fileConfiguration = newConfiguration
            run(.reload(newConfiguration.following(accountUnits: accountUnits)), nowNs)
        case .accountUnits(let units):
            accountUnits = units
            let following = fileConfiguration.following(accountUnits: units)
            if following != session.configuration { run(.reload(following), nowNs) }
        case .plan(let plan):
            devicePlan = plan
            run(.plan(planToday()), nowNs)
        case .raceReply(let raceID, let reply):
            run(.raceReply(raceID: raceID, reply), nowNs)
        case .races(let races):
            upcomingRaces = races
            remindOfRaces(nowNs)
        case .shutdown(let done):
            run(.shutdown, nowNs)
            done()
        }
    }

    /// Once a second, whatever arrives.
    func tick(nowNs: UInt64) {
        refreshToday(nowNs)
        remindOfRaces(nowNs)
        run(.tick, nowNs)
    }

    // MARK: Race mode across a restart

    /// Race mode of the run being recorded, kept beside the store (`race-mode.json`).
    private lazy var raceModeFile = RaceModeFile(storePath: store.path, log: log)

    /// The run continued was in race mode: it goes on, with the race as the last sync has it.
    private func continueRace(_ raceID: String, replayed: [TrackerEvent], _ nowNs: UInt64) {
        let race: DeviceRace?
        do {
            race = try CloudSync.lastSync(storePath: store.path)?.sync.sections.races?.races.first { $0.id == raceID }
        } catch {
            log(.warning, "race", "race mode cannot go on with the continued run: the last sync cannot be read (\(error))", fields: ["RACE_ID": raceID])
            return
        }
        guard let race else {
            log(.warning, "race", "race mode cannot go on with the continued run: race \(raceID) is no longer among the runner's races", fields: ["RACE_ID": raceID])
            return
        }
        do {
            run(.raceContinued(try RaceChoice.mode(race), replayed: replayed), nowNs)
        } catch {
            log(.warning, "race", "race mode cannot go on with the continued run: the course of \(race.name) cannot be run (\(error))", fields: ["RACE_ID": raceID])
        }
    }

    // MARK: Race reminders

    /// The races of the last sync, soonest first.
    private var upcomingRaces: [UpcomingRace] = []
    /// The races whose reminder was said, kept beside the store (`race-reminders.json`).
    private lazy var reminders = RaceReminderFile(storePath: store.path, log: log)

    /// "The race Naviglio 10k starts in 15 minutes, bib 12.", once per race, `[race] reminder_min`
    /// before its start, read from the wall clock (the pipeline's own clock is GPS time, which a
    /// device waiting at the start may not have yet).
    private func remindOfRaces(_ nowNs: UInt64) {
        guard !upcomingRaces.isEmpty, configuration.race.reminderMinutes > 0 else { return }
        let due = RaceReminder.due(upcomingRaces, said: reminders.said, nowMs: wallClockMs(), minutes: configuration.race.reminderMinutes)
        guard !due.isEmpty else { return }
        for reminder in due {
            log(.notice, "race", "reminder: \(reminder.text)", fields: ["RACE_ID": reminder.raceID])
            if configuration.voice.enabled { onCue(Cue(time: Timestamp(milliseconds: wallClockMs()), kind: .notice, text: reminder.text), nowNs) }
        }
        reminders.note(due.map(\.raceID), keeping: upcomingRaces.map(\.id))
    }

    /// The plan as the session needs it: the sessions it can run, today's date in the plan's
    /// timezone, and those a stored run followed already.
    private func planToday() -> PlanToday {
        guard let devicePlan else { return .none }
        let followed: Set<String>
        do {
            followed = try store.plannedSessionsFollowed(among: devicePlan.sessions.filter { $0.workout != nil }.map(\.id))
        } catch {
            log(.warning, "plan", "cannot tell which planned sessions were run already (\(error)); a start takes today's first")
            followed = []
        }
        return devicePlan.today(PlanCalendar.localDate(epochMs: wallClockMs(), timezone: devicePlan.timezone), followed: followed)
    }

    /// At midnight in the plan's timezone (or when the clock is set), the session hears the new date.
    private func refreshToday(_ nowNs: UInt64) {
        guard let devicePlan, let known = session.plan.today else { return }
        if PlanCalendar.localDate(epochMs: wallClockMs(), timezone: devicePlan.timezone) != known { run(.plan(planToday()), nowNs) }
    }

    func advanceButtons(nowNs: UInt64) {
        guard session.buttonDeadlineNs != nil else { return }
        run(.buttonsDue(sosAsking: sosIsAsking()), nowNs)
    }

    private static func signal(_ event: StrapEvent) -> StrapSignal? {
        switch event {
        case .unavailable(let reason): .unavailable(reason: reason)
        case .searching(let address): .searching(address: address.text)
        case .connectFailed(let address, let reason): .connectFailed(address: address.text, reason: reason)
        case .connected(let address, let name): .connected(address: address.text, name: name)
        case .battery(let address, let percent): .battery(address: address.text, percent: percent)
        case .disconnected(let address, let reason): .disconnected(address: address.text, reason: reason)
        case .notification: nil
        }
    }

    // MARK: Actions

    /// Hands one input to the session and carries out its actions; an action's outcome goes
    /// back in at once, on the same reading of the clock.
    private func run(_ input: RunInput, _ nowNs: UInt64, reply: (Result<DaemonStatus, CommandFailure>) -> Void = { _ in }) {
        for action in session.handle(input, now: nowNs) { execute(action, nowNs, reply: reply) }
    }

    private func execute(_ action: RunAction, _ nowNs: UInt64, reply: (Result<DaemonStatus, CommandFailure>) -> Void) {
        switch action {
        case .note(let note):
            log(JournalPriority(rawValue: note.level.rawValue) ?? .info, note.component, note.message, runID: note.runID, fields: note.fields)
        case .say(let cue, let atNs):
            onCue(cue, atNs)
        case .publishStatus(let status):
            onStatusChange(status)
        case .reply(let result):
            reply(result)
        case .toSOS(let handOff):
            toSOS(Self.laneInput(handOff))
        case .toUplink(let handOff):
            toUplink(Self.uplinkInput(handOff))
        case .beginRun(let tracking, let coach, let followed):
            let begun = RunRecording(store: store, configuration: tracking, coach: coach, uuid: UUID().uuidString.lowercased(), following: followed)
            recording = begun
            run(.runBegun(Self.progress(begun)), nowNs, reply: reply)
        case .continueRun(let runID, let tracking, let coach):
            let result: Result<RecordingProgress, StoreRefusal>
            var replayed: [TrackerEvent] = []
            let racing = raceModeFile.read().flatMap { $0.runUUID == resumeCandidate?.uuid ? $0.raceID : nil }
            if let candidate = resumeCandidate, candidate.id == runID {
                do {
                    let continued = try RunRecording.resuming(candidate, store: store, configuration: tracking, coach: coach,
                                                              replayed: { if racing != nil { replayed += $0 } })
                    recording = continued
                    result = .success(Self.progress(continued))
                } catch {
                    result = .failure(StoreRefusal("\(error)"))
                }
            } else {
                result = .failure(StoreRefusal("no interrupted run \(runID) to continue"))
            }
            run(.runContinued(runID: runID, result), nowNs, reply: reply)
            if case .success = result, let racing { continueRace(racing, replayed: replayed, nowNs) }
        case .record(let step):
            // Taken out while it works, so that its batch is not copied on every line.
            guard var current = recording else { return }
            recording = nil
            let outcome = Self.perform(step, on: &current)
            recording = consume current
            run(.recorded(step, outcome), nowNs, reply: reply)
            // Closed: kept only while the session still had something to tell its coach.
            if case .finish = step, case .success = outcome.result { recording = nil }
        case .readDeviceBattery:
            run(.deviceBattery(powerSupply?.capacityPercent()), nowNs, reply: reply)
        case .gatherReadiness:
            run(.readinessFacts(batteryPercent: powerSupply?.capacityPercent(), runsWaiting: try? store.runsWaitingForUpload()), nowNs, reply: reply)
        case .deleteRun(let runID):
            let outcome: DeleteOutcome
            do {
                try store.deleteRun(runID)
                outcome = .deleted
            } catch {
                if case .noSuchRun = error { outcome = .noSuchRun } else { outcome = .failed("\(error)") }
            }
            run(.runDeleted(runID: runID, outcome), nowNs, reply: reply)
        case .raceMode(let raceID, let runUUID):
            raceModeFile.write(raceID.map { RaceModeFile.Record(raceID: $0, runUUID: runUUID) })
        case .heartRateOutsideRun(let bpm, let receivedNs):
            // Received a moment ago on the monotonic clock: the wall clock then.
            heartRateOutsideRun(bpm, WallClock.milliseconds() - Int64((nowNs &- min(receivedNs, nowNs)) / 1_000_000))
        }
    }

    /// One step on the run's recording; the cues it brought are taken with it.
    private static func perform(_ step: RecordingStep, on recording: inout RunRecording) -> RecordingOutcome {
        let result: Result<[TrackerEvent], StoreRefusal>
        do throws(StoreError) {
            switch step {
            case .gpsLine(let line, let fix, _):
                recording.record(rawLine: line)
                if let fix { result = .success(try recording.ingest(.fix(fix))) } else { result = .success([]) }
            case .heartRate(let value, let sample, let time, _):
                recording.record(rawLine: HeartRateLine.line(value, time: time))
                if let sample { result = .success(try recording.ingest(.heartRate(sample))) } else { result = .success([]) }
            case .control(let control, let time):
                recording.record(rawLine: ControlLine.line(control, time: time))
                result = .success(try recording.ingest(.control(control)))
            case .advance(let time):
                result = .success(recording.advance(to: time))
            case .commit(let force):
                if force { try recording.commit() } else { try recording.commitIfDue() }
                result = .success([])
            case .finish:
                result = .success(try recording.finish())
            case .coach(let news):
                recording.coach { coach in
                    switch news {
                    case .strapBattery(let percent, let time): coach.strapBattery(percent, at: time)
                    case .deviceBattery(let percent, let time): coach.deviceBattery(percent, at: time)
                    case .storage(let full, let time): coach.storage(full: full, at: time)
                    }
                }
                result = .success([])
            }
        } catch {
            result = .failure(StoreRefusal("\(error)"))
        }
        return RecordingOutcome(result, progress: progress(recording), cues: recording.takeCues())
    }

    private static func progress(_ recording: RunRecording) -> RecordingProgress {
        RecordingProgress(runID: recording.runID, uuid: recording.uuid, isPaused: recording.isPaused, distance: recording.summary.distance,
                          movingTime: recording.summary.movingTime, lastSampleTime: recording.lastSample?.time)
    }

    private static func laneInput(_ handOff: SOSHandOff) -> LaneInput {
        switch handOff {
        case .run(let run): .run(run.map { LaneRun(id: $0.id, uuid: $0.uuid, paused: $0.paused) })
        case .position(let position, let offset): .position(position, wallMinusMonotonicMs: offset)
        case .deviceBattery(let percent): .deviceBattery(percent)
        case .answer: .answer
        }
    }

    private static func uplinkInput(_ handOff: UplinkHandOff) -> Uplink.Input {
        switch handOff {
        case .position(let position, let latitude, let longitude): .position(position, latitude: latitude, longitude: longitude)
        case .releaseHeldRun(let reason): .releaseHeldRun(reason: reason)
        case .wake(let reason): .wake(reason: reason)
        case .racePosition(let fix):
            .racePosition(RacePositionRecord(raceID: fix.raceID, time: fix.time, latitude: fix.latitude, longitude: fix.longitude, progress: fix.progress,
                                             startedAt: fix.startedAt, finishedAt: fix.finishedAt))
        }
    }
}
