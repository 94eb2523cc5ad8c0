/// Speech into several sinks at once, e.g. a WAV record of every cue and the sound card when
/// there is one. It plays in real time when any of them does (the sound card then sets the pace).
/// A failure in one sink fails the utterance; every sink is still ended.
public final class TeeSink: AudioSink {
    public let sinks: [any AudioSink]

    public init(_ sinks: [any AudioSink]) {
        self.sinks = sinks
    }

    public var playsInRealTime: Bool { sinks.contains { $0.playsInRealTime } }

    public func begin(_ format: UtteranceFormat) throws(SpeechError) {
        for sink in sinks { try sink.begin(format) }
    }

    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(SpeechError) {
        for sink in sinks { try sink.write(samples) }
    }

    /// The first file any sink wrote.
    public func end(_ how: UtteranceEnd) throws(SpeechError) -> String? {
        var path: String?
        var firstError: SpeechError?
        for sink in sinks {
            do throws(SpeechError) {
                let written = try sink.end(how)
                if path == nil { path = written }
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
        return path
    }
}
