import ArgumentParser
import Control
import FoundationEssentials
import PacerCore
import PacerReplay
import RunViews
import Store

extension RunExportFormat: ExpressibleByArgument {}

#if canImport(Glibc)
import Glibc
#endif

/// `pacerctl runs export`: one run, or every run as a backup.
struct ExportCommand: ParsableCommand {
    typealias Format = RunExportFormat

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a run (GPX, TCX, FIT, its raw gpsd lines or its heart rate), or all runs into a folder.",
        discussion: "Examples: pacerctl runs export 12 --format gpx -o run12.gpx; pacerctl runs export --all /media/usb/backup"
    )

    @OptionGroup var source: RunsCommand.SourceOptions
    @Argument(help: "The run's number (omit with --all).") var id: Int64?
    @Option(help: "gpx, tcx, fit, gpsd or hr.") var format: Format = .gpx
    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("File to write (default: standard output).", valueName: "FILE"))
    var output: String?
    @Option(name: .customLong("all"), help: ArgumentHelp("Export every run into this folder, in every format.", valueName: "DIR"))
    var allDirectory: String?

    func validate() throws {
        if (id == nil) == (allDirectory == nil) { throw ValidationError("give a run number or --all DIR") }
        if allDirectory != nil, output != nil { throw ValidationError("--output goes with one run, not --all") }
    }

    func run() throws {
        let source = source.open(readOnly: true)
        if let id {
            export(source, id, format, to: output)
            return
        }
        let directory = allDirectory!
        if mkdir(directory, 0o755) != 0, errno != EEXIST {
            printError("pacerctl: \(directory): \(String(cString: strerror(errno)))")
            Glibc.exit(73)  // EX_CANTCREAT
        }
        let total = Self.count(source)
        var progress = ProgressBar(total: total * Format.allCases.count)
        var offset = 0
        var exported = 0
        while true {
            let page = Self.page(source, offset: offset)
            if page.isEmpty { break }
            for run in page {
                for format in Format.allCases {
                    // A run whose raw lines retention removed has no gpsd export; everything else does.
                    if format == .gpsd, run.rawPruned { progress.advance(); continue }
                    export(source, run.id, format, to: "\(directory)/run-\(run.id).\(format.fileExtension)")
                    progress.advance()
                }
                exported += 1
            }
            offset += page.count
        }
        progress.finish()
        print("Exported \(exported) runs to \(directory).")
    }

    private static func count(_ source: RunsCommand.SourceOptions.Source) -> Int {
        switch source {
        case .daemon(let daemon): daemon.call("runs.list", ["limit": 1, "offset": 0, "view": "json"])?["total"]?.intValue ?? 0
        case .file(let runs): orFail { try runs.runCount() }
        }
    }

    private static func page(_ source: RunsCommand.SourceOptions.Source, offset: Int) -> [(id: Int64, rawPruned: Bool)] {
        switch source {
        case .daemon(let daemon):
            let reply = daemon.call("runs.list", ["limit": 100, "offset": JSONValue(offset), "view": "json"])
            return (reply?["runs"]?.arrayValue ?? []).compactMap { run in
                run["id"]?.intValue.map { (Int64($0), run["raw_pruned"]?.boolValue ?? false) }
            }
        case .file(let runs):
            return orFail { try runs.runs(limit: 100, offset: offset) }.map { ($0.id, $0.rawPruned) }
        }
    }

    private func export(_ source: RunsCommand.SourceOptions.Source, _ id: Int64, _ format: Format, to path: String?) {
        let file: OutputFile
        do { file = try OutputFile(path: path) } catch {
            printError("pacerctl: \(error)")
            Glibc.exit(73)
        }
        do {
            switch source {
            case .daemon(let daemon):
                do {
                    try daemon.client.call("runs.export", ["run": JSONValue(Int(id)), "format": .string(format.rawValue)]) { chunk in
                        guard format == .fit else { return try file.write(chunk) }
                        // FIT comes base64 in pieces of whole 4-character groups (RunExporter.export).
                        guard let bytes = Data(base64Encoded: chunk) else { throw OutputError(path: path ?? "standard output", reason: "pacerd sent FIT that is not base64") }
                        try file.write(bytes: Array(bytes))
                    }
                } catch let error as ControlError where error.code == .notFound {
                    file.abandon()
                    printError("pacerctl: exporting run \(id): \(error.message)")
                    Glibc.exit(66)
                }
            case .file(let runs):
                try RunExporter.exportBytes(runs, id, format) { bytes in try file.write(bytes: bytes) }
            }
            try file.commit()
        } catch {
            file.abandon()
            printError("pacerctl: exporting run \(id): \(error)")
            if let error = error as? StoreError, case .noSuchRun = error { Glibc.exit(66) }
            Glibc.exit(74)
        }
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
