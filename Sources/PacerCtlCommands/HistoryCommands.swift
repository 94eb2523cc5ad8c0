import ArgumentParser
import PacerCore
import PacerReplay
import Store
import Threads

#if canImport(Glibc)
import Glibc
#endif

extension PeriodKind: ExpressibleByArgument {}

/// UTC offsets from the C library's zone database (no ICU): `TZ` for a named zone, the system's
/// /etc/localtime otherwise. Asked per instant, so daylight-saving changes fall where they should.
struct ZoneOffsets {
    init(zone: String?) {
        if let zone { setenv("TZ", zone, 1) }
        tzset()
    }

    func offset(at time: Timestamp) -> Int {
        var seconds = time_t(time.milliseconds.floorDivided(by: 1000))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return 0 }
        return parts.tm_gmtoff
    }
}

extension Int64 {
    fileprivate func floorDivided(by d: Int64) -> Int64 { self >= 0 ? self / d : -((-self + d - 1) / d) }
}

struct TotalsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "totals", abstract: "Distance, time and runs per week, month or year.")
    @OptionGroup var store: RunsCommand.StoreOption
    @Option(help: "week (Monday to Sunday, ISO numbering), month or year.") var per: PeriodKind = .month
    @Option(help: ArgumentHelp("Time zone, e.g. Europe/Rome (default: [profile] timezone, else the system's).", valueName: "ZONE")) var tz: String?
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let runs = store.open(readOnly: true)
        let zone = ZoneOffsets(zone: tz ?? store.configuration.timeZone)
        let totals = PeriodTotals.totals(of: orFail { try runs.historyRuns() }, per: per, utcOffset: zone.offset(at:))
        if json {
            var w = JSONWriter()
            w.beginArray()
            for t in totals {
                w.beginObject()
                w.string("period", t.period.label)
                w.integer("runs", t.runCount)
                w.number("distance_m", t.distance, digits: 2)
                w.number("moving_time_s", t.movingTime, digits: 3)
                w.number("avg_pace_s_per_km", t.averagePacePerKm, digits: 1)
                w.endObject()
            }
            w.endArray()
            print(w.output)
            return
        }
        if totals.isEmpty { print("No runs recorded yet."); return }
        print("period       runs   distance    moving      pace")
        for t in totals {
            print(t.period.label.padding(10) + pad(String(t.runCount), 7) + "  " + pad(km(t.distance), 9) + "  "
                  + pad(clock(t.movingTime), 8) + "  " + pad(t.averagePacePerKm.map { clock($0) } ?? "-", 8))
        }
    }
}

struct RecordsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "records", abstract: "Personal records: the fastest 1 km, 5 km, 10 km, half and full marathon inside any run.")
    @OptionGroup var store: RunsCommand.StoreOption
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let records = orFail { try store.open(readOnly: true).personalRecords() }
        let list = RecordDistance.standard.map { ($0, records[$0]) }
        if json {
            var w = JSONWriter()
            w.beginArray()
            for (distance, record) in list {
                w.beginObject()
                w.string("distance", distance.name)
                w.number("distance_m", distance.meters, digits: 1)
                w.number("time_s", record?.effort.duration, digits: 3)
                w.number("pace_s_per_km", record?.effort.pacePerKm, digits: 1)
                w.integer("run", record.map { Int($0.runID) })
                w.time("start_time", record?.effort.start)
                w.endObject()
            }
            w.endArray()
            print(w.output)
            return
        }
        for (distance, record) in list {
            let text = record.map { "\(clock($0.effort.duration))  (\(clock($0.effort.pacePerKm)) /km, run \($0.runID), \($0.effort.start.iso8601.prefix(10)))" }
            print(distance.name.padding(14) + (text ?? "-"))
        }
    }
}

struct GoalsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goals", abstract: "Distance goals per week, month or year, with progress.",
        subcommands: [Show.self, Add.self, Remove.self], defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Goals and progress in the current period.")
        @OptionGroup var store: RunsCommand.StoreOption
        @Option(help: ArgumentHelp("Time zone (default: [profile] timezone, else the system's).", valueName: "ZONE")) var tz: String?

        func run() throws {
            let runs = store.open(readOnly: true)
            let zone = ZoneOffsets(zone: tz ?? store.configuration.timeZone)
            let now = Timestamp(milliseconds: WallClock.milliseconds())
            let history = orFail { try runs.historyRuns() }
            let goals = orFail { try runs.goals() }
            if goals.isEmpty { print("No goals. Add one: pacerctl goals add --period month --km 100"); return }
            for (id, goal) in goals {
                let totals = PeriodTotals.totals(of: history, per: goal.period, utcOffset: zone.offset(at:))
                let p = goal.progress(now: now, utcOffset: zone.offset(at:), totals: totals)
                let percent = Int((p.fraction * 100).rounded(.down))
                print("goal \(id): \(km(p.target)) per \(goal.period.rawValue), \(p.period.label): \(km(p.done)) done (\(percent) %)"
                      + (p.isMet ? ", met" : ", \(km(p.remaining)) to go"))
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a distance goal.")
        @OptionGroup var store: RunsCommand.StoreOption
        @Option(help: "week, month or year.") var period: PeriodKind
        @Option(help: "Target distance in kilometres.") var km: Double

        func run() throws {
            guard let goal = DistanceGoal(period: period, target: km * 1000) else {
                throw ValidationError("--km must be a positive number")
            }
            let id = orFail { try store.open(readOnly: false).addGoal(goal, at: Timestamp(milliseconds: WallClock.milliseconds())) }
            print("Added goal \(id): \(JSONWriter.fixed(km, digits: 1)) km per \(period.rawValue).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a goal.")
        @OptionGroup var store: RunsCommand.StoreOption
        @Argument(help: "The goal's number.") var id: Int64

        func run() throws {
            orFail { try store.open(readOnly: false).removeGoal(id) }
            print("Removed goal \(id).")
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
