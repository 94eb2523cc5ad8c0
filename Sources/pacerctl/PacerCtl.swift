import ArgumentParser

// pacerctl: Pacer's command-line tool. Thin: each command lives in its own file.
@main
struct PacerCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pacerctl",
        abstract: "Control and inspect Pacer, the running wearable's daemon.",
        version: "0.1.0",
        subcommands: [ReplayCommand.self, RunsCommand.self, GoalsCommand.self]
    )
}
