import ArgumentParser
import Export
import PacerCore
import PacerReplay
import Store

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl runs export`: one run, or every run as a backup.
struct ExportCommand: ParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        /// GPX 1.1 with heart rate (Garmin TrackPointExtension).
        case gpx
        case tcx
        /// The gpsd JSON lines as recorded: `pacerctl replay --gps` of it reproduces the run.
        case gpsd
        /// Heart-rate readings as JSON lines, the format `pacerctl replay --hr` reads.
        case hr

        var fileExtension: String {
            switch self {
            case .gpx: "gpx"
            case .tcx: "tcx"
            case .gpsd: "gpsd.jsonl"
            case .hr: "hr.jsonl"
            }
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a run (GPX, TCX, its raw gpsd lines or its heart rate), or all runs into a folder.",
        discussion: "Examples: pacerctl runs export 12 --format gpx -o run12.gpx; pacerctl runs export --all /media/usb/backup"
    )

    @OptionGroup var store: RunsCommand.StoreOption
    @Argument(help: "The run's number (omit with --all).") var id: Int64?
    @Option(help: "gpx, tcx, gpsd or hr.") var format: Format = .gpx
    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("File to write (default: standard output).", valueName: "FILE"))
    var output: String?
    @Option(name: .customLong("all"), help: ArgumentHelp("Export every run into this folder, in every format.", valueName: "DIR"))
    var allDirectory: String?

    func validate() throws {
        if (id == nil) == (allDirectory == nil) { throw ValidationError("give a run number or --all DIR") }
        if allDirectory != nil, output != nil { throw ValidationError("--output goes with one run, not --all") }
    }

    func run() throws {
        let runs = store.open(readOnly: true)
        if let id {
            exportOrFail(runs, id, format, to: output)
            return
        }
        let directory = allDirectory!
        if mkdir(directory, 0o755) != 0, errno != EEXIST {
            printError("pacerctl: \(directory): \(String(cString: strerror(errno)))")
            Glibc.exit(73)  // EX_CANTCREAT
        }
        let total = orFail { try runs.runCount() }
        var progress = ProgressBar(total: total * Format.allCases.count)
        var offset = 0
        while true {
            let page = orFail { try runs.runs(limit: 100, offset: offset) }
            if page.isEmpty { break }
            for run in page {
                for format in Format.allCases {
                    // A run whose raw lines retention removed has no gpsd export; everything else does.
                    if format == .gpsd, run.rawPruned { progress.advance(); continue }
                    exportOrFail(runs, run.id, format, to: "\(directory)/run-\(run.id).\(format.fileExtension)")
                    progress.advance()
                }
            }
            offset += page.count
        }
        progress.finish()
        print("Exported \(total) runs to \(directory).")
    }

    private func exportOrFail(_ runs: RunStore, _ id: Int64, _ format: Format, to path: String?) {
        let file: OutputFile
        do { file = try OutputFile(path: path) } catch {
            printError("pacerctl: \(error)")
            Glibc.exit(73)
        }
        do {
            try Self.export(runs, id, format, into: file)
            try file.commit()
        } catch {
            file.abandon()
            printError("pacerctl: exporting run \(id): \(error)")
            if let error = error as? StoreError, case .noSuchRun = error { Glibc.exit(66) }
            Glibc.exit(74)
        }
    }

    static func export(_ runs: RunStore, _ id: Int64, _ format: Format, into file: OutputFile) throws {
        switch format {
        case .gpsd:
            try runs.forEachRawLine(id) { line in try file.write(String(line) + "\n") }
        case .hr:
            try runs.forEachTrackChunk(id) { _, readings in
                for r in readings {
                    var w = JSONWriter(capacity: 96)
                    w.beginObject()
                    w.time("time", r.time)
                    w.integer("bpm", r.bpm)
                    w.beginArray("rr_ms")
                    for rr in r.rrIntervalsMs { w.number(nil, rr, digits: 0) }
                    w.endArray()
                    if let contact = r.contact { w.bool("contact", contact) } else { w.string("contact", nil) }
                    w.endObject()
                    try file.write(w.output + "\n")
                }
            }
        case .gpx, .tcx:
            let detail = try runs.detail(id)
            let run = detail.run
            var lapStart = run.startTime
            let laps = detail.laps.map { lap in
                defer { lapStart = lap.endTime }
                return ExportLap(startTime: lapStart, time: lap.time, distance: lap.distance)
            }
            let exportRun = ExportRun(
                name: "Pacer run \(run.id)", startTime: run.startTime, distance: run.distance, movingTime: run.movingTime,
                elapsedTime: run.elapsedTime, averageHeartRate: run.heartRateAverage, maxHeartRate: run.heartRateMax, laps: laps)
            var writer = (format == .gpx ? ExportFormat.gpx : ExportFormat.tcx).makeWriter { text in try file.write(text) }
            try writer.begin(exportRun)
            // A reading stamped with the same instant as a fix can land in the next batch (the fix
            // closed the batch), so each batch's samples wait until the next batch's readings are in.
            var heart = HeartRateAligner()
            var waiting: [TrackSample] = []
            func emit(_ samples: [TrackSample]) throws {
                for s in samples {
                    try writer.add(ExportPoint(time: s.time, coordinate: s.coordinate,
                                               heartRate: heart.bpm(at: s.time), distance: s.distance))
                }
            }
            try runs.forEachTrackChunk(id) { samples, readings in
                heart.append(readings)
                try emit(waiting)
                waiting = samples
            }
            try emit(waiting)
            try writer.end()
        }
    }
}

/// Gives each GPS sample the heart rate a strap reported around it: the latest valid reading at
/// most 2.5 s old (1 Hz straps, one notification lost), never one from the future.
struct HeartRateAligner {
    private var pending: [HeartRateSample] = []
    private var index = 0
    private var latest: HeartRateSample?

    mutating func append(_ readings: [HeartRateSample]) {
        pending.removeFirst(index)
        index = 0
        pending += readings
    }

    mutating func bpm(at time: Timestamp) -> Int? {
        while index < pending.count, pending[index].time <= time {
            if pending[index].isValid { latest = pending[index] } else { latest = nil }
            index += 1
        }
        guard let latest, time.seconds(since: latest.time) <= 2.5 else { return nil }
        return latest.bpm
    }
}

/// A progress bar on standard error when it is a terminal; silence otherwise (logs, pipes).
struct ProgressBar {
    let total: Int
    private var done = 0
    private let enabled = isatty(2) == 1

    init(total: Int) { self.total = total }

    mutating func advance() {
        done += 1
        guard enabled, total > 0 else { return }
        let width = 30
        let filled = done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let bytes = Array("\r[\(bar)] \(done)/\(total)".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    func finish() {
        guard enabled, total > 0 else { return }
        _ = write(2, "\n", 1)
    }
}
