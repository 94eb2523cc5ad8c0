import ArgumentParser
import CloudSync
import Control
import FoundationEssentials
import PacerConfig
import Store
import Threads

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl race`: the races pacerd fetched from the cloud for its runner, from pacerd, or
/// with `--db` (or when no pacerd answers) from its state directory.
struct RaceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "race",
        abstract: "The races the runner is enrolled in, from the cloud: start, bib, course length; race mode on and off.",
        discussion: "Examples: pacerctl race; pacerctl race start; pacerctl race start 6f1c4b6e-…; pacerctl race stop.")

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case start, stop
    }

    @Argument(help: "start [ID]: race mode for that race (default: the only or next one), starting a run when none records; stop: race mode off. None: list the races.")
    var action: Action?
    @Argument(help: "With start: the race's id, as pacerctl race lists it.") var id: String?
    @OptionGroup var source: RunsCommand.SourceOptions
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if id != nil, action != .start { throw ValidationError("a race id goes with `race start`") }
        if action != nil, source.store.databasePath != nil { throw ValidationError("--db goes with the listing; race start and stop go to pacerd") }
    }

    func run() throws {
        if let action {
            // Race mode is pacerd's: refused clearly when it is not there (69) or has no race (75).
            let daemon = DaemonConnection.connect(socket: source.socket, configuration: source.store.configuration, required: true)!
            var arguments: [String: JSONValue] = [:]
            if let id { arguments["race"] = .string(id) }
            printStatus(daemon.call("race.\(action.rawValue)", arguments), json: json)
            return
        }
        SyncedListing.show(source, command: "race", json: json, make: { store, syncOn in
            try RaceListing.make(storePath: store.path, syncOn: syncOn, nowMs: WallClock.milliseconds())
        }, text: \.text)
    }
}
