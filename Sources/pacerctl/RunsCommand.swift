import ArgumentParser
import PacerConfig
import PacerCore
import PacerReplay
import Store

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
        @Option(name: .customLong("db"), help: ArgumentHelp("The store file (default: [storage] database in the config, /var/lib/pacer/pacer.db).", valueName: "PATH"))
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

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Runs, newest first.")
        @OptionGroup var store: StoreOption
        @Option(help: "Runs per page.") var limit = 20
        @Option(help: "Page number, from 1.") var page = 1
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard limit > 0, page > 0 else { throw ValidationError("--limit and --page must be positive") }
        }

        func run() throws {
            let runs = store.open(readOnly: true)
            let (items, total) = orFail { (try runs.runs(limit: limit, offset: (page - 1) * limit), try runs.runCount()) }
            if json {
                var w = JSONWriter()
                w.beginObject()
                w.integer("total", total)
                w.beginArray("runs")
                for run in items { w.run(nil, run) }
                w.endArray()
                w.endObject()
                print(w.output)
                return
            }
            if items.isEmpty {
                print(total == 0 ? "No runs recorded yet." : "No runs on page \(page) (\(total) runs in all).")
                return
            }
            print("  run  date                  distance    moving      pace  state")
            for run in items {
                let iso = run.startTime.iso8601
                let date = String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(5)) + "Z"
                print(pad(String(run.id), 5) + "  " + date + "  " + pad(km(run.distance), 9) + "  "
                      + pad(clock(run.movingTime), 8) + "  " + pad(run.averagePacePerKm.map { clock($0) } ?? "-", 8)
                      + "  " + run.state.rawValue + (run.uploadState == .uploaded ? "" : ", not uploaded"))
            }
            let pages = (total + limit - 1) / limit
            if pages > 1 { print("page \(page) of \(pages) (\(total) runs)") }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One run: summary, splits, laps and heart rate.")
        @OptionGroup var store: StoreOption
        @Argument(help: "The run's number.") var id: Int64
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let runs = store.open(readOnly: true)
            let detail = orFail { try runs.detail(id) }
            if json {
                var w = JSONWriter()
                w.beginObject()
                w.run("run", detail.run)
                w.beginArray("splits")
                for s in detail.splits {
                    w.beginObject()
                    w.integer("index", s.index)
                    w.number("distance_m", s.distance, digits: 2)
                    w.number("time_s", s.time, digits: 3)
                    w.number("pace_s_per_km", s.pacePerKm, digits: 1)
                    w.endObject()
                }
                w.endArray()
                w.beginArray("laps")
                for l in detail.laps {
                    w.beginObject()
                    w.integer("index", l.index)
                    w.number("distance_m", l.distance, digits: 2)
                    w.number("time_s", l.time, digits: 3)
                    w.endObject()
                }
                w.endArray()
                w.beginObject("heart_rate")
                w.integer("readings", detail.heartRate?.readings ?? 0)
                w.number("avg", detail.heartRate?.average, digits: 1)
                w.integer("min", detail.heartRate?.minimum)
                w.integer("max", detail.heartRate?.maximum)
                w.endObject()
                w.integer("samples", detail.sampleCount)
                w.endObject()
                print(w.output)
                return
            }
            let run = detail.run
            print("Run \(run.id)  \(run.startTime.iso8601)  (\(run.state.rawValue), upload \(run.uploadState.rawValue))")
            print("Distance      \(km(run.distance))")
            print("Moving time   \(clock(run.movingTime))")
            print("Elapsed time  \(clock(run.elapsedTime))")
            print("Average pace  \(run.averagePacePerKm.map { clock($0) + " /km" } ?? "-")")
            if let hr = detail.heartRate {
                print("Heart rate    avg \(Int(hr.average.rounded())), min \(hr.minimum), max \(hr.maximum) bpm (\(hr.readings) readings)")
            }
            if !detail.splits.isEmpty {
                print("\n  #   distance      time      pace")
                for s in detail.splits {
                    print(pad(String(s.index), 3) + "  " + pad(km(s.distance), 9) + "  " + pad(clock(s.time), 8) + "  "
                          + pad(s.pacePerKm.map { clock($0) + " /km" } ?? "-", 11))
                }
            }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a run and its data (its alerts are kept).")
        @OptionGroup var store: StoreOption
        @Argument(help: "The run's number.") var id: Int64

        func run() throws {
            let runs = store.open(readOnly: false)
            orFail { try runs.deleteRun(id) }
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

func km(_ metres: Double) -> String { JSONWriter.fixed(metres / 1000, digits: 2) + " km" }
func clock(_ seconds: Double) -> String { ReplayReport.clock(seconds) }
func pad(_ text: String, _ width: Int) -> String { ReplayReport.padLeft(text, width) }

extension JSONWriter {
    mutating func run(_ key: String? = nil, _ run: StoredRun) {
        beginObject(key)
        integer("id", Int(run.id))
        string("uuid", run.uuid)
        string("state", run.state.rawValue)
        time("start_time", run.startTime)
        time("end_time", run.endTime)
        number("distance_m", run.distance, digits: 2)
        number("moving_time_s", run.movingTime, digits: 3)
        number("elapsed_time_s", run.elapsedTime, digits: 3)
        number("avg_pace_s_per_km", run.averagePacePerKm, digits: 1)
        number("max_speed_mps", run.maxSpeed, digits: 3)
        number("hr_avg", run.heartRateAverage, digits: 1)
        integer("hr_max", run.heartRateMax)
        string("upload_state", run.uploadState.rawValue)
        bool("raw_pruned", run.rawPruned)
        endObject()
    }
}
