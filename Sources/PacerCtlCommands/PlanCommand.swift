import ArgumentParser
import CloudSync
import Threads

/// `pacerctl plan`: the training plan pacerd fetched from the cloud, from pacerd, or with
/// `--db` (or when no pacerd answers) from its state directory.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "The training plan from the cloud: the sessions of the next 7 days, which is today, which were run.",
        discussion: "A short press (or pacerctl run start --planned) starts today's next session; see README \"What a start starts\".")

    @OptionGroup var source: RunsCommand.SourceOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        SyncedListing.show(source, command: "plan", json: json, make: { store, syncOn in
            try PlanListing.make(storePath: store.path, syncOn: syncOn, nowMs: WallClock.milliseconds(),
                              followed: { (try? store.plannedSessionsFollowed(among: $0)) ?? [] })
        }, text: \.text)
    }
}
