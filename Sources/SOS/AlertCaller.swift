import ModemManager

/// Speech into a voice call: the alert said over and over while the call is active.
public protocol CallAudio: Sendable {
    /// The call became active: start saying `text` in a loop until `stop`.
    func start(saying text: String)
    /// The call ended (or was hung up): stop at once.
    func stop()
}

/// The alert's one voice call (`[sos] call`), through ModemManager's Voice interface, and what
/// is spoken into it (`[sos] call_audio_device`; nil: the call is silent).
public struct AlertCaller: Sendable {
    let voice: VoiceCaller
    let audio: (@Sendable () -> (any CallAudio)?)?

    /// `audio` makes the speech for one call (nil when its device cannot be opened).
    public init(voice: VoiceCaller, audio: (@Sendable () -> (any CallAudio)?)? = nil) {
        self.voice = voice
        self.audio = audio
    }

    func place(to number: String, timeout: Duration, onState: @escaping @Sendable (CallState) -> Void) async -> Result<PlacedCall, CallError> {
        do {
            return .success(try await voice.place(to: number, timeout: timeout, onState: onState))
        } catch {
            return .failure(error)
        }
    }
}
