import ModemManager
import PacerCore

/// The two clocks as the lane's thread read them for one input: the core never reads a clock.
public struct LaneClock: Sendable, Equatable {
    /// CLOCK_MONOTONIC: the watcher's time, deadlines, retries.
    public var monotonicNs: UInt64
    /// CLOCK_REALTIME in ms: message times when no GPS fix has given the wall clock yet.
    public var wallMs: Int64

    public init(monotonicNs: UInt64, wallMs: Int64) {
        self.monotonicNs = monotonicNs
        self.wallMs = wallMs
    }

    /// The same instant's wall time moved along with the monotonic one.
    func at(monotonicNs ns: UInt64) -> LaneClock {
        LaneClock(monotonicNs: ns, wallMs: wallMs + (Int64(bitPattern: ns) - Int64(bitPattern: monotonicNs)) / 1_000_000)
    }
}

/// What the pure lane (`LaneCore`) reacts to: what came through the lane's queue, the time
/// passing, and the outcomes of the effects it asked for.
enum LaneCoreInput {
    /// An input from the queue. Its reply closure is not called here: the answer comes back as
    /// a `.reply` action.
    case lane(LaneInput)
    /// At start: the alerts left open and the deliveries owed in sos.db (not sent without a store).
    case restore(open: Result<[AlertStore.OpenAlert], AlertStoreError>, pending: Result<[Delivery], AlertStoreError>)
    /// A held button's deadline (`buttonDeadlineNs`) has come.
    case buttonsDue
    /// The 250 ms tick: silence, deadlines, retries, spoken confirmations.
    case tick
    /// The wait for an alert's commit (`LaneAction.commitAlert`) ended: its outcome, or nil when
    /// the commit still runs at the cap.
    case commitWaited(messageID: Int64, Result<[Delivery], AlertStoreError>?)
    /// The outcome of `LaneAction.storeMessage`.
    case messageStored(messageID: Int64, Result<[Delivery], AlertStoreError>)
    /// The outcome of `LaneAction.noteCall`: true when this is the alert's first call.
    case callNoted(alertUUID: String, Result<Bool, AlertStoreError>)
    /// `LaneInput.callPlaced` without its bus object (the executor keeps that for the hang-up).
    case callStarted(alertUUID: String, Result<CallPlacement, CallError>)
}

/// A started call as the core needs it (the executor keeps the `PlacedCall` itself).
struct CallPlacement: Equatable {
    var modem: String
    var path: String
}

/// A delivery's new state in sos.db.
enum LaneStoreWrite: Equatable {
    case acknowledged(Delivery.Key, atMs: Int64)
    case failed(Delivery.Key, error: String, atMs: Int64)
    case replaced(Delivery.Key, atMs: Int64)
    /// An SMS's status report (`SMSDeliveryState` raw value): for status only.
    case reported(Delivery.Key, state: UInt32, atMs: Int64)
}

/// The answer to the request an input carried.
enum LaneReply {
    case raised(Result<String, LaneRefusal>)
    case cancelled(Result<Int, LaneRefusal>)
    case tested(Result<String, LaneRefusal>)
    /// Without `recent` and `storeProblem`: the executor reads those from sos.db.
    case status(LaneStatus)
}

/// An effect the core decided on; the lane's thread carries them out in order. Those whose
/// outcome the core needs answer with an input at once (`commitAlert`, `storeMessage`,
/// `noteCall`) or later through the queue (`startAttempt`, `placeCall`).
enum LaneAction {
    case log(LaneLogLevel, String, [String: String])
    case say(Cue, atNs: UInt64)
    /// "Are you OK?" waits for an answer (the pipeline then hands a button press to the lane).
    case asking(Bool)
    case timing(AlertTiming)
    case publishServerRejects(Int?)
    case publishCall(LaneCallStatus?)
    /// Commit the alert and its first message, waiting at most until `waitUntilNs`; answer
    /// `.commitWaited(memoryID, …)`, and `.committed(memoryID, …)` if it finishes later.
    case commitAlert(AlertStore.NewAlert, AlertStore.NewMessage, memoryID: Int64, waitUntilNs: UInt64)
    /// Add a follow-up, all clear or cancel to the alert; answer `.messageStored(memoryID, …)`.
    case storeMessage(AlertStore.NewMessage, alertUUID: String, state: String?, memoryID: Int64)
    /// Failures are logged with `fields` and, when not empty, `unrecorded` (what it means).
    case storeWrite(LaneStoreWrite, fields: [String: String], unrecorded: String)
    case startAttempt(Delivery, attempt: Int, timeout: Duration, startedNs: UInt64)
    /// Note in sos.db that the alert's call is placed; answer `.callNoted`.
    case noteCall(alertUUID: String, atMs: Int64)
    case placeCall(alertUUID: String, number: String, timeout: Duration)
    case hangUp(alertUUID: String)
    case startCallAudio(alertUUID: String, text: String)
    case stopCallAudio(alertUUID: String)
    case storeCallState(String, alertUUID: String)
    case reply(LaneReply)
}
