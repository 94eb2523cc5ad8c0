import BlueZ
import FoundationEssentials
import GPSD
import PacerConfig
import PacerContract
import PacerCore
import PacerReplay
import Recording
import SOS
import Uplink
import Store
import Systemd

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
    private var recording: RunRecording?
    private var stopPending = false

    private var link: GPSLink = .connecting
    private var lastFixMode: GPSFix.Mode = .notSeen
    private var lastFixNs: UInt64?
    private var malformedLines = 0
    private var storeProblem: String?

    /// The run that was interrupted when pacerd last stopped, if it can be continued: it is, when
    /// the first fix comes within `RunRecording.resumeWindowSeconds` of its last stored sample.
    private var resumeCandidate: StoredRun?
    /// CLOCK_MONOTONIC after which the candidate can no longer be continued even without a fix:
    /// GPS time runs at least as fast, so any later first fix is past the window. Until it is
    /// decided, the uplink holds the run back (`Uplink.start(holding:)`); this bounds the hold.
    private let resumeDeadlineNs = Monotonic.nanoseconds() + UInt64(RunRecording.resumeWindowSeconds * 1e9)

    /// The heart-rate strap. Its clock is CLOCK_MONOTONIC (as a Timestamp), which exists before
    /// the first fix and never jumps; what goes into a run is stamped on the timebase instead.
    private var sensor = HeartRateSensor()
    private var strapChoice = StrapChoice(straps: [], source: .none, adapter: nil)
    private var strapLink: StrapStatus.Link = .notPaired
    private var strapProblem: String?
    private var lastBpm: (bpm: Int, receivedNs: UInt64)?
    /// Notifications during a run before its first fix: they cannot be placed on its timeline.
    private var heartRateWithoutTime = 0
    private var lowBatteryReported = false

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

    /// A fix older than this no longer counts for the status line.
    static let fixStaleNs: UInt64 = 5_000_000_000

    init(configuration: PacerConfiguration, store: RunStore, log: DaemonLog, resumeCandidate: StoredRun? = nil) {
        self.configuration = configuration
        self.store = store
        self.log = log
        self.resumeCandidate = resumeCandidate
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
            linkChanged(newLink)
        case .strap(let event):
            strapEvent(event)
        case .strapChoice(let choice):
            strapChoiceChanged(choice)
        case .command(let command, let reply):
            reply(perform(command, nowNs: nowNs))
        case .buttonKey(let key):
            for gesture in buttons.handle(key) { perform(gesture, nowNs: nowNs) }
        case .buttonsReset:
            buttons.reset()
        case .reload(let newConfiguration):
            reload(newConfiguration)
        case .shutdown(let done):
            shutDown()
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
        if let candidate = resumeCandidate, nowNs >= resumeDeadlineNs {
            leaveInterrupted(candidate, .notice, "run \(candidate.id) stays interrupted: no GPS fix within \(Int(RunRecording.resumeWindowSeconds)) s of the start")
        }
        if recording != nil {
            if let now = timebase.time(atMonotonic: nowNs) {
                tellSOS(recording!.advance(to: now), fixTime: now, receivedNs: nowNs)
            }
            if storeProblem != nil || stopPending { commit(force: true) }
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
            if fix.mode == .twoD || fix.mode == .threeD, let time = fix.time, fix.status != .simulated {
                timebase.synchronize(gps: time, monotonicNs: receivedNs)
                lastFixNs = receivedNs
                if var position = AlertPosition(fix) {
                    // The lane runs on the monotonic clock; the offset turns it back into GPS time.
                    position.time = Self.monotonicTime(receivedNs)
                    toSOS(.position(position, wallMinusMonotonicMs: time.milliseconds - Int64(receivedNs / 1_000_000)))
                }
                if let uuid = recording?.uuid, let latitude = fix.latitude, let longitude = fix.longitude {
                    toUplink(.position(LivePosition(time: time, latitude: latitude, longitude: longitude, accuracyMeters: fix.eph,
                                                    speed: fix.speed, heartRate: lastBpm.map(\.bpm), runUUID: uuid),
                                       latitude: latitude, longitude: longitude))
                }
            }
            lastFixMode = fix.mode
            if let candidate = resumeCandidate, let time = fix.time, fix.mode == .twoD || fix.mode == .threeD {
                resume(candidate, at: time)
            }
            if recording == nil, configuration.autoStart, let start = autoStart.ingest(fix) {
                log(.notice, "run", "moving since \(start.movingSince.iso8601): starting a run by itself ([run] auto_start)")
                _ = perform(.start, nowNs: receivedNs)
            }
        }
        // In place (`recording!`): a copy would duplicate the batch on every line.
        guard recording != nil, !stopPending else { return }
        recording!.record(rawLine: line)
        if case .fix(let fix) = message {
            do {
                let events = try recording!.ingest(.fix(fix))
                report(events, runID: recording!.runID)
                tellSOS(events, fixTime: fix.time, receivedNs: receivedNs)
            } catch {
                storeFailed(error, doing: "starting the run")
            }
        }
        commit(force: false)
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

    private func resume(_ run: StoredRun, at time: Timestamp) {
        let gap = time.seconds(since: run.endTime ?? run.startTime)
        guard abs(gap) <= RunRecording.resumeWindowSeconds else {
            return leaveInterrupted(run, .notice, "run \(run.id) stays interrupted: the first fix came \(Int(gap)) s after its last sample")
        }
        do {
            recording = try RunRecording.resuming(run, store: store, configuration: configuration.tracking, coach: newCoach(workout: nil))
        } catch {
            return leaveInterrupted(run, .error, "cannot continue run \(run.id) (\(error)); it stays interrupted")
        }
        resumeCandidate = nil
        log(.notice, "run", "continuing run \(run.id), interrupted \(Int(gap)) s before this fix", runID: run.id)
        // It records again, so it is not packaged; the uplink held it back until now.
        toUplink(.releaseHeldRun(reason: "run \(run.id) continued"))
    }

    /// The interrupted run will not be continued: it is uploaded like a finished run, so the
    /// uplink, which held it back until this was decided, may now send it.
    private func leaveInterrupted(_ run: StoredRun, _ priority: JournalPriority, _ message: String) {
        resumeCandidate = nil
        log(priority, "run", message, runID: run.id)
        toUplink(.releaseHeldRun(reason: "run \(run.id) stays interrupted"))
    }

    private func linkChanged(_ newLink: GPSLink) {
        guard newLink != link else { return }
        switch newLink {
        case .connected: log(.info, "gps", "connected to gpsd at \(configuration.gpsHost):\(configuration.gpsPort)")
        case .lost(let reason):
            log(.warning, "gps", "lost gpsd at \(configuration.gpsHost):\(configuration.gpsPort) (\(reason)); reconnecting", runID: recording?.runID)
        case .connecting: break
        }
        link = newLink
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

    private static func monotonicTime(_ ns: UInt64) -> Timestamp {
        Timestamp(milliseconds: Int64(ns / 1_000_000))
    }

    private func strapChoiceChanged(_ choice: StrapChoice) {
        guard choice != strapChoice else { return }
        strapChoice = choice
        sensor.disconnected()
        strapProblem = nil
        lastBpm = nil
        if choice.straps.isEmpty {
            strapLink = .notPaired
            log(.notice, "hr", "no heart-rate strap paired: pair one with `pacerctl strap pair ADDRESS` or set [hr] strap")
        } else {
            strapLink = .searching
            let which = choice.straps.map(\.text).joined(separator: ", then ")
            log(.info, "hr", "looking for the heart-rate strap \(which) (\(choice.source == .config ? "[hr] in the config" : "paired with pacerctl"))")
        }
    }

    private func strapEvent(_ event: StrapEvent) {
        switch event {
        case .unavailable(let reason):
            if strapLink == .connected { sensor.disconnected() }
            // Retried every second or so: the journal hears of each new problem once.
            if strapProblem != reason { log(.warning, "hr", "heart rate unavailable: \(reason); retrying", runID: recording?.runID) }
            strapLink = .bluetoothUnavailable
            strapProblem = reason
        case .searching(let address):
            if strapProblem != "not in range" { log(.info, "hr", "heart-rate strap \(address) is not in range; discovering", runID: recording?.runID) }
            if strapLink != .lost { strapLink = .searching }
            strapProblem = "not in range"
        case .connectFailed(let address, let reason):
            if strapProblem != reason { log(.info, "hr", "cannot connect to the heart-rate strap \(address): \(reason); retrying", runID: recording?.runID) }
            if strapLink != .lost { strapLink = .searching }
            strapProblem = reason
        case .connected(let address, let name):
            sensor.connected(name: name, address: address.text)
            let after = strapLink == .lost ? " again" : ""
            strapLink = .connected
            strapProblem = nil
            lowBatteryReported = false
            log(.notice, "hr", "heart-rate strap \(name) (\(address)) connected\(after)", runID: recording?.runID)
        case .notification(_, let value, let receivedNs):
            heartRateNotification(value, receivedNs: receivedNs)
        case .battery(let address, let percent):
            sensor.battery(percent)
            if recording != nil, let time = timebase.time(atMonotonic: Monotonic.nanoseconds()) {
                recording!.coach { $0.strapBattery(percent, at: time) }
            }
            if percent <= configuration.coach.lowBatteryPercent, !lowBatteryReported {
                lowBatteryReported = true
                log(.warning, "hr", "heart-rate strap \(address) battery low: \(percent) %", runID: recording?.runID)
            }
        case .disconnected(let address, let reason):
            sensor.disconnected()
            strapLink = .lost
            strapProblem = reason
            log(.warning, "hr", "heart-rate strap \(address) disconnected (\(reason)); reconnecting", runID: recording?.runID)
        }
    }

    private func heartRateNotification(_ value: [UInt8], receivedNs: UInt64) {
        let result = sensor.notification(value, at: Self.monotonicTime(receivedNs))
        switch result {
        case .success(let measurement):
            if measurement.sample(at: Self.monotonicTime(receivedNs)).isValid { lastBpm = (measurement.bpm, receivedNs) }
        case .failure(let error):
            // Counted, and logged the first time and then every 100th: a faulty strap must not flood the journal.
            if sensor.malformedCount == 1 || sensor.malformedCount % 100 == 0 {
                log(.warning, "hr", "the strap sent a malformed heart-rate packet (\(error)); ignored (\(sensor.malformedCount) so far): \(HexBytes.string(value))", runID: recording?.runID)
            }
        }
        guard recording != nil, !stopPending else { return }
        guard let time = timebase.time(atMonotonic: receivedNs) else {
            heartRateWithoutTime += 1
            if heartRateWithoutTime == 1 { log(.info, "hr", "heart rate is recorded from the run's first GPS fix, which sets its clock") }
            return
        }
        // Every packet, malformed too, goes into the raw log: a replay then decodes what the daemon decoded.
        recording!.record(rawLine: HeartRateLine.line(value, time: time))
        if case .success(let measurement) = result {
            do {
                let events = try recording!.ingest(.heartRate(measurement.sample(at: time)))
                report(events, runID: recording!.runID)
            } catch {
                storeFailed(error, doing: "recording heart rate")
            }
        }
        commit(force: false)
        speakCues(triggeredAt: receivedNs)
    }

    private func strapStatus(nowNs: UInt64) -> StrapStatus {
        var status = StrapStatus()
        status.link = strapChoice.straps.isEmpty ? .notPaired : strapLink
        status.address = sensor.address ?? strapChoice.straps.first?.text
        status.name = sensor.name
        status.batteryPercent = sensor.batteryPercent
        status.reading = sensor.reading(at: Self.monotonicTime(nowNs))
        if let lastBpm {
            status.lastBpm = lastBpm.bpm
            status.lastBpmAge = Double(nowNs &- lastBpm.receivedNs) / 1e9
        }
        status.problem = status.link == .connected ? nil : strapProblem
        status.malformedPackets = sensor.malformedCount
        return status
    }

    // MARK: Commands

    private func perform(_ command: RunCommand, nowNs: UInt64) -> Result<DaemonStatus, CommandFailure> {
        let refusal: CommandFailure? = switch command {
        case .status: nil
        case .start: startRun(workout: nil)
        case .startWorkout(let workout): startRun(workout: workout)
        case .stop: stopRun()
        case .say(let text): say(text, nowNs: nowNs)
        case .readiness: readiness(nowNs: nowNs)
        case .control(let control): apply(control, nowNs: nowNs)
        case .delete(let runID): deleteRun(runID)
        }
        speakCues(triggeredAt: nowNs)
        if let refusal { return .failure(refusal) }
        return .success(status(nowNs: nowNs))
    }

    private func startRun(workout: Workout?) -> CommandFailure? {
        if recording != nil {
            let message: String
            if let runID = recording?.runID { message = "run \(runID) is already being recorded" } else { message = "a run is already started (waiting for a GPS fix)" }
            return CommandFailure(code: .conflict, message: message)
        }
        recording = RunRecording(store: store, configuration: configuration.tracking, coach: newCoach(workout: workout),
                                 uuid: UUID().uuidString.lowercased())
        stopPending = false
        if let candidate = resumeCandidate {
            leaveInterrupted(candidate, .notice, "run \(candidate.id) stays interrupted: a new run was started")
        }
        log(.notice, "run", (timebase.isSynchronized ? "run started" : "run started; it is recorded from the first GPS fix")
            + (workout.map { " with the workout \"\($0.name)\"" } ?? ""))
        if !timebase.isSynchronized, configuration.voice.enabled {
            // The coach speaks from the first fix, which sets the run's clock; say now why it waits.
            onCue(Cue(time: Self.monotonicTime(Monotonic.nanoseconds()), kind: .runState, text: "Run started. Waiting for GPS."), Monotonic.nanoseconds())
        }
        return nil
    }

    private func stopRun() -> CommandFailure? {
        guard recording != nil, !stopPending else { return CommandFailure(code: .conflict, message: "no run in progress") }
        stopPending = true
        commit(force: true)
        return nil
    }

    private func apply(_ control: RunControl, nowNs: UInt64) -> CommandFailure? {
        guard recording != nil, !stopPending else { return CommandFailure(code: .conflict, message: "no run in progress") }
        let runID = recording!.runID
        let paused = recording!.isPaused
        if control == .pause, paused { return CommandFailure(code: .conflict, message: "the run is already paused") }
        if control == .resume, !paused { return CommandFailure(code: .conflict, message: "the run is not paused") }
        // Recorded in the raw log where it happened, so a replay applies it at the same place.
        recording!.record(rawLine: ControlLine.line(control, time: timebase.time(atMonotonic: nowNs)))
        let events: [TrackerEvent]
        do {
            events = try recording!.ingest(.control(control))
        } catch {
            storeFailed(error, doing: "recording a \(control.rawValue)")
            events = []
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
        guard recording != nil else { return }
        for cue in recording!.takeCues() { onCue(cue, ns) }
    }

    private func say(_ text: String, nowNs: UInt64) -> CommandFailure? {
        onCue(Cue(time: Self.monotonicTime(nowNs), kind: .message, text: text), nowNs)
        return nil
    }

    /// "GPS 3D fix. Heart rate 72. Battery 80 percent. 3 runs waiting for upload."
    private func readiness(nowNs: UInt64) -> CommandFailure? {
        let gps: String = switch status(nowNs: nowNs).gps {
        case .fix3D: "GPS 3D fix"
        case .fix2D: "GPS 2D fix"
        case .noFix: "No GPS fix yet"
        case .gpsdUnreachable: "GPS receiver not available"
        }
        let waiting = try? store.runsWaitingForUpload()
        let cue = Coach.readiness(at: Self.monotonicTime(nowNs), gps: gps, heartRate: sensor.reading(at: Self.monotonicTime(nowNs)),
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
        if recording != nil, let time = timebase.time(atMonotonic: nowNs) {
            recording!.coach { $0.deviceBattery(percent, at: time) }
        }
    }

    private(set) var deviceBatteryPercent: Int?

    // MARK: Store

    /// Commits what is due (or everything, when forced), and closes the run once a stop is
    /// pending. A refused write keeps the data in memory and is retried every tick.
    private func commit(force: Bool) {
        guard recording != nil else { return }
        do {
            if stopPending {
                try recording!.finish()
                let summary = recording!.summary
                if let runID = recording!.runID {
                    log(.notice, "run", "run \(runID) stopped: \(FixedDecimal.format(summary.distance / 1000, decimals: 2) ?? "?") km, moving \(FixedDecimal.format(summary.movingTime, decimals: 0) ?? "?") s", runID: runID)
                } else {
                    log(.notice, "run", "run stopped before any GPS fix: nothing to store")
                }
                storeRecovered()
                speakCues(triggeredAt: Monotonic.nanoseconds())
                if let runID = recording!.runID { toUplink(.wake(reason: "run \(runID) finished")) }
                recording = nil
                stopPending = false
                // A runner still moving when the run stops must not have a new one start by itself.
                autoStart.reset(untilStill: true)
                return
            }
            if force { try recording!.commit() } else { try recording!.commitIfDue() }
            storeRecovered()
        } catch {
            storeFailed(error, doing: stopPending ? "closing the run" : "saving the run")
        }
    }

    private func storeFailed(_ error: StoreError, doing what: String) {
        let text = "\(error)"
        if recording != nil, let time = timebase.time(atMonotonic: Monotonic.nanoseconds()) {
            recording!.coach { $0.storage(full: true, at: time) }
        }
        if storeProblem != text {
            log(.error, "store", "\(what) failed: \(text). The run goes on and what it records is kept in memory until the store takes writes again.", runID: recording?.runID)
        }
        storeProblem = text
    }

    private func storeRecovered() {
        guard storeProblem != nil else { return }
        storeProblem = nil
        if recording != nil, let time = timebase.time(atMonotonic: Monotonic.nanoseconds()) {
            recording!.coach { $0.storage(full: false, at: time) }
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

    private func shutDown() {
        guard recording != nil else { return }
        stopPending = true
        commit(force: true)
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
        switch link {
        case .connecting, .lost: status.gps = .gpsdUnreachable
        case .connected:
            let fresh = lastFixNs.map { nowNs &- $0 < Self.fixStaleNs } ?? false
            status.gps = !fresh ? .noFix : lastFixMode == .threeD ? .fix3D : lastFixMode == .twoD ? .fix2D : .noFix
        }
        status.storeProblem = storeProblem
        status.strap = strapStatus(nowNs: nowNs)
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
