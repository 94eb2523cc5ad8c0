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
        abstract: "The races the runner is enrolled in, from the cloud: start, bib, course length.")

    @OptionGroup var source: RunsCommand.SourceOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let listing: RaceListing
        switch source.open(readOnly: true) {
        case .daemon(let daemon):
            let reply = daemon.call("race")
            if json {
                print(reply?.serialized() ?? "null")
                return
            }
            do {
                listing = try JSONDecoder().decode(RaceListing.self, from: Data((reply?.serialized() ?? "null").utf8))
            } catch {
                printError("pacerctl: pacerd's race reply is not understood: \(error)")
                Glibc.exit(70)
            }
        case .file(let store):
            let configuration = source.store.configuration
            let linkFile = CloudSync.stateFilePath(beside: store.path, name: "cloud-link.json")
            let syncOn = configuration.upload.sync && (configuration.upload.url != nil || access(linkFile, F_OK) == 0)
            do {
                listing = try RaceListing.make(storePath: store.path, syncOn: syncOn, nowMs: WallClock.milliseconds())
            } catch {
                printError("pacerctl: the last sync beside \(store.path) cannot be read: \(error)")
                Glibc.exit(74)
            }
            if json {
                print(String(decoding: (try? JSONEncoder().encode(listing)) ?? Data("null".utf8), as: UTF8.self))
                return
            }
        }
        print(listing.text)
    }
}
