import ArgumentParser
import Speech

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl speak TEXT [--wav FILE] [--voice V] [--rate WPM]`: say a sentence with Pacer's own
/// speech path. With `--wav` it is synthesized here, by the same code pacerd uses, into a file;
/// without, pacerd says it through its speaker (as a `message` cue, so it waits its turn).
struct SpeakCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speak",
        abstract: "Say a sentence: into a WAV file here (--wav), or through pacerd's speaker.",
        discussion: """
            With --wav FILE the sentence is synthesized locally with espeak-ng into a 16-bit mono \
            WAV file; pacerd is not needed. Without it, pacerd speaks it. Examples: \
            pacerctl speak "Five kilometres" --wav /tmp/cue.wav; pacerctl speak "Testing, one, two"
            """
    )

    @Argument(help: ArgumentHelp("The sentence, as it is to be spoken; several arguments are joined with spaces.", valueName: "TEXT"))
    var words: [String]

    @Option(name: .customLong("wav"), help: ArgumentHelp("Write the speech to this WAV file instead of asking pacerd.", valueName: "FILE"))
    var wavPath: String?

    @Option(help: ArgumentHelp("With --wav: the espeak-ng voice (espeak-ng --voices lists them); pacerd uses its [voice] voice.", valueName: "NAME"))
    var voice = "en"

    @Option(help: ArgumentHelp("With --wav: words per minute (80-450); pacerd uses its [voice] rate_wpm.", valueName: "WPM"))
    var rate = 175

    @OptionGroup var options: DaemonOptions

    var text: String { words.joined(separator: " ") }

    func validate() throws {
        if text.allSatisfy(\.isWhitespace) { throw ValidationError("TEXT is empty: give the sentence to say") }
        if wavPath?.isEmpty == true { throw ValidationError("--wav needs a file name") }
        do {
            try settings.validate()
        } catch {
            // "rate: 20 words per minute is outside 80-450" names the option it came from.
            throw ValidationError("--" + error.description)
        }
    }

    private var settings: SpeechSettings { SpeechSettings(voice: voice, wordsPerMinute: rate) }

    func run() throws {
        guard let wavPath else {
            // Through pacerd, so its arbiter keeps this from talking over a cue (or an SOS).
            let reply = options.connect().call("speak", ["text": .string(text)])
            if options.json { print(reply?.serialized() ?? "null") }
            return
        }
        do {
            let stats = try Speaker.synthesize(text, settings: settings, into: WAVSink(file: wavPath))
            print("\(wavPath): \(Self.seconds(stats.audioSeconds)) s of speech (\(stats.sampleCount) samples at \(stats.sampleRate) Hz)")
        } catch {
            printError("pacerctl: \(error)")
            if case .file = error { Glibc.exit(73) }  // EX_CANTCREAT, as `runs export -o` does
            Glibc.exit(70)  // EX_SOFTWARE: espeak-ng could not say it
        }
    }

    private static func seconds(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
