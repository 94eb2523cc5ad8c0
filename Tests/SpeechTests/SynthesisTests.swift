import Foundation
import PacerCore
import PacerTestSupport
import Speech
import Testing

extension SpeechThread {
    /// Real espeak-ng into WAV files, checked with sox.
    @Suite struct SynthesisTests {
        @Test func aSentenceBecomesAnAudibleWAVOfPlausibleLength() async throws {
            let directory = try TemporaryDirectory(prefix: "pacer-speech")
            let path = directory.file("summary.wav")
            let stats = try await synthesize(Sentences.summary, into: WAVSink(file: path))
            #expect(stats.wavPath == path)
            #expect(stats.sampleRate == 22050)

            let header = try WAVHeader.read(path)
            #expect(header.channels == 1 && header.bitsPerSample == 16 && header.sampleRate == 22050)
            #expect(header.dataSize == UInt32(stats.sampleCount * 2))
            #expect(header.riffSize == header.dataSize + 36)
            #expect(header.fileSize == 44 + stats.sampleCount * 2)

            let sox = try await SoxStat.measure(path)
            #expect(sox.samplesRead == stats.sampleCount)
            #expect(abs(sox.lengthSeconds - stats.audioSeconds) < 0.001)
            // 25 words at 175 words per minute, with pauses: about 8 to 10 s.
            #expect((6.0...14.0).contains(sox.lengthSeconds), "\(sox.lengthSeconds) s")
            #expect(sox.rmsAmplitude > 0.02, "not silent: RMS \(sox.rmsAmplitude)")
            #expect(sox.maximumAmplitude > 0.2, "maximum \(sox.maximumAmplitude)")
            // Streamed: the first chunk left long before the whole sentence was made.
            let first = try #require(stats.firstSampleNs)
            #expect(first - stats.startedNs < 100_000_000)
        }

        @Test func aLongerSentenceGivesALongerFile() async throws {
            let directory = try TemporaryDirectory(prefix: "pacer-speech")
            let short = directory.file("short.wav")
            let long = directory.file("long.wav")
            _ = try await synthesize(Sentences.short, into: WAVSink(file: short))
            _ = try await synthesize(Sentences.long, into: WAVSink(file: long))
            let shortLength = try await SoxStat.measure(short).lengthSeconds
            let longLength = try await SoxStat.measure(long).lengthSeconds
            #expect((0.5...2.5).contains(shortLength), "\(shortLength) s")
            #expect(longLength > shortLength + 5, "\(shortLength) s, then \(longLength) s")
        }

        @Test func theRateSetsTheSpeedAndTheVolumeTheLoudness() async throws {
            let directory = try TemporaryDirectory(prefix: "pacer-speech")
            let slow = try await synthesize(Sentences.summary, settings: SpeechSettings(wordsPerMinute: 120), into: NullSink())
            let fast = try await synthesize(Sentences.summary, settings: SpeechSettings(wordsPerMinute: 300), into: NullSink())
            #expect(slow.audioSeconds > fast.audioSeconds * 1.6, "\(slow.audioSeconds) s at 120 wpm, \(fast.audioSeconds) s at 300 wpm")
            let quiet = directory.file("quiet.wav")
            let loud = directory.file("loud.wav")
            _ = try await synthesize(Sentences.short, settings: SpeechSettings(volumePercent: 30), into: WAVSink(file: quiet))
            _ = try await synthesize(Sentences.short, settings: SpeechSettings(volumePercent: 100), into: WAVSink(file: loud))
            let quietRMS = try await SoxStat.measure(quiet).rmsAmplitude
            let loudRMS = try await SoxStat.measure(loud).rmsAmplitude
            #expect(quietRMS < loudRMS * 0.6, "RMS \(quietRMS) at 30 %, \(loudRMS) at 100 %")
        }

        @Test func anotherVoiceWorks() async throws {
            let stats = try await synthesize("Guten Tag.", settings: SpeechSettings(voice: "de"), into: NullSink())
            #expect(stats.sampleCount > 5000)
        }

        @Test func anUnknownVoiceIsAnErrorNotAnExit() async throws {
            let settings = SpeechSettings(voice: "xx-no-such-voice")
            #expect(await synthesisError("Hello.", settings: settings, into: NullSink()) == .unknownVoice("xx-no-such-voice"))
            let speakerError = try await offPool { () -> SpeechError? in
                do throws(SpeechError) {
                    _ = try Speaker(settings: settings, sink: NullSink())
                    return nil
                } catch {
                    return error
                }
            }
            #expect(speakerError == .unknownVoice("xx-no-such-voice"))
            #expect(SpeechError.unknownVoice("xx-no-such-voice").description
                == "espeak-ng has no voice \"xx-no-such-voice\" (espeak-ng --voices lists them)")
            // espeak-ng is still fine afterwards, with the default voice.
            #expect(try await synthesize("Hello.", into: NullSink()).sampleCount > 0)
        }

        @Test func settingsOutOfRangeAreRefusedWithTheReason() async {
            #expect(await synthesisError("Hello.", settings: SpeechSettings(wordsPerMinute: 20), into: NullSink())
                == .invalidSetting("rate: 20 words per minute is outside 80-450"))
            #expect(throws: SpeechError.invalidSetting("volume: 250 % is outside 0-200")) {
                try SpeechSettings(volumePercent: 250).validate()
            }
            #expect(throws: SpeechError.invalidSetting("voice: \"\" is not a voice name")) {
                try SpeechSettings(voice: "").validate()
            }
        }

        @Test func anyTextIsSaidOrSkippedWithoutACrash() async throws {
            let texts = ["", " ", "5:12/km", "<speak>not SSML</speak>", "\u{1F3C3} \u{00E9}l\u{00E8}ve", String(repeating: "a", count: 5000), "nul\u{0}after"]
            for text in texts {
                #expect(await synthesisError(text, into: NullSink()) == nil, "\(text.prefix(20))")
            }
        }
    }
}
