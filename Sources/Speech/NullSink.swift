import Synchronization

/// Speech into nowhere: samples are counted and dropped. The first chunk handed here still
/// counts as output, so latency can be measured without a sound card.
public final class NullSink: AudioSink {
    private let counts = Mutex((utterances: 0, samples: 0))

    public init() {}

    public var playsInRealTime: Bool { false }

    /// Utterances begun and samples received so far.
    public var totals: (utterances: Int, samples: Int) { counts.withLock { $0 } }

    public func begin(_ format: UtteranceFormat) throws(SpeechError) {
        counts.withLock { $0.utterances += 1 }
    }

    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(SpeechError) {
        counts.withLock { $0.samples += samples.count }
    }

    public func end(_ how: UtteranceEnd) throws(SpeechError) -> String? { nil }
}
