/// Why speech could not be produced. Every case reads as a sentence for the journal or pacerctl.
public enum SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    /// espeak-ng could not start: its data (espeak-ng-data) is missing or unreadable.
    case noVoiceData(String)
    /// espeak-ng has no voice of that name.
    case unknownVoice(String)
    /// A setting outside what espeak-ng accepts (rate, volume, an empty voice name).
    case invalidSetting(String)
    /// espeak-ng refused or failed to synthesize.
    case synthesis(String)
    /// The sound card (ALSA PCM device) could not be opened.
    case noSoundOutput(device: String, reason: String)
    /// Playback failed after the device was open (configuring, writing, draining).
    case playback(device: String, reason: String)
    /// A WAV file or directory could not be created or written.
    case file(path: String, reason: String)
    /// The speech thread could not be started.
    case thread(String)

    public var description: String {
        switch self {
        case .noVoiceData(let detail): "espeak-ng cannot start: \(detail)"
        case .unknownVoice(let name): "espeak-ng has no voice \"\(name)\" (espeak-ng --voices lists them)"
        case .invalidSetting(let detail): detail
        case .synthesis(let detail): "speech synthesis failed: \(detail)"
        case .noSoundOutput(let device, let reason): "no sound output \"\(device)\": \(reason)"
        case .playback(let device, let reason): "sound output \"\(device)\": \(reason)"
        case .file(let path, let reason): "\(path): \(reason)"
        case .thread(let detail): detail
        }
    }
}
