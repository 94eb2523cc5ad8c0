import ArgumentParser
import CloudSync
import Control
import FoundationEssentials
import PacerConfig
import Store

#if canImport(Glibc)
import Glibc
#endif

/// What `pacerctl plan` and `pacerctl race` share: a listing made from the last sync, asked of
/// pacerd (`command` over the control socket) or, when it does not answer or with `--db`, made
/// here from the state directory beside the store; printed as text or JSON.
enum SyncedListing {
    static func show<Listing: Codable>(_ source: RunsCommand.SourceOptions, command: String, json: Bool,
                                       make: (_ store: RunStore, _ syncOn: Bool) throws -> Listing, text: (Listing) -> String) {
        let listing: Listing
        switch source.open(readOnly: true) {
        case .daemon(let daemon):
            let reply = daemon.call(command)
            if json {
                print(reply?.serialized() ?? "null")
                return
            }
            do {
                listing = try JSONDecoder().decode(Listing.self, from: Data((reply?.serialized() ?? "null").utf8))
            } catch {
                printError("pacerctl: pacerd's \(command) reply is not understood: \(error)")
                Glibc.exit(70)
            }
        case .file(let store):
            let configuration = source.store.configuration
            let linkFile = CloudSync.stateFilePath(beside: store.path, name: "cloud-link.json")
            let syncOn = configuration.upload.sync && (configuration.upload.url != nil || access(linkFile, F_OK) == 0)
            do {
                listing = try make(store, syncOn)
            } catch {
                printError("pacerctl: the last sync beside \(store.path) cannot be read: \(error)")
                Glibc.exit(74)
            }
            if json {
                print(String(decoding: (try? JSONEncoder().encode(listing)) ?? Data("null".utf8), as: UTF8.self))
                return
            }
        }
        print(text(listing))
    }
}
