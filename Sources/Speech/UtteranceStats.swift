/// How one utterance went, in CLOCK_MONOTONIC nanoseconds.
public struct UtteranceStats: Sendable, Equatable {
    /// The speech thread took it up (espeak-ng starts synthesizing).
    public var startedNs: UInt64
    /// The first PCM chunk was handed to the sink; nil when none was (cut off before, or no sound).
    public var firstSampleNs: UInt64?
    /// The sound ended: the sink drained (sound card), the last sample was due (files, with
    /// real-time pacing), or it was cut off and the sink dropped what it held.
    public var endedNs: UInt64
    /// Samples handed to the sink.
    public var sampleCount: Int
    public var sampleRate: Int
    /// The WAV file written, when the sink writes files.
    public var wavPath: String?

    public init(startedNs: UInt64, firstSampleNs: UInt64?, endedNs: UInt64, sampleCount: Int, sampleRate: Int, wavPath: String?) {
        self.startedNs = startedNs
        self.firstSampleNs = firstSampleNs
        self.endedNs = endedNs
        self.sampleCount = sampleCount
        self.sampleRate = sampleRate
        self.wavPath = wavPath
    }

    /// Seconds of sound handed to the sink.
    public var audioSeconds: Double {
        sampleRate > 0 ? Double(sampleCount) / Double(sampleRate) : 0
    }
}
