import Synchronization
import Threads

/// One utterance for the speech thread: what to say, how, where to, and whom to tell.
struct UtteranceRequest: Sendable {
    var text: String
    var settings: SpeechSettings
    /// For the sink's file names: the cue kind's raw value.
    var label: String
    var sink: any AudioSink
    /// Hold chunks to the pace of playback when the sink does not (see `AudioSink.playsInRealTime`).
    var pacing: Bool
    var control: UtteranceControl
    /// Called on the speech thread once the first chunk is in the sink, with when it was handed over.
    var onFirstSample: (@Sendable (UInt64) -> Void)?
    /// Called on the speech thread when the utterance is over and the sink has let go of it.
    var completion: @Sendable (UtteranceOutcome) -> Void
}

enum UtteranceOutcome: Sendable {
    case completed(UtteranceStats)
    case interrupted(UtteranceStats)
    case failed(SpeechError, UtteranceStats)
}

/// The "stop now" of one utterance, set from any thread and seen by the speech thread at its
/// next chunk, or at once while it waits for playback to catch up.
final class UtteranceControl: Sendable {
    private let aborted = Atomic<Bool>(false)
    private let bell = Doorbell()

    func abort() {
        aborted.store(true, ordering: .releasing)
        bell.ring()
    }

    var isAborted: Bool { aborted.load(ordering: .acquiring) }

    /// Waits until the monotonic time `deadlineNs`, or less if aborted; true when aborted.
    func sleep(until deadlineNs: UInt64) -> Bool {
        while !isAborted {
            let now = MonotonicTime.nanoseconds()
            if now >= deadlineNs { return false }
            bell.wait(timeoutNs: deadlineNs - now)
        }
        return true
    }
}

/// A value handed from the speech thread to a caller blocked waiting for it.
final class Reply<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let bell = Doorbell()

    func put(_ result: Value) {
        value.withLock { $0 = result }
        bell.ring()
    }

    func wait() -> Value {
        while true {
            if let result = value.withLock({ $0 }) { return result }
            bell.wait(timeoutNs: nil)
        }
    }
}
