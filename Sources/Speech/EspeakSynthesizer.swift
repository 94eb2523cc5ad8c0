internal import CEspeakNG
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// espeak-ng, driven by the speech thread only (see `SpeechEngine`). Synchronous mode: the
/// thread calls espeak_Synth, which calls `synthCallback` with each chunk of PCM as soon as it is
/// made; the chunk goes straight to the sink, so the first sound is out about a millisecond after
/// the text went in instead of after the whole sentence.
final class EspeakSynthesizer {
    /// espeak-ng's chunk length: short enough that an interruption is heard within it, long
    /// enough that a chunk is not all call overhead.
    static let chunkMilliseconds: Int32 = 50
    /// With real-time pacing, how far the sink is kept ahead of what would be heard: the buffer
    /// a sound card holds (ALSASink's default latency).
    static let pacingLeadNs: UInt64 = 100_000_000

    /// espeak-ng's output rate; 0 until it has started.
    private var sampleRate = 0
    /// The settings espeak-ng holds now; nil when unknown (never set, or a change failed half-way).
    private var applied: SpeechSettings?

    /// Starts espeak-ng if needed and makes `settings` current. Returns the sample rate.
    func prepare(_ settings: SpeechSettings) throws(SpeechError) -> Int {
        try settings.validate()
        try startIfNeeded()
        guard applied != settings else { return sampleRate }
        applied = nil
        guard espeak_SetVoiceByName(settings.voice) == EE_OK else {
            throw .unknownVoice(settings.voice)
        }
        // After the voice: loading a voice may set its own rate and volume.
        guard espeak_SetParameter(espeakRATE, Int32(settings.wordsPerMinute), 0) == EE_OK,
            espeak_SetParameter(espeakVOLUME, Int32(settings.volumePercent), 0) == EE_OK
        else {
            throw .synthesis("espeak-ng refused rate \(settings.wordsPerMinute) or volume \(settings.volumePercent)")
        }
        applied = settings
        return sampleRate
    }

    private func startIfNeeded() throws(SpeechError) {
        guard sampleRate <= 0 else { return }
        // DONT_EXIT: without it, missing voice data makes espeak-ng call exit(1) and take the
        // daemon with it. It then returns a rate of 0 (after printing why to stderr).
        let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, Self.chunkMilliseconds, nil, Int32(espeakINITIALIZE_DONT_EXIT))
        guard rate > 0 else {
            throw .noVoiceData("its voice data (espeak-ng-data, from the espeak-ng-data package) is missing or unreadable")
        }
        espeak_SetSynthCallback(synthCallback)
        sampleRate = Int(rate)
    }

    /// Says `request.text` into its sink; how it went. Never throws: every failure is an outcome.
    func speak(_ request: UtteranceRequest) -> UtteranceOutcome {
        let startedNs = MonotonicTime.nanoseconds()
        var stats = UtteranceStats(startedNs: startedNs, firstSampleNs: nil, endedNs: startedNs, sampleCount: 0, sampleRate: sampleRate, wavPath: nil)
        // Cut off while it waited for the thread: the sink never hears of it.
        if request.control.isAborted { return .interrupted(stats) }
        do throws(SpeechError) {
            stats.sampleRate = try prepare(request.settings)
        } catch {
            return .failed(error, stats)
        }
        let sink = request.sink
        do throws(SpeechError) {
            try sink.begin(UtteranceFormat(sampleRate: sampleRate, label: request.label))
        } catch {
            stats.wavPath = try? sink.end(.interrupted)
            stats.endedNs = MonotonicTime.nanoseconds()
            return .failed(error, stats)
        }

        let run = SynthesisRun(request: request, sampleRate: sampleRate, pacing: request.pacing && !sink.playsInRealTime)
        let result = withExtendedLifetime(run) {
            request.text.withCString { text in
                espeak_Synth(text, strlen(text) + 1, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil,
                             Unmanaged.passUnretained(run).toOpaque())
            }
        }
        if run.stoppedEarly {
            // Synthesis was cut mid-sentence: without a cancel, the rest of that sentence's
            // buffered sound would open the next utterance.
            _ = espeak_Cancel()
        }
        stats.firstSampleNs = run.firstSampleNs
        stats.sampleCount = run.samples

        if let error = run.error {
            return ended(.failed(error, stats), sink: sink, how: .interrupted)
        }
        if run.aborted {
            return ended(.interrupted(stats), sink: sink, how: .interrupted)
        }
        if result != EE_OK {
            return ended(.failed(.synthesis("espeak_Synth returned \(result.rawValue)"), stats), sink: sink, how: .interrupted)
        }
        if run.pacing, let first = run.firstSampleNs,
            request.control.sleep(until: first + run.nanoseconds(ofSamples: run.samples))
        {
            // Cut off while its last buffer "played".
            return ended(.interrupted(stats), sink: sink, how: .interrupted)
        }
        return ended(.completed(stats), sink: sink, how: .completed)
    }

    /// Ends the sink's utterance and stamps the end; a failing end turns success into failure.
    private func ended(_ outcome: UtteranceOutcome, sink: any AudioSink, how: UtteranceEnd) -> UtteranceOutcome {
        var path: String?
        var endError: SpeechError?
        do throws(SpeechError) {
            path = try sink.end(how)
        } catch {
            endError = error
        }
        let now = MonotonicTime.nanoseconds()
        switch outcome {
        case .completed(var stats):
            stats.endedNs = now
            stats.wavPath = path
            if let endError { return .failed(endError, stats) }
            return .completed(stats)
        case .interrupted(var stats):
            stats.endedNs = now
            stats.wavPath = path
            return .interrupted(stats)
        case .failed(let error, var stats):
            stats.endedNs = now
            stats.wavPath = path
            return .failed(error, stats)
        }
    }
}

