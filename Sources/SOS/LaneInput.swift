import ModemManager
import PacerCore

/// Everything the SOS lane reacts to. Times are CLOCK_MONOTONIC: the lane's watcher runs on it,
/// so a run's clock (which starts at the first fix) is never needed to raise an alert.
public enum LaneInput: Sendable {
    /// A strap notification's bytes as received, with CLOCK_MONOTONIC at receipt, and the strap
    /// that sent it (two straps' readings are never judged together).
    case heartRate(bytes: [UInt8], receivedNs: UInt64, strap: String? = nil)
    /// A decoded sample whose time is already on the monotonic clock (tools/bench-sos).
    case sample(HeartRateSample, receivedNs: UInt64)
    /// Every usable fix, run or not, its time on the monotonic clock: the alerts' position and
    /// the body's motion. `wallMinusMonotonicMs` turns monotonic times into GPS (wall) time for
    /// messages.
    case position(AlertPosition, wallMinusMonotonicMs: Int64?)
    /// A run started, paused, resumed or stopped: alerts name it (monitoring goes on without one).
    case run(LaneRun?)
    case deviceBattery(Int?)
    /// A key of the run button went down or up (evdev, CLOCK_MONOTONIC): the lane tells a very
    /// long press apart itself, so an SOS never waits behind a busy pipeline.
    case buttonKey(ButtonKeyEvent)
    /// The button device went away or dropped events: a press in progress is forgotten.
    case buttonsReset
    /// `pacerctl sos raise` (the button's very long press comes as `buttonKey`).
    case raise(source: String, reply: @Sendable (Result<String, LaneRefusal>) -> Void)
    case cancel(reply: @Sendable (Result<Int, LaneRefusal>) -> Void)
    /// A button press while "Are you OK?" waits: the runner answered.
    case answer
    case test(reply: @Sendable (Result<String, LaneRefusal>) -> Void)
    case status(reply: @Sendable (LaneStatus) -> Void)
    case reload(LaneSettings)
    /// The network is back (or `pacerctl sync`): every delivery waiting out a backoff goes now.
    case retryNow(reason: String)
    /// The outcome of one attempt (numbered by the lane's outbox), started at `startedNs`.
    case delivered(Delivery.Key, attempt: Int, Result<String, ChannelFailure>, startedNs: UInt64)
    /// An SMS's status report came (information only: never retried or held back for one).
    case smsReport(Delivery, SMSStatusReport)
    /// An alert's commit that outlasted the lane's wait is done (the id its deliveries were sent
    /// under from memory).
    case committed(messageID: Int64, Result<[Delivery], AlertStoreError>)
    /// After a memory trim: touch the alert path again without sending, storing, logging or
    /// saying anything, so the first real alert does not page it back in from the SD card.
    case rehearse(reply: @Sendable (LaneRehearsal) -> Void)
    /// The alert's voice call was started (or could not be).
    case callPlaced(alertUUID: String, Result<PlacedCall, CallError>)
    /// The alert's voice call changed state (ModemManager's StateChanged).
    case callState(alertUUID: String, CallState)
    case shutdown(done: @Sendable () -> Void)
}

/// The run being recorded, as the SOS lane needs it.
public struct LaneRun: Sendable, Equatable {
    public var id: Int64?
    public var uuid: String
    public var paused: Bool

    public init(id: Int64?, uuid: String, paused: Bool) {
        self.id = id
        self.uuid = uuid
        self.paused = paused
    }
}

/// Why the lane refused a request, worded for the person who asked.
public struct LaneRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a rehearsal of the alert path cost the lane's thread: the page faults it took (pages the
/// trim had unmapped; major ones were read from disk) and its duration.
public struct LaneRehearsal: Sendable, Equatable {
    public var minorFaults: Int
    public var majorFaults: Int
    public var microseconds: Int

    public init(minorFaults: Int, majorFaults: Int, microseconds: Int) {
        self.minorFaults = minorFaults
        self.majorFaults = majorFaults
        self.microseconds = microseconds
    }
}
