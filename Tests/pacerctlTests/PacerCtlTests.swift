import Foundation
import PacerTestSupport
import Testing

/// pacerctl as a person runs it: the real binary, its exit status, what it prints.
@Suite(.timeLimit(.minutes(10))) struct PacerCtlTests {
    typealias Result = DaemonFixture.CtlResult

    /// The binary sits beside the test bundle in the build directory.
    static let binary: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var directory = bundle
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("pacerctl").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return bundle.appendingPathComponent("pacerctl").path
    }()

    static let repositoryRoot: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    static let sharedData = repositoryRoot + "/../shared/data"
    static let hasSharedData = FileManager.default.fileExists(atPath: sharedData + "/sim")

    /// Runs the built pacerctl off the cooperative pool: waiting for a child here would hold one
    /// of its two threads, and the control and daemon tests in this process would stall with it.
    func pacerctl(_ arguments: String...) async throws -> Result {
        try await offPool { try Self.runBlocking(arguments) }
    }

    static func runBlocking(_ arguments: [String]) throws -> Result {
        try DaemonFixture.runBlocking(binary, arguments)
    }

    func temporary(_ content: String, _ suffix: String) -> String {
        let path = NSTemporaryDirectory() + "pacerctl-test-\(UUID().uuidString)\(suffix)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(content.utf8))
        return path
    }

    @Test func missingLogExitsNoInput() async throws {
        let r = try await pacerctl("replay", "--gps", "/nonexistent/run.jsonl", "--json")
        #expect(r.status == 66)
        #expect(r.stderr == "pacerctl: /nonexistent/run.jsonl: no such file\n")
        #expect(r.stdout.isEmpty)
    }

    @Test func garbageExitsDataError() async throws {
        let path = temporary("this is not a gpsd log\n\u{0}\u{1}\u{2}\n", ".jsonl")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try await pacerctl("replay", "--gps", path)
        #expect(r.status == 65)
        #expect(r.stderr.contains("no gpsd JSON"))
    }

    @Test func truncatedLineNamesTheLine() async throws {
        let line = #"{"class":"TPV","mode":3,"time":"2026-05-10T07:30:00.000Z","lat":45.4,"lon":9.2,"speed":0.1,"track":1.0}"#
        let path = temporary(line + "\n" + line.prefix(40) + "\n", ".jsonl")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try await pacerctl("replay", "--gps", path, "--json")
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("pacerctl: \(path):2: malformed gpsd JSON"))
        let skipped = try await pacerctl("replay", "--gps", path, "--json", "--skip-malformed")
        #expect(skipped.status == 0)
        #expect(skipped.stdout.contains(#""malformed_lines":1"#))
    }

    @Test func badConfigNamesFileLineAndKey() async throws {
        let config = temporary("[tracking]\n# comment\nsplit_distance_m = fast\n", ".toml")
        defer { try? FileManager.default.removeItem(atPath: config) }
        let r = try await pacerctl("replay", "--gps", "/dev/null", "--config", config)
        #expect(r.status == 78)
        #expect(r.stderr.hasPrefix("pacerctl: \(config):3: tracking.split_distance_m: `fast` is not a number"))
    }

    @Test func unknownFlagIsAUsageError() async throws {
        let r = try await pacerctl("replay", "--gps", "x", "--gsp", "y")
        #expect(r.status == 64)
        #expect(r.stderr.contains("--gsp"))
    }

    @Test(.enabled(if: hasSharedData)) func readableSummaryAndSplitsTable() async throws {
        let r = try await pacerctl("replay", "--gps", Self.sharedData + "/sim/track-intervals-1.gpsd.jsonl")
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("Distance      4.6"))
        #expect(r.stdout.contains("  #   distance      time      pace"))
        #expect(r.stdout.split(separator: "\n").filter { $0.hasSuffix(" /km") }.count == 6)  // 5 splits + average
    }

    @Test(.enabled(if: hasSharedData)) func ggaOnlyStreamWarnsOnStderr() async throws {
        // gpsd 3.22's TPVs from a GGA-only receiver carry no time: skipped, counted and said so.
        let capture = Self.sharedData + "/gpsd-logs/gpspipe-3.22/adddate.nmea.gpspipe.json"
        try #require(FileManager.default.fileExists(atPath: capture))
        let r = try await pacerctl("replay", "--gps", capture, "--json")
        #expect(r.status == 0)
        #expect(r.stderr.contains("carry no time"))
        #expect(r.stdout.contains(#""kind":"gps_no_time""#))
    }
}
