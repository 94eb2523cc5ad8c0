import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

// pacerctl: Pacer's command-line tool. Thin: each command lives in its own file.
struct PacerCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pacerctl",
        abstract: "Control and inspect Pacer, the running wearable's daemon.",
        version: "0.1.0",
        subcommands: [StatusCommand.self, RunControlCommand.self, RunsCommand.self, ReplayCommand.self, GoalsCommand.self, StrapCommand.self, HRCommand.self, ReadinessCommand.self, VoiceCommand.self, SpeakCommand.self, SOSCommand.self, SyncCommand.self, CloudCommand.self, PlanCommand.self, RaceCommand.self]
    )
}

/// `pacerctl --db PATH runs …`, `pacerctl --socket PATH status` and `pacerctl --config FILE goals` read naturally, but
/// ArgumentParser only takes options after the subcommand that declares them: move leading
/// store/config options to the end.
public enum PacerCtlMain {
    /// Runs the command line and exits: from the pacerctl binary, and from pacerd when it is
    /// started as pacerctl (the package's pacerctl is a link to pacerd: one copy of the Swift runtime).
    public static func main() -> Never {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var moved: [String] = []
        while arguments.count >= 2, ["--db", "--config", "--socket"].contains(arguments[0]) {
            moved += arguments.prefix(2)
            arguments.removeFirst(2)
        }
        PacerCtl.main(arguments + moved)
        exit(0)
    }
}
