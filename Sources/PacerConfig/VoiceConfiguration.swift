/// How spoken cues are produced: the output half of `[voice]` in pacer.toml. What is said and when
/// is the core's `CoachConfiguration`; this is espeak-ng and where its sound goes.
public struct VoiceConfiguration: Sendable, Equatable {
    public enum Output: String, Sendable, Equatable, CaseIterable {
        /// The sound card, through ALSA.
        case alsa
        /// One WAV file per cue in `wavDirectory`: for a device without a speaker, and for tests.
        case wav
        /// Synthesised and dropped: the whole speech path runs, nothing is heard.
        case none
    }

    /// false: no speech at all (espeak-ng is not even started).
    public var enabled = true
    public var output: Output = .alsa
    public var wavDirectory = "/var/lib/pacer/speech"
    /// An ALSA PCM name ("default", "plughw:1,0").
    public var alsaDevice = "default"
    /// An espeak-ng voice name ("en", "en-us", "en-gb-x-rp").
    public var voice = "en"
    public var rateWordsPerMinute = 175
    /// espeak-ng's volume: 100 is normal, up to 200.
    public var volume = 100
    /// Coaching (summaries, splits, workout cues) is silent; safety and SOS messages never are.
    public var mute = false

    public init() {}
}
