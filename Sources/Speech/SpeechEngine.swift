import Synchronization
import Threads

/// The speech thread: the one thread that talks to espeak-ng, which keeps global state and is
/// not thread-safe. Process-wide, because espeak-ng is: every `Speaker` and one-shot synthesis
/// in the process queue their work here and it runs one job at a time, so two utterances never
/// overlap and espeak-ng is never entered twice.
///
/// The thread runs while anyone holds the engine (`acquire`/`release`) or jobs wait, and ends
/// when neither is left; the next `acquire` starts a new one. espeak-ng itself stays initialized
/// for the life of the process: espeak_Terminate hangs in 1.51 (it waits for a thread that
/// synchronous mode never wakes), and one initialization is cheap to keep (its voice data).
final class SpeechEngine: Sendable {
    static let shared = SpeechEngine()

    enum Job: Sendable {
        /// Start espeak-ng if needed and check the settings; replies with the sample rate.
        case prepare(SpeechSettings, Reply<Result<Int, SpeechError>>)
        case utterance(UtteranceRequest)
    }

    private struct State {
        var jobs: [Job] = []
        var users = 0
        var threadRunning = false
    }

    private let state = Mutex(State())
    private let bell = Doorbell()
    /// espeak-ng's side. Only the speech thread touches it, and at most one speech thread runs
    /// at a time; one hands over to the next through `state`'s lock.
    private nonisolated(unsafe) let synthesizer = EspeakSynthesizer()

    private init() {}

    /// Keeps the thread running until the matching `release`.
    func acquire() throws(SpeechError) {
        try state.withLock { (state: inout State) throws(SpeechError) in
            try startThreadIfNeeded(&state)
            state.users += 1
        }
    }

    func release() {
        state.withLock { $0.users = max(0, $0.users - 1) }
        bell.ring()
    }

    /// Queues a job behind those waiting. Returns why it cannot run (the thread cannot be
    /// started), in which case it is not queued and its completion is never called.
    func submit(_ job: Job) -> SpeechError? {
        let problem: SpeechError? = state.withLock { state in
            do throws(SpeechError) {
                try startThreadIfNeeded(&state)
            } catch {
                return error
            }
            state.jobs.append(job)
            return nil
        }
        if problem == nil { bell.ring() }
        return problem
    }

    /// Starts espeak-ng if needed and checks `settings` on the speech thread; blocks the caller
    /// until then (a few milliseconds, more while another utterance is being spoken).
    func prepare(_ settings: SpeechSettings) throws(SpeechError) -> Int {
        let reply = Reply<Result<Int, SpeechError>>()
        if let problem = submit(.prepare(settings, reply)) { throw problem }
        return try reply.wait().get()
    }

    private func startThreadIfNeeded(_ state: inout State) throws(SpeechError) {
        guard !state.threadRunning else { return }
        state.threadRunning = true
        do {
            try DetachedThread.start { [self] in run() }
        } catch {
            state.threadRunning = false
            throw .thread("cannot start the speech thread: \(error)")
        }
    }

    private enum Step {
        case run(Job)
        case wait
        case exit
    }

    /// The speech thread's body.
    private func run() {
        while true {
            let step: Step = state.withLock { state in
                if !state.jobs.isEmpty { return .run(state.jobs.removeFirst()) }
                if state.users == 0 {
                    state.threadRunning = false
                    return .exit
                }
                return .wait
            }
            switch step {
            case .run(let job): perform(job)
            case .wait: bell.wait(timeoutNs: nil)
            case .exit: return
            }
        }
    }

    private func perform(_ job: Job) {
        switch job {
        case .prepare(let settings, let reply):
            do throws(SpeechError) {
                reply.put(.success(try synthesizer.prepare(settings)))
            } catch {
                reply.put(.failure(error))
            }
        case .utterance(let request):
            request.completion(synthesizer.speak(request))
        }
    }
}
