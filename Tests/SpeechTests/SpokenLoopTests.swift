import Foundation
import PacerCore
import PacerTestSupport
import Speech
import Testing

extension SpeechThread {
    /// The alert spoken into a voice call: said again and again while the call lasts, in real
    /// time, then cut off at once. Into WAV files here (no sound card): one file per time said.
    @Suite struct SpokenLoopTests {
        @Test func theTextIsSaidAgainAndAgainUntilStopped() async throws {
            let directory = try TemporaryDirectory(prefix: "pacer-call-speech")
            _ = try await synthesize(Sentences.sos, kind: .sos, into: WAVSink(file: directory.file("once.wav")))
            let onceSeconds = try await SoxStat.measure(directory.file("once.wav")).lengthSeconds

            let loop = SpokenLoop(speaker: try await makeSpeaker(sink: WAVSink(directory: directory.file("call"))), pause: .milliseconds(200))
            loop.start(saying: Sentences.sos)
            loop.start(saying: "A second start is ignored.")
            // Paced to real time: in this long, about `expected` repetitions fit.
            let listened = max(3.0, onceSeconds * 4)
            try await Task.sleep(for: .seconds(listened))
            loop.stop()
            let saidWhenStopped = loop.timesSaid
            try await Task.sleep(for: .seconds(onceSeconds + 0.5))

            let files = try FileManager.default.contentsOfDirectory(atPath: directory.file("call")).filter { $0.hasSuffix(".wav") }.sorted()
            let expected = Int(listened / (onceSeconds + 0.2))
            #expect(saidWhenStopped >= 2, "said \(saidWhenStopped) times in \(listened) s (once is \(onceSeconds) s)")
            #expect(saidWhenStopped <= expected, "faster than real time: \(saidWhenStopped) in \(listened) s")
            // Nothing after stop: the files are those said and the one cut off (at most).
            #expect(files.count == saidWhenStopped || files.count == saidWhenStopped + 1, "\(files)")
            #expect(loop.timesSaid == saidWhenStopped, "still speaking after stop")
            // Each complete one is the whole text, the same as said once.
            for file in files.prefix(saidWhenStopped) {
                let length = try await SoxStat.measure(directory.file("call/" + file)).lengthSeconds
                #expect(abs(length - onceSeconds) < 0.1, "\(file): \(length) s, once is \(onceSeconds) s")
            }
        }
    }
}
