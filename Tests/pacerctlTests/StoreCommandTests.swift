import Foundation
import PacerTestSupport
import Testing

/// Recording, "my runs", export and history as an operator runs them: the real binary.
@Suite(.enabled(if: PacerCtlTests.hasSharedData, "needs ../shared/data beside the repository"), .timeLimit(.minutes(10)))
struct StoreCommandTests {
    let cli = PacerCtlTests()
    let data = PacerCtlTests.sharedData

    func scratch() -> String {
        let dir = NSTemporaryDirectory() + "pacerctl-store-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func exportedRawLinesReplayToTheSameRun() async throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gps = data + "/sim/city-10k-1.gpsd.jsonl", hr = data + "/hr/hr-both-1.jsonl"
        let recorded = try await cli.pacerctl("replay", "--gps", gps, "--hr", hr, "--record", dir + "/p.db", "--json")
        #expect(recorded.status == 0)
        #expect(try await cli.pacerctl("runs", "export", "1", "--db", dir + "/p.db", "--format", "gpsd", "-o", dir + "/r.gpsd.jsonl").status == 0)
        #expect(try await cli.pacerctl("runs", "export", "1", "--db", dir + "/p.db", "--format", "hr", "-o", dir + "/r.hr.jsonl").status == 0)
        let again = try await cli.pacerctl("replay", "--gps", dir + "/r.gpsd.jsonl", "--hr", dir + "/r.hr.jsonl", "--json")
        #expect(again.status == 0)
        #expect(again.stdout == recorded.stdout)
        // Every line as received, in order; lines are stored without their terminator (gpsd's CRLF).
        func lines(_ path: String) throws -> [Substring] {
            // "\r\n" is one Character in Swift: split on any newline.
            try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline)
        }
        #expect(try lines(dir + "/r.gpsd.jsonl") == lines(gps))
    }

    @Test(arguments: ["gpx", "tcx"]) func independentParsersReadTheExportBack(format: String) async throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gps = data + "/sim/track-intervals-1.gpsd.jsonl", hr = data + "/hr/hr-dropout-1.jsonl"
        let replay = try await cli.pacerctl("replay", "--gps", gps, "--hr", hr, "--record", dir + "/p.db", "--json")
        #expect(replay.status == 0)
        let export = try await cli.pacerctl("runs", "export", "1", "--db", dir + "/p.db", "--format", format, "-o", dir + "/run.\(format)")
        #expect(export.status == 0, "\(export.stderr)")

        try Self.expectedPoints(replay: replay.stdout, hrLog: hr, withDistanceAndSpeed: false)
            .write(toFile: dir + "/expected.jsonl", atomically: true, encoding: .utf8)
        let (status, message) = try await Self.verify("verify-export", [dir + "/run.\(format)", dir + "/expected.jsonl"])
        #expect(status == 0, "\(message) (tools/setup installs gpxpy and python-tcxparser)")
    }

    /// Expected points for the verifiers: the replay's samples, each with the latest valid HR
    /// reading at most 2.5 s old (the export's documented rule), worked out here from the HR log
    /// itself; with their distance and speed for tools/verify-fit.
    static func expectedPoints(replay: String, hrLog: String, withDistanceAndSpeed: Bool) throws -> String {
        let document = try JSONSerialization.jsonObject(with: Data(replay.utf8)) as! [String: Any]
        let samples = document["samples"] as! [[String: Any]]
        var readings: [(ms: Int64, bpm: Int?)] = []
        for line in try String(contentsOfFile: hrLog, encoding: .utf8).split(separator: "\n") {
            let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            let valid = (o["contact"] as? Bool) != false && (o["bpm"] as! Int) > 0
            readings.append((Self.ms(o["time"] as! String), valid ? o["bpm"] as? Int : nil))
        }
        var expected = ""
        var r = 0
        var latest: (ms: Int64, bpm: Int?)?
        for s in samples {
            let t = Self.ms(s["time"] as! String)
            while r < readings.count, readings[r].ms <= t { latest = readings[r]; r += 1 }
            let bpm = latest.flatMap { t - $0.ms <= 2500 ? $0.bpm : nil }
            expected += #"{"time":"\#(s["time"] as! String)","lat":\#(s["lat"]!),"lon":\#(s["lon"]!),"hr":\#(bpm.map(String.init) ?? "null")"#
            if withDistanceAndSpeed { expected += #","distance":\#(s["distance_m"]!),"speed":\#(s["speed_mps"]!)"# }
            expected += "}\n"
        }
        return expected
    }

    /// python3 tools/`tool` `arguments`: its exit status and standard error.
    static func verify(_ tool: String, _ arguments: [String]) async throws -> (Int32, String) {
        try await offPool { () -> (Int32, String) in
            let result = try BlockingCommand.run(
                "/usr/bin/env", ["python3", PacerCtlTests.repositoryRoot + "/tools/" + tool] + arguments, timeout: .seconds(300))
            let status: Int32 = if case .exited(let code) = result.status { code } else { -1 }
            return (status, result.standardError)
        }
    }

    /// `runs export --format fit` read back by garmin-fit-sdk and fitdecode (tools/verify-fit):
    /// one record per sample with its time, position, distance, speed and heart rate, and the
    /// session's distance within 0.5 % of the run's.
    @Test func fitExportDecodesWithTwoIndependentDecoders() async throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gps = data + "/sim/track-intervals-1.gpsd.jsonl", hr = data + "/hr/hr-dropout-1.jsonl"
        let replay = try await cli.pacerctl("replay", "--gps", gps, "--hr", hr, "--record", dir + "/p.db", "--json")
        #expect(replay.status == 0)
        let export = try await cli.pacerctl("runs", "export", "1", "--db", dir + "/p.db", "--format", "fit", "-o", dir + "/run.fit")
        #expect(export.status == 0, "\(export.stderr)")

        let document = try JSONSerialization.jsonObject(with: Data(replay.stdout.utf8)) as! [String: Any]
        let distance = (document["summary"] as! [String: Any])["distance_m"] as! Double
        let laps = (document["laps"] as! [[String: Any]]).count
        let expected = try Self.expectedPoints(replay: replay.stdout, hrLog: hr, withDistanceAndSpeed: true)
        try expected.write(toFile: dir + "/expected.jsonl", atomically: true, encoding: .utf8)
        #expect(expected.split(separator: "\n").count > 100)
        // No laps in the run: the file has one for the whole run.
        let (status, message) = try await Self.verify("verify-fit", [dir + "/run.fit", dir + "/expected.jsonl", "--distance", String(distance),
                                                                     "--laps", String(max(laps, 1))])
        #expect(status == 0, "\(message) (tools/setup installs garmin-fit-sdk and fitdecode)")
    }

    static func ms(_ iso: String) -> Int64 {
        // yyyy-mm-ddThh:mm:ss[.fff]Z, UTC
        let f = ISO8601DateFormatter()
        f.formatOptions = iso.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return Int64((f.date(from: iso)!.timeIntervalSince1970 * 1000).rounded())
    }

    @Test func historyRecordsTotalsAndGoals() async throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/p.db"
        for route in ["track-intervals-1", "city-10k-1"] {
            #expect(try await cli.pacerctl("replay", "--gps", data + "/sim/\(route).gpsd.jsonl", "--record", db).status == 0)
        }
        let list = try await cli.pacerctl("runs", "list", "--db", db, "--json")
        let runs = (try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as! [String: Any])["runs"] as! [[String: Any]]
        #expect(runs.map { $0["id"] as! Int } == [2, 1])
        #expect(runs.allSatisfy { $0["state"] as? String == "finished" })

        let records = try JSONSerialization.jsonObject(with: Data(try await cli.pacerctl("runs", "records", "--db", db, "--json").stdout.utf8)) as! [[String: Any]]
        // The track session holds the fastest kilometre (400 m repeats at 5 m/s), the city run the only 10 km.
        #expect(records[0]["run"] as? Int == 1)
        #expect((records[0]["time_s"] as! Double) < 300)
        #expect(records[2]["run"] as? Int == 2)
        #expect(records[3]["run"] is NSNull)

        let totals = try JSONSerialization.jsonObject(with: Data(try await cli.pacerctl("runs", "totals", "--db", db, "--per", "week", "--tz", "UTC", "--json").stdout.utf8)) as! [[String: Any]]
        #expect(totals.count == 1)
        #expect(totals[0]["period"] as? String == "2026-W19")
        #expect(totals[0]["runs"] as? Int == 2)

        #expect(try await cli.pacerctl("goals", "add", "--db", db, "--period", "month", "--km", "-3").status == 64)
        #expect(try await cli.pacerctl("goals", "add", "--db", db, "--period", "month", "--km", "100").stdout == "Added goal 1: 100.0 km per month.\n")
        #expect(try await cli.pacerctl("goals", "remove", "--db", db, "7").status == 66)

        #expect(try await cli.pacerctl("runs", "delete", "1", "--db", db).status == 0)
        let after = try JSONSerialization.jsonObject(with: Data(try await cli.pacerctl("runs", "records", "--db", db, "--json").stdout.utf8)) as! [[String: Any]]
        #expect(after[0]["run"] as? Int == 2)  // records follow deletion
        let missing = try await cli.pacerctl("runs", "show", "1", "--db", db)
        #expect(missing.status == 66)
        #expect(missing.stderr == "pacerctl: no run 1\n")
    }

    @Test func storeAndConfigCanComeFirstAndRetentionFollowsTheConfig() async throws {
        let dir = scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/p.db"
        #expect(try await cli.pacerctl("replay", "--gps", data + "/sim/walk-1.gpsd.jsonl", "--record", db).status == 0)
        try "[storage]\npath = \"\(db)\"\nkeep_raw_days = 0\n".write(toFile: dir + "/pacer.toml", atomically: true, encoding: .utf8)
        let listed = try await cli.pacerctl("--config", dir + "/pacer.toml", "runs", "list", "--json")
        #expect(listed.status == 0)
        #expect(listed.stdout.contains(#""total":1"#))
        let pruned = try await cli.pacerctl("--db", db, "--config", dir + "/pacer.toml", "runs", "prune")
        #expect(pruned.stdout.contains("kept for ever"))
        let badConfig = try await cli.pacerctl("--config", dir + "/missing.toml", "runs", "list")
        #expect(badConfig.status == 66)
        #expect(badConfig.stderr == "pacerctl: \(dir)/missing.toml: no such config file\n")
    }

    @Test func noStoreIsNamed() async throws {
        let r = try await cli.pacerctl("runs", "list", "--db", "/nonexistent/pacer.db")
        #expect(r.status == 66)
        #expect(r.stderr.contains("/nonexistent/pacer.db: no such store"))
    }
}
