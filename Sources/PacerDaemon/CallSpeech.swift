import SOS
import Speech

/// The alert said into the voice call, in a loop while it is active (`[sos] call_audio_device`).
struct CallSpeech: CallAudio {
    let loop: SpokenLoop

    func start(saying text: String) { loop.start(saying: text) }
    func stop() { loop.stop() }
}
