import SOS
import Speech
import Synchronization

/// The alert said into the voice call, in a loop while it is active (`[sos] call_audio_device`).
/// The sound device and espeak-ng are opened off the lane's thread: preparing a speaker waits for
/// the speech thread, which may be saying the SOS cue at that moment, and the lane never waits.
final class CallSpeech: CallAudio {
    private let open: @Sendable () -> SpokenLoop?
    private let state = Mutex<(loop: SpokenLoop?, stopped: Bool)>((nil, false))

    /// `open` makes the loop (nil when the device cannot be opened; it says why).
    init(open: @escaping @Sendable () -> SpokenLoop?) {
        self.open = open
    }

    func start(saying text: String) {
        Task.detached { [self] in
            guard let loop = open() else { return }
            let go = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.loop = loop
                return true
            }
            if go { loop.start(saying: text) } else { loop.stop() }
        }
    }

    func stop() {
        state.withLock { state in
            state.stopped = true
            return state.loop
        }?.stop()
    }
}
