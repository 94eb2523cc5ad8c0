import ArgumentParser
import PacerCore
import Store
import Threads

/// `pacerctl runs prune`: retention by hand (the daemon applies `[storage] keep_raw_days` itself).
struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Remove the raw gpsd lines of uploaded runs older than N days (summaries, samples and heart rate stay).")
    @OptionGroup var store: RunsCommand.StoreOption
    @Option(name: .customLong("raw-older-than-days"), help: "Age in days (default: [storage] keep_raw_days, 30).") var days: Int?

    func validate() throws {
        if let days, days < 0 { throw ValidationError("--raw-older-than-days must be 0 or more") }
    }

    func run() throws {
        guard let days = days ?? store.configuration.keepRawDays else {
            print("Raw gpsd lines are kept for ever ([storage] keep_raw_days = 0): nothing to prune.")
            return
        }
        let now = WallClock.milliseconds()
        let cutoff = Timestamp(milliseconds: now - Int64(days) * 86_400_000)
        let pruned = orFail { try store.open(readOnly: false).pruneRawLines(endedBefore: cutoff) }
        print(pruned.isEmpty ? "Nothing to prune." : "Removed the raw gpsd lines of \(pruned.count) run(s): \(pruned.map(String.init).joined(separator: ", ")).")
    }
}
