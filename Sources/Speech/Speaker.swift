import PacerCore
import Synchronization
import Threads

/// The daemon's voice: cues in (`say`), sound out through a sink, what became of each cue out
/// (`events`). The `SpeechArbiter` decides what is said; the speech thread (`SpeechEngine`)
/// synthesizes with espeak-ng and streams each chunk to the sink as it is made, so the first
/// sound follows the cue within milliseconds, and stops at the next chunk when the arbiter
/// interrupts.
///
/// `say` and `setMuted` never block. `stop()` interrupts what is being said, drops what waits,
/// and `events` finishes once the sink has let go; the speech thread ends when no one else uses it.
public final class Speaker: Sendable {
    public let settings: SpeechSettings
    /// espeak-ng's output rate (22050 Hz for its voices).
    public let sampleRate: Int
    /// One event per cue outcome, and `started` when its sound begins. Keeps the newest
    /// `eventBufferSize` events if nobody reads them, so an unread stream cannot grow for ever.
    public let events: AsyncStream<SpeechEvent>

    private let sink: any AudioSink
    private let pacing: Bool
    private let engine: SpeechEngine
    private let continuation: AsyncStream<SpeechEvent>.Continuation
    private let state: Mutex<State>

    private struct State {
        var arbiter: SpeechArbiter
        /// Utterances handed to the speech thread and not yet over, by cue id.
        var active: [UInt64: UtteranceControl] = [:]
        var stopping = false
        var finished = false
    }

    /// Starts espeak-ng if needed and checks `settings` (an unknown voice or missing voice data
    /// throws here, with a readable description); blocks for that, a few milliseconds.
    ///
    /// `realTimePacing`: with a sink that takes samples faster than they play (WAV, null), hold
    /// each chunk until it would have been heard, so cues last as long as on the device and can
    /// be interrupted and queued as they would be there. Off, they are written at once.
    public init(
        settings: SpeechSettings = SpeechSettings(), sink: any AudioSink, muted: Bool = false,
        realTimePacing: Bool = true, eventBufferSize: Int = 256
    ) throws(SpeechError) {
        try settings.validate()
        let engine = SpeechEngine.shared
        try engine.acquire()
        let rate: Int
        do throws(SpeechError) {
            rate = try engine.prepare(settings)
        } catch {
            engine.release()
            throw error
        }
        self.settings = settings
        self.sampleRate = rate
        self.sink = sink
        self.pacing = realTimePacing
        self.engine = engine
        (events, continuation) = AsyncStream.makeStream(of: SpeechEvent.self, bufferingPolicy: .bufferingNewest(max(1, eventBufferSize)))
        state = Mutex(State(arbiter: SpeechArbiter(muted: muted)))
    }

    deinit {
        stop()
    }

    /// Offers a cue now. Ignored after `stop()`.
    public func say(_ cue: Cue) {
        say(cue, offeredAt: MonotonicTime.nanoseconds())
    }

    /// Offers a cue, with its age and latency counted from `offeredNs` (CLOCK_MONOTONIC), e.g.
    /// when the GPS sample that triggered it arrived.
    public func say(_ cue: Cue, offeredAt offeredNs: UInt64) {
        state.withLock { state in
            guard !state.stopping else { return }
            perform(state.arbiter.offer(cue, at: offeredNs), &state)
        }
    }

    /// Mutes or unmutes the coach: muted, only safety and SOS cues are said.
    public func setMuted(_ muted: Bool) {
        let now = MonotonicTime.nanoseconds()
        state.withLock { state in
            guard !state.stopping else { return }
            perform(state.arbiter.setMuted(muted, at: now), &state)
        }
    }

    public var isMuted: Bool { state.withLock { $0.arbiter.isMuted } }

    /// Interrupts what is being said and drops what waits (`.stopped`). Returns at once; `events`
    /// finishes when the sink has let go. Safe to call more than once.
    public func stop() {
        let done = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.stopping = true
            perform(state.arbiter.stopAll(), &state)
            return finishIfIdle(&state)
        }
        if done { finish() }
    }

    // MARK: Carrying out the arbiter's decisions (under the lock)

    private func perform(_ actions: [ArbiterAction], _ state: inout State) {
        for action in actions {
            switch action {
            case .speak(let queued):
                start(queued, &state)
            case .interrupt(let queued):
                state.active[queued.id]?.abort()
            case .drop(let queued, let reason):
                continuation.yield(.dropped(queued, reason: reason))
            }
        }
    }

    /// Hands the cue to the speech thread. An interrupted predecessor is still ahead of it in the
    /// thread's queue and goes quiet (the sink drops it) before this one's first sample: the
    /// thread does one utterance at a time, so nothing overlaps.
    private func start(_ queued: QueuedCue, _ state: inout State) {
        let control = UtteranceControl()
        state.active[queued.id] = control
        let continuation = continuation
        let request = UtteranceRequest(
            text: queued.cue.text, settings: settings, label: queued.kind.rawValue, sink: sink, pacing: pacing,
            control: control,
            onFirstSample: { handedNs in continuation.yield(.started(queued, firstSampleNs: handedNs)) },
            completion: { outcome in self.utteranceEnded(queued, outcome) })
        if let problem = engine.submit(.utterance(request)) {
            // No speech thread (out of threads): this cue fails and the arbiter moves on, which
            // fails the waiting ones the same way, one by one.
            state.active[queued.id] = nil
            continuation.yield(.failed(queued, problem))
            perform(state.arbiter.finished(queued.id, at: MonotonicTime.nanoseconds()), &state)
        }
    }

    /// On the speech thread: report the outcome and let the arbiter start the next cue.
    private func utteranceEnded(_ queued: QueuedCue, _ outcome: UtteranceOutcome) {
        let now = MonotonicTime.nanoseconds()
        let done = state.withLock { state -> Bool in
            state.active[queued.id] = nil
            switch outcome {
            case .completed(let stats): continuation.yield(.spoken(queued, stats))
            case .interrupted(let stats): continuation.yield(.interrupted(queued, stats))
            case .failed(let error, _): continuation.yield(.failed(queued, error))
            }
            perform(state.arbiter.finished(queued.id, at: now), &state)
            return finishIfIdle(&state)
        }
        if done { finish() }
    }

    private func finishIfIdle(_ state: inout State) -> Bool {
        guard state.stopping, state.active.isEmpty, !state.finished else { return false }
        state.finished = true
        return true
    }

    private func finish() {
        continuation.finish()
        engine.release()
    }

    // MARK: One-shot

    /// Says `text` once into `sink`, as fast as it is synthesized (no pacing, no arbiter), and
    /// returns when the sink has it all: for `pacerctl speak --wav` and tests. Blocks; waits for
    /// any utterance other speakers in this process have in progress.
    public static func synthesize(
        _ text: String, settings: SpeechSettings = SpeechSettings(), kind: CueKind = .message, into sink: any AudioSink
    ) throws(SpeechError) -> UtteranceStats {
        try settings.validate()
        let engine = SpeechEngine.shared
        try engine.acquire()
        defer { engine.release() }
        let reply = Reply<UtteranceOutcome>()
        let request = UtteranceRequest(
            text: text, settings: settings, label: kind.rawValue, sink: sink, pacing: false, control: UtteranceControl(),
            onFirstSample: nil, completion: { reply.put($0) })
        if let problem = engine.submit(.utterance(request)) { throw problem }
        switch reply.wait() {
        case .completed(let stats): return stats
        case .failed(let error, _): throw error
        case .interrupted: throw .synthesis("interrupted")  // nothing holds its control: cannot happen
        }
    }
}
