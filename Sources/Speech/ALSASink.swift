internal import CALSA
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Speech to the sound card through libasound: an ALSA PCM device opened for playback, 16-bit
/// signed little-endian, interleaved, mono, at the voice's rate (ALSA resamples for cards that
/// cannot do it), with about `latency` of buffer. `write` blocks while the buffer is full, so it
/// plays in real time; an underrun (-EPIPE) is recovered; `end` drains a finished utterance and
/// drops an interrupted one at once. An interruption is heard within one chunk (about 50 ms);
/// one that comes during the final drain waits for it (at most `latency`).
public final class ALSASink: AudioSink {
    public let device: String
    public let latency: Duration

    private struct State {
        /// snd_pcm_t, open from init to deinit.
        var pcm: OpaquePointer?
        /// The rate snd_pcm_set_params was last given; 0 before the first utterance.
        var configuredRate = 0
    }

    private let state: Mutex<State>

    /// Opens `device` ("default", "plughw:1", "null"…). Without a sound card this throws
    /// `no sound output "default": No such file or directory`, so a caller can fall back to files.
    public init(device: String = "default", latency: Duration = .milliseconds(100)) throws(SpeechError) {
        self.device = device
        self.latency = max(latency, .milliseconds(10))
        var pcm: OpaquePointer?
        // Non-blocking open: a card busy with another program fails now instead of hanging the
        // caller; writes are switched back to blocking, which is what paces playback.
        let opened = Self.quietly { snd_pcm_open(&pcm, device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK) }
        guard opened >= 0, let pcm else {
            throw .noSoundOutput(device: device, reason: Self.errorText(opened))
        }
        let blocking = Self.quietly { snd_pcm_nonblock(pcm, 0) }
        guard blocking >= 0 else {
            snd_pcm_close(pcm)
            throw .noSoundOutput(device: device, reason: Self.errorText(blocking))
        }
        state = Mutex(State(pcm: pcm))
    }

    deinit {
        state.withLock { state in
            if let pcm = state.pcm { _ = Self.quietly { snd_pcm_close(pcm) } }
            state.pcm = nil
        }
    }

    public var playsInRealTime: Bool { true }

    public func begin(_ format: UtteranceFormat) throws(SpeechError) {
        try state.withLock { (state: inout State) throws(SpeechError) in
            guard let pcm = state.pcm else { throw .playback(device: device, reason: "the device is closed") }
            if state.configuredRate != format.sampleRate {
                let microseconds = UInt32(clamping: latency.components.seconds * 1_000_000 + latency.components.attoseconds / 1_000_000_000_000)
                let result = Self.quietly {
                    snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1,
                                       UInt32(clamping: format.sampleRate), 1, microseconds)
                }
                guard result >= 0 else {
                    throw .playback(device: device, reason: "cannot play 16-bit mono at \(format.sampleRate) Hz: \(Self.errorText(result))")
                }
                state.configuredRate = format.sampleRate
            }
            // After a drain or a drop the PCM is stopped (SETUP); writing needs it PREPARED.
            let prepared = Self.quietly { snd_pcm_prepare(pcm) }
            guard prepared >= 0 else { throw .playback(device: device, reason: "cannot prepare: \(Self.errorText(prepared))") }
        }
    }

    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(SpeechError) {
        guard var next = samples.baseAddress, !samples.isEmpty else { return }
        try state.withLock { (state: inout State) throws(SpeechError) in
            guard let pcm = state.pcm else { throw .playback(device: device, reason: "the device is closed") }
            var left = samples.count
            while left > 0 {
                let written = Self.quietly { snd_pcm_writei(pcm, next, snd_pcm_uframes_t(left)) }
                if written >= 0 {
                    left -= written
                    next += written
                    continue
                }
                // -EPIPE: underrun (espeak-ng was late); -ESTRPIPE: suspended; -EINTR. Recovery
                // re-prepares the stream and the write is retried; anything else is a failure.
                let recovered = Self.quietly { snd_pcm_recover(pcm, Int32(written), 1) }
                guard recovered >= 0 else {
                    throw .playback(device: device, reason: "cannot write: \(Self.errorText(Int32(written)))")
                }
            }
        }
    }

    public func end(_ how: UtteranceEnd) throws(SpeechError) -> String? {
        try state.withLock { (state: inout State) throws(SpeechError) in
            guard let pcm = state.pcm else { return }
            switch how {
            case .completed:
                // Blocks until the last sample is heard: the utterance ends when the runner has
                // heard it, and the next one cannot start over its tail.
                let result = Self.quietly { snd_pcm_drain(pcm) }
                guard result >= 0 else { throw .playback(device: device, reason: "cannot drain: \(Self.errorText(result))") }
            case .interrupted:
                _ = Self.quietly { snd_pcm_drop(pcm) }
            }
        }
        return nil
    }

    private static func errorText(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

    /// Runs `body` with libasound's error printing switched off on this thread: its messages
    /// ("ALSA lib confmisc.c:855:(parse_card) cannot find card '0'") would land on stderr, and
    /// so in the journal, beside the error it returns, which is reported properly.
    private static func quietly<T>(_ body: () -> T) -> T {
        pacer_alsa_errors_off()
        defer { pacer_alsa_errors_on() }
        return body()
    }
}
