import PacerCore
import Synchronization
import Threads

/// One text said again and again, a pause between, until stopped: the SOS alert spoken into a
/// voice call while it is active, so that whoever answers, whenever they start listening, hears
/// all of it. It owns its `Speaker` (and reads its events); `stop()` interrupts what is being
/// said and ends the speaker.
public final class SpokenLoop: Sendable {
    private let speaker: Speaker
    private let pause: Duration
    private let state = Mutex(State())

    private struct State {
        var running = false
        var stopped = false
        var timesSaid = 0
    }

    public init(speaker: Speaker, pause: Duration = .seconds(1)) {
        self.speaker = speaker
        self.pause = pause
    }

    /// How many times the text was said to its end so far.
    public var timesSaid: Int { state.withLock { $0.timesSaid } }

    /// Starts saying `text` in a loop; once only (a second call does nothing), never after `stop()`.
    public func start(saying text: String) {
        let go = state.withLock { state -> Bool in
            guard !state.running, !state.stopped else { return false }
            state.running = true
            return true
        }
        guard go else { return }
        Task.detached { [self] in
            say(text)
            for await event in speaker.events {
                switch event {
                case .started: continue
                // One that ends as `stop()` comes is not counted: the count a caller reads
                // right after stopping is final (the speaker may report it spoken a moment later).
                case .spoken: state.withLock { if !$0.stopped { $0.timesSaid += 1 } }
                case .interrupted, .dropped, .failed: break
                }
                guard !isStopped else { return }
                try? await Task.sleep(for: pause)
                guard !isStopped else { return }
                say(text)
            }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func say(_ text: String) {
        let now = MonotonicTime.nanoseconds()
        speaker.say(Cue(time: Timestamp(milliseconds: Int64(now / 1_000_000)), kind: .sos, text: text), offeredAt: now)
    }

    /// Stops at once, in the middle of a word if need be. Safe to call more than once.
    public func stop() {
        state.withLock { $0.stopped = true }
        speaker.stop()
    }
}
