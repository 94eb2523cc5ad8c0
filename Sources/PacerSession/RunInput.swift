import PacerConfig
import PacerCore

/// What the pure run session (`RunSession`) reacts to: what came through the pipeline's queue
/// (gpsd lines already decoded by the loop), the time passing, and the outcomes of the effects
/// it asked for. Times are CLOCK_MONOTONIC nanoseconds.
public enum RunInput: Sendable {
    /// A gpsd line as received; `fix` is its TPV, nil for the other classes (recorded, not used).
    case gpsLine(String, fix: GPSFix?, receivedNs: UInt64)
    /// A line gpsd sent that is not gpsd JSON, and why: never recorded.
    case malformedGPSLine(String, error: String)
    case gpsLink(GPSLink)
    case strap(StrapSignal)
    /// A Heart Rate Measurement value exactly as the strap sent it.
    case strapNotification([UInt8], receivedNs: UInt64)
    case strapChoice(StrapSelection)
    /// A request from the control socket: answered by a `.reply` action.
    case command(RunCommand)
    /// A run button went down or up; `sosAsking` is whether the SOS lane waits for an answer to
    /// "Are you OK?" as the key came.
    case buttonKey(ButtonKeyEvent, sosAsking: Bool)
    case buttonsReset
    /// A held button's deadline (`buttonDeadlineNs`) has come.
    case buttonsDue(sosAsking: Bool)
    /// Once a second, whatever arrives: GPS loss is noticed, a refused write retried.
    case tick
    case reload(PacerConfiguration)
    /// The training plan as of now: at start, when it changes and when the date does.
    case plan(PlanToday)
    /// Close the run before pacerd stops.
    case shutdown
    /// What the cloud answered to race mode's positions (the uplink): the place, or a refusal.
    case raceReply(raceID: String, RaceReply)
    /// The run continued after a restart was in race mode (`RunAction.raceMode`): race mode goes
    /// on, its tracker brought up to date with the run's stored inputs' tracker events.
    case raceContinued(RaceMode, replayed: [TrackerEvent])

    /// The outcome of `RunAction.beginRun`: the new recording.
    case runBegun(RecordingProgress)
    /// The outcome of `RunAction.continueRun`.
    case runContinued(runID: Int64, Result<RecordingProgress, StoreRefusal>)
    /// The outcome of `RunAction.record`.
    case recorded(RecordingStep, RecordingOutcome)
    /// The outcome of `RunAction.readDeviceBattery`: nil when the wearable has none to read.
    case deviceBattery(Int?)
    /// The outcome of `RunAction.gatherReadiness`.
    case readinessFacts(batteryPercent: Int?, runsWaiting: Int?)
    /// The outcome of `RunAction.deleteRun`.
    case runDeleted(runID: Int64, DeleteOutcome)
}

/// One thing done to the run being recorded (the executor's `RunRecording`, which writes to the
/// store): each answers with `RunInput.recorded`.
public enum RecordingStep: Sendable {
    /// The raw line into the run's log, then its fix, if any, through the core.
    case gpsLine(String, fix: GPSFix?, receivedNs: UInt64)
    /// The notification into the raw log at `time` (an HRM line), then its sample if it decoded.
    case heartRate([UInt8], sample: HeartRateSample?, time: Timestamp, receivedNs: UInt64)
    /// A pause, resume or lap: into the raw log where it happened, then through the core.
    case control(RunControl, time: Timestamp?)
    /// Time passes without input: a lost GPS is noticed.
    case advance(to: Timestamp)
    /// What is due (or everything, when forced) committed.
    case commit(force: Bool)
    /// The run ended: the rest committed, the summary stored.
    case finish
    /// Something only the live daemon knows, told to the coach.
    case coach(CoachNews)
}

public enum CoachNews: Sendable, Equatable {
    case strapBattery(Int, at: Timestamp)
    case deviceBattery(Int, at: Timestamp)
    case storage(full: Bool, at: Timestamp)
}

/// What came of a `RecordingStep`: the core's decisions (or the store's refusal), where the run
/// is now, and what the coach decided to say.
public struct RecordingOutcome: Sendable {
    public var result: Result<[TrackerEvent], StoreRefusal>
    public var progress: RecordingProgress
    public var cues: [Cue]

    public init(_ result: Result<[TrackerEvent], StoreRefusal>, progress: RecordingProgress, cues: [Cue] = []) {
        self.result = result
        self.progress = progress
        self.cues = cues
    }
}

/// The run being recorded, as the session needs to know it.
public struct RecordingProgress: Sendable, Equatable {
    /// The run's number, once its row exists (with the first timed item).
    public var runID: Int64?
    /// nil only between deciding to start a run and the recording's answer.
    public var uuid: String?
    public var isPaused = false
    public var distance = 0.0
    public var movingTime = 0.0
    public var lastSampleTime: Timestamp?

    public init(runID: Int64? = nil, uuid: String?, isPaused: Bool = false, distance: Double = 0, movingTime: Double = 0, lastSampleTime: Timestamp? = nil) {
        self.runID = runID
        self.uuid = uuid
        self.isPaused = isPaused
        self.distance = distance
        self.movingTime = movingTime
        self.lastSampleTime = lastSampleTime
    }
}

/// A write the store refused (a full disk), in the store's words.
public struct StoreRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

public enum DeleteOutcome: Sendable, Equatable {
    case deleted
    case noSuchRun
    case failed(String)
}
