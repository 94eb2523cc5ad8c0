import PacerConfig
import PacerContract
import PacerCore

/// An effect the session decided on; the pipeline thread carries them out in order. Those whose
/// outcome the session needs (`beginRun`, `continueRun`, `record`, `readDeviceBattery`,
/// `gatherReadiness`, `deleteRun`) answer at once with an input, handled before the next action.
public enum RunAction: Sendable {
    /// Into the journal.
    case note(SessionNote)
    /// A cue for the speech side, with CLOCK_MONOTONIC of the input that triggered it.
    case say(Cue, atNs: UInt64)
    /// STATUS= (the line changed).
    case publishStatus(DaemonStatus)
    /// The answer to the command being handled.
    case reply(Result<DaemonStatus, CommandFailure>)
    case toSOS(SOSHandOff)
    case toUplink(UplinkHandOff)
    /// A new recording with a fresh UUID, remembering the workout it follows; answer `.runBegun`.
    case beginRun(tracking: TrackerConfiguration, coach: Coach?, following: FollowedWorkout?)
    /// Continue the interrupted run the pipeline started with; answer `.runContinued`.
    case continueRun(runID: Int64, tracking: TrackerConfiguration, coach: Coach?)
    /// Answer `.recorded` (nothing, when no run is being recorded).
    case record(RecordingStep)
    /// Answer `.deviceBattery`.
    case readDeviceBattery
    /// The wearable's battery and the runs waiting for upload; answer `.readinessFacts`.
    case gatherReadiness
    /// Answer `.runDeleted`.
    case deleteRun(runID: Int64)
    /// A valid strap reading while no run records: the health page's daily summary (`hr_daily`).
    case heartRateOutsideRun(bpm: Int, receivedNs: UInt64)
    /// Race mode is on for this race during the run with this UUID (nil: off), kept across a
    /// restart so that race mode goes on with the run when it is continued.
    case raceMode(raceID: String?, runUUID: String?)
}

/// What the SOS lane is told (the daemon turns these into the lane's inputs). Times are
/// CLOCK_MONOTONIC: the lane's watcher runs on it.
public enum SOSHandOff: Sendable, Equatable {
    /// The run being recorded (nil: none), for the alerts it names.
    case run(SessionRun?)
    /// Every usable fix, run or not, its time on the monotonic clock: position and body motion.
    case position(AlertPosition, wallMinusMonotonicMs: Int64)
    case deviceBattery(Int)
    /// A button press answered "Are you OK?".
    case answer
}

/// The run being recorded, as the SOS lane needs it (the daemon makes it the lane's `LaneRun`).
public struct SessionRun: Sendable, Equatable {
    public var id: Int64?
    public var uuid: String
    public var paused: Bool
}

/// What the uplink is told.
public enum UplinkHandOff: Sendable, Equatable {
    /// The live position while a run records.
    case position(LivePosition, latitude: Double, longitude: Double)
    /// The interrupted run it held back is decided: it may go (or it records again).
    case releaseHeldRun(reason: String)
    /// A run finished: there is something to send.
    case wake(reason: String)
    /// In race mode, a position for the race (kept in the store until the cloud took it).
    case racePosition(RacePositionFix)
}
