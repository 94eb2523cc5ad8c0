import PacerConfig
import PacerCore
import ServiceLifecycle
import Speech
import Systemd

/// The runner's ears: cues from the pipeline go to the speaker (its arbiter decides what is said,
/// interrupted or dropped); what happened to each is told to the journal, with the latency from
/// the input that triggered the cue to its first PCM sample (CUE_LATENCY_MS).
struct VoiceService: Service {
    let speaker: Speaker
    let log: DaemonLog
    /// Every outcome, for whoever waits for one (the sync thread, for its notices).
    var onOutcome: @Sendable (SpeechEvent) -> Void = { _ in }

    func run() async throws {
        await withGracefulShutdownHandler {
            for await event in speaker.events { report(event) }
        } onGracefulShutdown: {
            speaker.stop()
        }
    }

    /// When the last utterance ended: a cue offered while another was being said waits for it
    /// by design, so its latency is also given from the moment the speaker was free.
    private final class Timeline: @unchecked Sendable {
        var lastEndedNs: UInt64 = 0
    }
    private let timeline = Timeline()

    private func report(_ event: SpeechEvent) {
        onOutcome(event)
        let cue = event.cue
        var fields = ["CUE_KIND": cue.kind.rawValue]
        switch event {
        case .started:
            return
        case .spoken(_, let stats), .interrupted(_, let stats):
            var timing = ""
            if let first = stats.firstSampleNs {
                let fromInput = Double(first &- cue.offeredNs) / 1e6
                let fromFree = Double(first &- max(cue.offeredNs, min(timeline.lastEndedNs, first))) / 1e6
                fields["CUE_LATENCY_MS"] = FixedDecimal.format(fromInput, decimals: 1)
                timing = "; first sound \(FixedDecimal.format(fromInput, decimals: 1) ?? "?") ms after its input, \(FixedDecimal.format(fromFree, decimals: 1) ?? "?") ms after the speaker was free"
            }
            timeline.lastEndedNs = stats.endedNs
            if let path = stats.wavPath { fields["WAV_PATH"] = path }
            let how = if case .interrupted = event { "interrupted" } else { "said" }
            log(cue.priority >= .safety ? .notice : .info, "voice", "\(how) (\(cue.kind.rawValue)\(timing)): \(cue.cue.text)", fields: fields)
        case .dropped(_, let reason):
            fields["DROP_REASON"] = reason.rawValue
            log(.info, "voice", "not said (\(reason.rawValue)) (\(cue.kind.rawValue)): \(cue.cue.text)", fields: fields)
        case .failed(_, let error):
            log(.warning, "voice", "could not say (\(cue.kind.rawValue)) \"\(cue.cue.text)\": \(error)", fields: fields)
        }
    }

    /// The speaker `[voice]` asks for; nil when voice is off or espeak-ng cannot start (then the
    /// coach's cues are only logged). A missing sound card is no reason to stay silent in the
    /// journal, nor to stop: the cues still go to a null output, so their timing is real.
    static func makeSpeaker(_ voice: VoiceConfiguration, log: DaemonLog) -> Speaker? {
        guard voice.enabled else { return nil }
        let sink: any AudioSink
        switch voice.output {
        case .none:
            sink = NullSink()
        case .wav:
            do {
                sink = try WAVSink(directory: voice.wavDirectory)
            } catch {
                log(.error, "voice", "cannot write speech to \(voice.wavDirectory) ([voice] wav_dir): \(error); cues are not heard")
                sink = NullSink()
            }
        case .alsa:
            do {
                sink = try ALSASink(device: voice.alsaDevice)
            } catch {
                log(.warning, "voice", "\(error) ([voice] alsa_device); cues are decided and logged but not heard")
                sink = NullSink()
            }
        }
        let settings = SpeechSettings(voice: voice.voice, wordsPerMinute: voice.rateWordsPerMinute, volumePercent: voice.volume)
        do {
            return try Speaker(settings: settings, sink: sink, muted: voice.mute)
        } catch {
            log(.error, "voice", "no speech: \(error); cues are logged only")
            return nil
        }
    }
}
