import Foundation
import PacerCore
import PacerTestSupport
import Speech
import Synchronization
import Testing

/// What `sox FILE -n stat` says about a sound file (it prints to stderr).
struct SoxStat {
    var lengthSeconds: Double
    var rmsAmplitude: Double
    var maximumAmplitude: Double
    var samplesRead: Int

    static func of(_ path: String) throws -> SoxStat {
        let result = try BlockingCommand.run("sox", [path, "-n", "stat"], timeout: .seconds(20))
        try result.check()
        var values: [String: Double] = [:]
        for line in result.standardError.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].split(separator: " ").joined(separator: " ")
            if let value = Double(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)) {
                values[key] = value
            }
        }
        guard let length = values["Length (seconds)"], let rms = values["RMS amplitude"],
            let maximum = values["Maximum amplitude"], let samples = values["Samples read"]
        else {
            throw TestFailure("unexpected sox stat output: \(result.standardError)")
        }
        return SoxStat(lengthSeconds: length, rmsAmplitude: rms, maximumAmplitude: maximum, samplesRead: Int(samples))
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The fields of a canonical 44-byte WAV header, read back from a file.
struct WAVHeader {
    var riffSize: UInt32
    var channels: UInt16
    var sampleRate: UInt32
    var bitsPerSample: UInt16
    var dataSize: UInt32
    var fileSize: Int

    static func read(_ path: String) throws -> WAVHeader {
        let data = try Data(contentsOf: URL(filePath: path))
        guard data.count >= 44, data.prefix(4) == Data("RIFF".utf8), data[8..<12] == Data("WAVE".utf8),
            data[12..<16] == Data("fmt ".utf8), data[36..<40] == Data("data".utf8)
        else { throw TestFailure("\(path) does not start with a canonical WAV header") }
        func u32(_ at: Int) -> UInt32 { data[at..<at + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) } }
        func u16(_ at: Int) -> UInt16 { UInt16(data[at]) | UInt16(data[at + 1]) << 8 }
        #expect(u16(20) == 1, "PCM")
        return WAVHeader(riffSize: u32(4), channels: u16(22), sampleRate: u32(24), bitsPerSample: u16(34), dataSize: u32(40), fileSize: data.count)
    }
}

/// Collects a speaker's events on a task of its own; tests wait for what they expect.
final class EventLog: Sendable {
    private let events = Mutex<[SpeechEvent]>([])
    private let ended = Mutex(false)

    init(_ speaker: Speaker) {
        let stream = speaker.events
        Task { [self] in
            for await event in stream { events.withLock { $0.append(event) } }
            ended.withLock { $0 = true }
        }
    }

    var all: [SpeechEvent] { events.withLock { $0 } }
    var streamEnded: Bool { ended.withLock { $0 } }

    /// Waits until `condition` holds for the events so far (a hang guard, not a timing bound).
    @discardableResult
    func wait(timeout: Duration = .seconds(30), until condition: ([SpeechEvent]) -> Bool) async -> [SpeechEvent] {
        var seen = all
        _ = await eventually(timeout: timeout, every: .milliseconds(5)) {
            seen = all
            return condition(seen)
        }
        return seen
    }

    /// The outcome (anything but `started`) of the cue with this kind, once it is there.
    func outcome(of kind: CueKind) async -> SpeechEvent? {
        await wait { events in events.contains { $0.isOutcome && $0.cue.kind == kind } }
            .first { $0.isOutcome && $0.cue.kind == kind }
    }
}

extension SpeechEvent {
    var isOutcome: Bool {
        if case .started = self { false } else { true }
    }

    var stats: UtteranceStats? {
        switch self {
        case .spoken(_, let stats), .interrupted(_, let stats): stats
        default: nil
        }
    }
}

func cue(_ kind: CueKind, _ text: String) -> Cue {
    Cue(time: Timestamp(seconds: 0), kind: kind, text: text)
}

/// Whether ALSA has any sound card here (CI machines and this one have none).
let hasSoundCard: Bool = {
    guard let cards = try? String(contentsOfFile: "/proc/asound/cards", encoding: .utf8) else { return false }
    return !cards.contains("no soundcards") && !cards.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
}()

/// The suites that use espeak-ng, one test at a time: they share the process's one speech thread,
/// where one test's utterance would delay another's and blur its timings.
@Suite(.serialized, .timeLimit(.minutes(10))) enum SpeechThread {}

/// `Speaker.synthesize` off the cooperative pool: it blocks until the sink has everything.
func synthesize(
    _ text: String, settings: SpeechSettings = SpeechSettings(), kind: CueKind = .message, into sink: any AudioSink
) async throws -> UtteranceStats {
    try await offPool { try Speaker.synthesize(text, settings: settings, kind: kind, into: sink) }
}

/// The error `Speaker.synthesize` throws, or nil when it succeeds.
func synthesisError(_ text: String, settings: SpeechSettings = SpeechSettings(), into sink: any AudioSink) async -> SpeechError? {
    let result = try? await offPool { () -> SpeechError? in
        do throws(SpeechError) {
            _ = try Speaker.synthesize(text, settings: settings, into: sink)
            return nil
        } catch {
            return error
        }
    }
    return result ?? nil
}

/// A `Speaker`, made off the pool (it waits for espeak-ng to start and check the voice).
func makeSpeaker(
    settings: SpeechSettings = SpeechSettings(), sink: any AudioSink, muted: Bool = false, realTimePacing: Bool = true
) async throws -> Speaker {
    try await offPool { try Speaker(settings: settings, sink: sink, muted: muted, realTimePacing: realTimePacing) }
}

extension SoxStat {
    static func measure(_ path: String) async throws -> SoxStat {
        try await offPool { try SoxStat.of(path) }
    }
}

enum Sentences {
    static let short = "Five kilometres."
    static let summary = "Five kilometres in twenty five minutes and ten seconds. Average pace five minutes and two seconds per kilometre. Heart rate one hundred and forty eight."
    static let long = summary + " Last split four minutes and fifty eight seconds. Keep it up, you are on target for a new personal record over ten kilometres."
    static let sos = "Emergency alert sent."
}