/// One espeak_Synth call's state, reached from the C callback through espeak's user_data.
final class SynthesisRun {
    let request: UtteranceRequest
    let sampleRate: Int
    let pacing: Bool
    private(set) var samples = 0
    private(set) var firstSampleNs: UInt64?
    private(set) var error: SpeechError?
    private(set) var aborted = false

    init(request: UtteranceRequest, sampleRate: Int, pacing: Bool) {
        self.request = request
        self.sampleRate = sampleRate
        self.pacing = pacing
    }

    var stoppedEarly: Bool { aborted || error != nil }

    func nanoseconds(ofSamples count: Int) -> UInt64 {
        sampleRate > 0 ? UInt64(count) * 1_000_000_000 / UInt64(sampleRate) : 0
    }

    /// Hands one chunk to the sink; false makes espeak-ng stop.
    func deliver(_ wav: UnsafeMutablePointer<Int16>?, count: Int) -> Bool {
        if request.control.isAborted {
            aborted = true
            return false
        }
        guard let wav, count > 0 else { return true }  // events only, or the end
        let handedNs = MonotonicTime.nanoseconds()
        do throws(SpeechError) {
            try request.sink.write(UnsafeBufferPointer(start: wav, count: count))
        } catch {
            self.error = error
            return false
        }
        samples += count
        if firstSampleNs == nil {
            firstSampleNs = handedNs
            request.onFirstSample?(handedNs)
        }
        if pacing, let first = firstSampleNs {
            // Keep one sound-card buffer ahead of what would be heard, then wait, as ALSA's
            // blocking write would; an abort ends the wait at once.
            let heardUpTo = first + nanoseconds(ofSamples: samples)
            let due = heardUpTo > EspeakSynthesizer.pacingLeadNs ? heardUpTo - EspeakSynthesizer.pacingLeadNs : 0
            if request.control.sleep(until: due) {
                aborted = true
                return false
            }
        }
        return true
    }
}

/// espeak-ng's synthesis callback. A file-scope function (a closure in a main file would be
/// MainActor-isolated and trap on the speech thread); the run comes through user_data, which
/// espeak-ng copies into every event, the list terminator included.
private func synthCallback(_ wav: UnsafeMutablePointer<Int16>?, _ count: Int32, _ events: UnsafeMutablePointer<espeak_EVENT>?) -> Int32 {
    guard let context = events?.pointee.user_data else { return 0 }
    let run = Unmanaged<SynthesisRun>.fromOpaque(context).takeUnretainedValue()
    return run.deliver(wav, count: Int(count)) ? 0 : 1
}
