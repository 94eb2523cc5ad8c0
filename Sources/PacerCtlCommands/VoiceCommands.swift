import ArgumentParser
import Control

/// `pacerctl readiness`: pacerd says (and pacerctl prints) "GPS 3D fix. Heart rate 72. Battery 80
/// percent. 3 runs waiting for upload."
struct ReadinessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "readiness", abstract: "Have pacerd speak the readiness check: GPS, heart rate, battery, uploads waiting.")
    @OptionGroup var options: DaemonOptions

    func run() throws {
        let status = options.connect().call("readiness")
        if options.json {
            print(status?.serialized() ?? "null")
        } else {
            print(status?["readiness"]?.stringValue ?? "(no readiness sentence in the reply)")
        }
    }
}

/// `pacerctl voice mute|unmute`: the coach falls silent; safety and SOS messages never do.
struct VoiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voice", abstract: "Mute or unmute the coach (safety and SOS messages are always spoken).")

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case mute, unmute
    }

    @Argument(help: "mute or unmute.") var action: Action
    @OptionGroup var options: DaemonOptions

    func run() throws {
        let reply = options.connect().call("voice.mute", ["muted": .bool(action == .mute)])
        if options.json {
            print(reply?.serialized() ?? "null")
        } else {
            print(action == .mute ? "coach muted (safety and SOS messages are still spoken)" : "coach unmuted")
        }
    }
}
