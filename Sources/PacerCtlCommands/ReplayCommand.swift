import ArgumentParser
import FoundationEssentials
import PacerConfig
import PacerCore
import PacerReplay

#if canImport(Glibc)
import Glibc
#endif

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run the tracking pipeline offline over a recorded gpsd log, exactly as the daemon would.",
        discussion: """
            LOG is gpsd JSON, one object per line (what `gpspipe -w` writes). Lines that are not \
            JSON objects are skipped and counted; a malformed JSON line is an error unless \
            --skip-malformed is given. The HR log holds one {"time","bpm","rr_ms","contact"} per line. \
            Strap notifications the daemon recorded in the gpsd log ({"class":"HRM",...} lines) are \
            decoded and merged by their own time; malformed ones are skipped and counted.
            """
    )

    @Option(name: .customLong("gps"), help: ArgumentHelp("gpsd JSON log to replay.", valueName: "LOG"))
    var gpsPath: String

    @Option(name: .customLong("hr"), help: ArgumentHelp("Heart-rate log (JSON lines) to merge by time.", valueName: "LOG"))
    var heartRatePath: String?

    @Option(name: .customLong("config"), help: ArgumentHelp("Pacer config file (TOML).", valueName: "FILE"))
    var configPath: String?

    @Option(name: .customLong("workout"), help: ArgumentHelp("Workout file (TOML, see config/workouts/README.md): its steps and corrections are listed in the cues.", valueName: "FILE"))
    var workoutPath: String?

    @Option(name: .customLong("course"), help: ArgumentHelp("Race course (JSON, see README \"Races\"): progress along it, the start and finish crossings, gun and net time.", valueName: "COURSE.json"))
    var coursePath: String?

    @Option(name: .customLong("gun"), help: ArgumentHelp("With --course: the official start, ISO-8601 UTC (overrides the course's start_time).", valueName: "TIME"))
    var gun: String?

    @Flag(help: "Print one JSON document instead of the readable summary.")
    var json = false

    @Flag(help: "Skip malformed JSON lines (counted in input.malformed_lines) instead of failing.")
    var skipMalformed = false

    @Flag(help: "Print decode and pipeline timings to stderr.")
    var timings = false

    @Option(name: .customLong("record"), help: ArgumentHelp("Record the replayed run into this store, as the daemon would.", valueName: "DB"))
    var recordPath: String?

    @Option(help: ArgumentHelp("With --record: replay this many times faster than real time (default: as fast as possible).", valueName: "X"))
    var pace: Double?

    @Flag(help: "With --record: print the run time of every epoch once ingested (for crash tests).")
    var progress = false

    func validate() throws {
        if let pace, !(pace > 0) { throw ValidationError("--pace must be a positive number, got \(pace)") }
        if recordPath == nil, pace != nil || progress { throw ValidationError("--pace and --progress go with --record") }
        if gun != nil, coursePath == nil { throw ValidationError("--gun goes with --course") }
        if let gun, Timestamp(iso8601: gun) == nil { throw ValidationError("--gun must be ISO-8601 UTC, like 2026-05-10T07:30:00Z; got \(gun)") }
        if coursePath != nil, recordPath != nil { throw ValidationError("--course does not go with --record (yet): replay the race without recording it") }
    }

    func run() throws {
        // Replay uses defaults unless a config is named: the same log gives the same result anywhere.
        let configuration = configPath.map { loadConfiguration($0) } ?? PacerConfiguration()
        var workout: Workout?
        if let workoutPath {
            do {
                workout = try WorkoutFile.load(path: workoutPath)
            } catch {
                printError("pacerctl: \(error)")
                // sysexits: no such file (66), or a file that is there but wrong (65).
                if case .invalid = error { Glibc.exit(65) } else { Glibc.exit(66) }
            }
        }
        // The coach decides what the daemon would say; with voice off it says nothing (but a
        // workout asked for on the command line is coached regardless).
        let coach: Coach? = configuration.voice.enabled || workout != nil
            ? Coach(configuration: configuration.coach, workout: workout) : nil

        var race: RaceProgressTracker?
        if let coursePath {
            let file: RaceCourseFile
            do {
                file = try RaceCourseFile.load(path: coursePath)
            } catch {
                fail(error)
            }
            let gunTime = gun.flatMap { Timestamp(iso8601: $0) } ?? file.startTime
            race = RaceProgressTracker(course: file.course, configuration: RaceConfiguration(gunTime: gunTime, units: configuration.coach.units))
        }

        let clock = ContinuousClock()
        let start = clock.now
        let inputs: ReplayInputs
        do {
            inputs = try ReplayLoader.load(
                gpsPath: gpsPath, heartRatePath: heartRatePath, skipMalformed: skipMalformed, keepRawLines: recordPath != nil)
        } catch {
            fail(error)
        }
        let loaded = clock.now
        let report: ReplayReport
        if let recordPath {
            do {
                report = try ReplayRecording.record(inputs, configuration: configuration.tracking, coach: coach, into: recordPath,
                                                    pace: pace, progress: progress)
            } catch {
                printError("pacerctl: \(recordPath): \(error)")
                Glibc.exit(74)
            }
        } else {
            // The SOS watcher runs when the config enables it ([sos] enabled, or an age of 60+).
            let watcher = configuration.sos.rules.enabled ? VitalsWatcher(rules: configuration.sos.rules) : nil
            report = Replay.run(inputs, configuration: configuration.tracking, coach: coach, watcher: watcher, race: race)
        }
        let processed = clock.now

        for line in report.stats.gpsdErrors { printError("pacerctl: \(line)") }
        for warning in report.warnings { printError("pacerctl: warning: \(warning.text)") }
        if report.stats.malformedLines > 0 {
            printError("pacerctl: warning: skipped \(report.stats.malformedLines) malformed JSON line(s) in \(gpsPath)")
        }
        if report.stats.hrmMalformed > 0 {
            printError("pacerctl: warning: skipped \(report.stats.hrmMalformed) malformed HRM line(s) in \(gpsPath)")
        }
        if report.counts.accepted == 0 {
            printError("pacerctl: warning: \(gpsPath) holds no usable GPS fix")
        }
        print(json ? report.json() : report.text(), terminator: "")

        if timings {
            let decodeMs = Self.milliseconds(loaded - start)
            let coreMs = Self.milliseconds(processed - loaded)
            let epochs = report.counts.accepted
            let rate = coreMs > 0 ? Double(report.stats.tpvReports) / (coreMs / 1000) : 0
            printError("timings: lines=\(report.stats.gpsLines) tpv=\(report.stats.tpvReports) epochs=\(epochs) "
                + "decode_ms=\(Self.format(decodeMs)) core_ms=\(Self.format(coreMs)) "
                + "total_ms=\(Self.format(decodeMs + coreMs)) core_tpv_per_s=\(Int(rate)) "
                + "core_epochs_per_s=\(coreMs > 0 ? Int(Double(epochs) / (coreMs / 1000)) : 0)"
                + (recordPath != nil ? " write_bytes=\(Self.writeBytes().map(String.init) ?? "unknown")" : ""))
        }
    }

    /// Bytes this process caused to be written to storage (/proc/self/io), for tools/bench-storage.
    private static func writeBytes() -> Int? {
        guard let data = try? Data(contentsOf: URL(filePath: "/proc/self/io")) else { return nil }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("write_bytes:") {
            return Int(line.dropFirst("write_bytes:".count).trimmingPrefix(" "))
        }
        return nil
    }

    private static func milliseconds(_ d: Duration) -> Double {
        let c = d.components
        return Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15
    }

    private static func format(_ ms: Double) -> String {
        String(Double(Int(ms * 1000)) / 1000)
    }
}

func printError(_ text: String) {
    // `stderr` is a C global that Swift 6 rejects as shared mutable state; write(2) is not.
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// Exits with the error's own status; input errors are reported, never thrown as crashes.
func fail(_ error: ReplayError) -> Never {
    printError("pacerctl: \(error.message)")
    exit(error.exitStatus)
}
