import ArgumentParser
import CloudSync
import Threads

/// `pacerctl race`: the races pacerd fetched from the cloud for its runner, from pacerd, or
/// with `--db` (or when no pacerd answers) from its state directory.
struct RaceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "race",
        abstract: "The races the runner is enrolled in, from the cloud: start, bib, course length.")

    @OptionGroup var source: RunsCommand.SourceOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        SyncedListing.show(source, command: "race", json: json, make: { store, syncOn in
            try RaceListing.make(storePath: store.path, syncOn: syncOn, nowMs: WallClock.milliseconds())
        }, text: \.text)
    }
}
