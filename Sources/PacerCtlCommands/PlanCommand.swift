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
        let listing: PlanListing
        switch source.open(readOnly: true) {
        case .daemon(let daemon):
            let reply = daemon.call("plan")
            if json {
                print(reply?.serialized() ?? "null")
                return
            }
            do {
                listing = try JSONDecoder().decode(PlanListing.self, from: Data((reply?.serialized() ?? "null").utf8))
            } catch {
                printError("pacerctl: pacerd's plan reply is not understood: \(error)")
                Glibc.exit(70)
            }
        case .file(let store):
            let configuration = source.store.configuration
            let linkFile = CloudSync.stateFilePath(beside: store.path, name: "cloud-link.json")
            let syncOn = configuration.upload.sync && (configuration.upload.url != nil || access(linkFile, F_OK) == 0)
            do {
                listing = try PlanListing.make(storePath: store.path, syncOn: syncOn, nowMs: WallClock.milliseconds(),
                                               followed: { (try? store.plannedSessionsFollowed(among: $0)) ?? [] })
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
