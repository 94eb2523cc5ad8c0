import ArgumentParser
import PacerConfig
import PacerCore
import PacerReplay
import RunViews
import Store
import Control

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl runs …`: "my runs", read from a store file (a copy works too).
struct RunsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs",
        abstract: "List, show and delete recorded runs.",
        subcommands: [List.self, Show.self, Delete.self, ExportCommand.self, TotalsCommand.self, RecordsCommand.self, PruneCommand.self]
    )

    struct StoreOption: ParsableArguments {
        @Option(name: .customLong("db"), help: ArgumentHelp("The store file (default: [storage] path in the config, /var/lib/pacer/pacer.db).", valueName: "PATH"))
        var databasePath: String?

        @Option(name: .customLong("config"), help: ArgumentHelp("Config file (default: \(PacerConfiguration.defaultPath) when present).", valueName: "FILE"))
        var configPath: String?

        var configuration: PacerConfiguration { loadConfiguration(configPath) }

        var path: String { databasePath ?? configuration.databasePath }

        func open(readOnly: Bool) -> RunStore {
            let path = self.path
            guard access(path, F_OK) == 0 else {
                printError("pacerctl: \(path): no such store (is pacerd installed, or give --db PATH)")
                Glibc.exit(66)
            }
            return orFail { try RunStore(path: path, readOnly: readOnly) }
        }
    }

    /// Where list, show, export and delete go: pacerd's socket, or with `--db` (or when no daemon
    /// answers) the store file itself.
    struct SourceOptions: ParsableArguments {
        @OptionGroup var store: StoreOption
        @Option(help: ArgumentHelp("pacerd's control socket (default: $PACER_SOCKET, else [control] socket in the config, else /run/pacer/control.sock).", valueName: "PATH"))
        var socket: String?

        enum Source {
            case daemon(DaemonConnection)
            case file(RunStore)
        }

        func open(readOnly: Bool) -> Source {
            if store.databasePath == nil,
               let connection = DaemonConnection.connect(socket: socket, configuration: store.configuration, required: socket != nil) {
                return .daemon(connection)
            }
            return .file(store.open(readOnly: readOnly))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Runs, newest first.")
        @OptionGroup var source: SourceOptions
        @Option(help: "Runs per page.") var limit = 20
        @Option(help: "Page number, from 1.") var page = 1
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard limit > 0, page > 0 else { throw ValidationError("--limit and --page must be positive") }
        }

        func run() throws {
            switch source.open(readOnly: true) {
            case .daemon(let daemon):
                let reply = daemon.call("runs.list", ["limit": JSONValue(limit), "offset": JSONValue((page - 1) * limit),
                                                      "view": .string(json ? "json" : "text")])
                print(json ? reply?.serialized() ?? "null" : reply?["text"]?.stringValue ?? "")
            case .file(let runs):
                let (items, total) = orFail { (try runs.runs(limit: limit, offset: (page - 1) * limit), try runs.runCount()) }
                print(json ? RunViews.listJSON(items, total: total) : RunViews.listText(items, total: total, page: page, limit: limit))
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One run: summary, splits, laps and heart rate.")
        @OptionGroup var source: SourceOptions
        @Argument(help: "The run's number.") var id: Int64
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            switch source.open(readOnly: true) {
            case .daemon(let daemon):
                let reply = daemon.call("runs.show", ["run": JSONValue(Int(id)), "view": .string(json ? "json" : "text")])
                print(json ? reply?.serialized() ?? "null" : reply?["text"]?.stringValue ?? "")
            case .file(let runs):
                let detail = orFail { try runs.detail(id) }
                print(json ? RunViews.detailJSON(detail) : RunViews.detailText(detail))
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a run and its data (its alerts are kept).")
        @OptionGroup var source: SourceOptions
        @Argument(help: "The run's number.") var id: Int64

        func run() throws {
            switch source.open(readOnly: false) {
            case .daemon(let daemon):
                daemon.call("runs.delete", ["run": JSONValue(Int(id))])
            case .file(let runs):
                orFail { try runs.deleteRun(id) }
            }
            print("Deleted run \(id).")
        }
    }
}

/// Runs a store call; an error becomes a message and an exit status, never a crash.
func orFail<T>(_ body: () throws -> T) -> T {
    do {
        return try body()
    } catch let error as StoreError {
        printError("pacerctl: \(error)")
        switch error {
        case .noSuchRun, .noSuchGoal: exit(66)
        default: break
        }
        exit(74)
    } catch {
        printError("pacerctl: \(error)")
        exit(74)
    }
}

func km(_ metres: Double) -> String { RunViews.km(metres) }
func clock(_ seconds: Double) -> String { RunViews.clock(seconds) }
func pad(_ text: String, _ width: Int) -> String { RunViews.pad(text, width) }
