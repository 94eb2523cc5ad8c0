/// Where synthesized speech goes: a sound card, WAV files, nowhere. The speech thread calls a
/// sink for one utterance at a time, in the order `begin`, `write`…, `end`; never two utterances
/// at once, so nothing spoken overlaps. Sinks are Sendable because a `Speaker` hands its sink to
/// the speech thread; their state sits behind a lock they alone take.
public protocol AudioSink: AnyObject, Sendable {
    /// True when `write` blocks at the pace of playback (a sound card). For sinks that take
    /// samples as fast as they come (files, nowhere), a `Speaker` holds each chunk until it would
    /// have been heard, so cues take as long as they do on the device and can be interrupted.
    var playsInRealTime: Bool { get }

    /// An utterance starts: 16-bit signed mono PCM at `format.sampleRate` follows.
    func begin(_ format: UtteranceFormat) throws(SpeechError)

    /// The next samples, in order. Called as espeak-ng produces them (one chunk is about 50 ms).
    func write(_ samples: UnsafeBufferPointer<Int16>) throws(SpeechError)

    /// The utterance is over: played to its end (`.completed`: a sound card drains), or cut off
    /// (`.interrupted`: a sound card drops what it holds). Returns the file written, if any.
    /// After an error in `begin` or `write`, `end(.interrupted)` is still called.
    func end(_ how: UtteranceEnd) throws(SpeechError) -> String?
}

/// What a sink is told when an utterance begins.
public struct UtteranceFormat: Sendable, Equatable {
    /// Samples per second (espeak-ng's voices are 22050 Hz).
    public var sampleRate: Int
    /// What is said, for names (`0003-summary.wav`): a `CueKind` raw value.
    public var label: String

    public init(sampleRate: Int, label: String) {
        self.sampleRate = sampleRate
        self.label = label
    }
}

public enum UtteranceEnd: Sendable, Equatable {
    case completed
    case interrupted
}
