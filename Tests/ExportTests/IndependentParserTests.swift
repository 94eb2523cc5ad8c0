import Foundation
import PacerTestSupport
import Testing
import PacerCore
import Export

/// The acceptance check: a 3 h 40 min synthetic run (13,200 points at 1 Hz, heart rate on most,
/// 40 laps, three broken fixes) exported to files and read back by independent parsers from
/// PyPI, gpxpy and python-tcxparser, through tools/verify-export. They must find the same points:
/// count, coordinates within 1e-7°, times, heart rates.
///
/// Needs python3 with gpxpy and python-tcxparser, which tools/setup installs. Without them these
/// tests fail (they do not skip): the export is not verified.
@Suite(.serialized, .timeLimit(.minutes(10))) struct IndependentParserTests {
    static let repositoryRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()
    static let verifier = repositoryRoot + "/tools/verify-export"

    struct Result {
        var status: Int32
        var output: String
        var errors: String
    }

    /// python3 with `arguments`, on a thread of its own: the verifier takes seconds, and a test
    /// blocking one of the cooperative pool's two threads that long stalls every other test.
    static func python(_ arguments: [String]) async throws -> Result {
        try await offPool { try pythonBlocking(arguments) }
    }

    static func pythonBlocking(_ arguments: [String]) throws -> Result {
        let result = try DaemonFixture.runBlocking("/usr/bin/env", ["python3"] + arguments)
        return Result(status: result.status, output: result.stdout, errors: result.stderr)
    }

    /// nil when python3 and both parsers are there, else what is wrong and what to do.
    static let missingTools: String? = {
        guard let probe = try? pythonBlocking(["-c", "import gpxpy, tcxparser"]) else {
            return "cannot run /usr/bin/env python3: run tools/setup"
        }
        switch probe.status {
        case 0: return nil
        case 127: return "python3 is not on PATH: run tools/setup (it installs python3, gpxpy and python-tcxparser)"
        default: return "python3 cannot import gpxpy and tcxparser: run tools/setup (it installs them)\n\(probe.errors)"
        }
    }()

    /// Writes `format` for `synthetic` and its expected points into a fresh directory.
    static func export(_ synthetic: SyntheticRun, as format: ExportFormat) throws -> (directory: URL, export: String, expected: String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pacer-export-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let exportPath = directory.appendingPathComponent("run.\(format.fileExtension)").path
        let expectedPath = directory.appendingPathComponent("expected.jsonl").path
        #expect(FileManager.default.createFile(atPath: exportPath, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: exportPath))
        var writer = format.makeWriter(sink: { chunk in try handle.write(contentsOf: Data(chunk.utf8)) })
        try writer.write(synthetic.run, points: synthetic.points)
        try handle.close()
        #expect(writer.statistics == ExportStatistics(written: synthetic.expected.count, skipped: synthetic.invalidCount))
        try synthetic.expectedJSONLines.write(toFile: expectedPath, atomically: true, encoding: .utf8)
        return (directory, exportPath, expectedPath)
    }

    static let synthetic = SyntheticRun()

    @Test(arguments: ExportFormat.allCases)
    func parsersReadBackTheSamePoints(format: ExportFormat) async throws {
        if let problem = Self.missingTools {
            Issue.record("\(problem)")
            return
        }
        let synthetic = Self.synthetic
        #expect(synthetic.expected.count == 13_200)
        #expect(synthetic.expected.contains { $0.heartRate == nil })
        let files = try Self.export(synthetic, as: format)
        var arguments = [Self.verifier, files.export, files.expected]
        if format == .tcx { arguments += ["--laps", String(synthetic.run.laps.count)] }
        let result = try await Self.python(arguments)
        #expect(result.status == 0, "verify-export failed (files kept in \(files.directory.path)):\n\(result.errors)\(result.output)")
        #expect(result.output.contains("OK: ") && result.output.contains("13200 points"))
        print(result.output, terminator: "")
        if result.status == 0 { try? FileManager.default.removeItem(at: files.directory) }
    }

    /// The verifier must catch what it is there to catch: a wrong heart rate, a coordinate off by
    /// more than 1e-7°, a time, a missing point.
    @Test(arguments: ExportFormat.allCases)
    func verifierRejectsMismatches(format: ExportFormat) async throws {
        if let problem = Self.missingTools {
            Issue.record("\(problem)")
            return
        }
        var small = SyntheticRun(seconds: 300, lapMetres: 200)
        let files = try Self.export(small, as: format)
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let good = try await Self.python([Self.verifier, files.export, files.expected])
        #expect(good.status == 0, "\(good.errors)")

        let original = small.expected
        let mutations: [(String, (inout [ExportPoint]) -> Void)] = [
            ("heart rate", { $0[10].heartRate = ($0[10].heartRate ?? 100) + 1 }),
            ("heart rate", { $0[11].heartRate = nil }),
            ("lat", { $0[20].coordinate.latitude += 2e-7 }),
            ("lon", { $0[30].coordinate.longitude -= 2e-7 }),
            ("time", { $0[40].time = $0[40].time.adding(seconds: 0.001) }),
            ("points: read 300, expected 299", { $0.removeLast() }),
        ]
        for (message, mutate) in mutations {
            small.expected = original
            mutate(&small.expected)
            try small.expectedJSONLines.write(toFile: files.expected, atomically: true, encoding: .utf8)
            let result = try await Self.python([Self.verifier, files.export, files.expected])
            #expect(result.status == 1, "\(message): \(result.errors)")
            #expect(result.errors.contains(message), "expected '\(message)' in: \(result.errors)")
        }
    }
}
