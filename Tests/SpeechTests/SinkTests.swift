import Foundation
import PacerCore
import PacerTestSupport
import Speech
import Testing

extension SpeechThread {
    @Suite struct SinkTests {
        @Test(.enabled(if: !hasSoundCard, "this machine has a sound card"))
        func withoutASoundCardALSASaysSoClearly() {
            #expect(throws: SpeechError.noSoundOutput(device: "default", reason: "No such file or directory")) {
                try ALSASink()
            }
            do {
                _ = try ALSASink(device: "default")
            } catch {
                #expect(error.description == "no sound output \"default\": No such file or directory")
            }
            #expect(throws: SpeechError.self) { try ALSASink(device: "plughw:7,0") }
        }

        /// ALSA's null device takes PCM like a card would (and throws it away): the whole ALSA
        /// path (set_params, prepare, writei, drain, drop) runs without hardware.
        @Test func alsaPlaysThroughItsNullDevice() async throws {
            let sink = try ALSASink(device: "null")
            #expect(sink.playsInRealTime)
            let first = try await synthesize(Sentences.short, into: sink)
            #expect(first.sampleCount > 5000)
            #expect(first.wavPath == nil)
            // Again after the drain: the stream is prepared anew.
            let second = try await synthesize(Sentences.summary, into: sink)
            #expect(second.sampleCount > first.sampleCount)
            // And after a drop.
            try sink.begin(UtteranceFormat(sampleRate: 22050, label: "test"))
            let silence = [Int16](repeating: 0, count: 1000)
            try silence.withUnsafeBufferPointer { try sink.write($0) }
            #expect(try sink.end(.interrupted) == nil)
            #expect(try await synthesize(Sentences.short, into: sink).sampleCount > 5000)
        }

        @Test func aDirectoryGetsOneNumberedFilePerUtteranceNamedByKind() async throws {
            let directory = try TemporaryDirectory(prefix: "pacer-speech")
            let folder = directory.file("cues")  // made by the sink
            let sink = try WAVSink(directory: folder)
            var paths: [String] = []
            for kind in [CueKind.summary, .speedUp, .sos] {
                paths.append(try #require(try await synthesize("Cue.", kind: kind, into: sink).wavPath))
            }
            #expect(paths == [folder + "/0001-summary.wav", folder + "/0002-speed_up.wav", folder + "/0003-sos.wav"])
            #expect(sink.lastPath == paths.last)
            for path in paths { #expect(try await SoxStat.measure(path).lengthSeconds > 0.2) }
            // A new sink (a restarted daemon) continues the numbering instead of overwriting.
            let again = try WAVSink(directory: folder)
            #expect(try await synthesize("Cue.", kind: .gpsLost, into: again).wavPath == folder + "/0004-gps_lost.wav")
        }

        @Test func oneFileIsReplacedByEachUtterance() async throws {
            let directory = try TemporaryDirectory(prefix: "pacer-speech")
            let path = directory.file("out.wav")
            let sink = WAVSink(file: path)
            _ = try await synthesize(Sentences.long, into: sink)
            let stats = try await synthesize(Sentences.short, into: sink)
            #expect(try WAVHeader.read(path).fileSize == 44 + stats.sampleCount * 2)
        }

        @Test func unwritablePlacesAreErrorsWithThePath() async throws {
            let directory = try TemporaryDirectory(prefix: "pacer-speech")
            let missing = directory.file("no/such/dir/x.wav")
            #expect(await synthesisError("Hello.", into: WAVSink(file: missing))
                == .file(path: missing, reason: "cannot create: No such file or directory"))
            let plainFile = directory.file("plain")
            #expect(FileManager.default.createFile(atPath: plainFile, contents: Data()))
            #expect(throws: SpeechError.file(path: plainFile, reason: "cannot read the directory: Not a directory")) {
                try WAVSink(directory: plainFile)
            }
            // A full disk: /dev/full refuses every write with ENOSPC.
            #expect(await synthesisError("Hello.", into: WAVSink(file: "/dev/full"))
                == .file(path: "/dev/full", reason: "cannot write: No space left on device"))
        }

        @Test func aTeeFeedsEverySink() async throws {
            let directory = try TemporaryDirectory(prefix: "pacer-speech")
            let counter = NullSink()
            let wav = WAVSink(file: directory.file("tee.wav"))
            let tee = TeeSink([counter, wav])
            #expect(!tee.playsInRealTime)
            let stats = try await synthesize(Sentences.short, into: tee)
            #expect(stats.wavPath == directory.file("tee.wav"))
            #expect(counter.totals.utterances == 1 && counter.totals.samples == stats.sampleCount)
            #expect(try await SoxStat.measure(directory.file("tee.wav")).samplesRead == stats.sampleCount)
            #expect(TeeSink([counter, try ALSASink(device: "null")]).playsInRealTime)
        }
    }
}
