import Foundation
import PacerCore
import Testing
@testable import PacerReplay

@Suite(.timeLimit(.minutes(10))) struct ReplayBehaviourTests {

    static func tpvLine(_ second: Int) -> String {
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2026-05-10T07:30:0\#(second).000Z","lat":\#(45.4775 + Double(second) * 0.000027),"lon":9.2241,"speed":3.0,"track":0.0,"eph":15.2}"#
    }

    @Test func missingFileIsNamed() {
        #expect(throws: ReplayError(.missingFile, "/nonexistent/run.jsonl: no such file")) {
            _ = try ReplayLoader.load(gpsPath: "/nonexistent/run.jsonl", heartRatePath: nil)
        }
    }

    @Test func emptyFileIsAnError() throws {
        let path = SharedData.temporaryFile("")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: ReplayError(.emptyFile, "\(path): file is empty")) {
            _ = try ReplayLoader.load(gpsPath: path, heartRatePath: nil)
        }
    }

    @Test func garbageWithoutAnyJSONIsAnError() throws {
        let path = SharedData.temporaryFile("\u{1}\u{2}binary\n$GPRMC,1,2,3*00\nnot json at all\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try ReplayLoader.load(gpsPath: path, heartRatePath: nil)
        } throws: { ($0 as? ReplayError)?.kind == .noData }
    }

    @Test func truncatedLineIsReportedWithItsNumber() throws {
        let lines = [Self.tpvLine(0), Self.tpvLine(1), String(Self.tpvLine(2).prefix(60)), Self.tpvLine(3)]
        let path = SharedData.temporaryFile(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try ReplayLoader.load(gpsPath: path, heartRatePath: nil)
        } throws: { error in
            guard let error = error as? ReplayError else { return false }
            return error.kind == .malformedLine && error.message.hasPrefix("\(path):3: malformed gpsd JSON")
        }
        // With --skip-malformed the rest is still used, and the skipped line counted.
        let inputs = try ReplayLoader.load(gpsPath: path, heartRatePath: nil, skipMalformed: true)
        #expect(inputs.stats.malformedLines == 1)
        #expect(Replay.run(inputs, configuration: TrackerConfiguration()).samples.count == 3)
    }

    @Test func nonJSONLinesAreSkippedAndCounted() throws {
        let lines = ["$GPRMC,073000.00,A,4528.674663,N,00913.448594,E,,,100526,,,A*5C", Self.tpvLine(0), "", Self.tpvLine(1)]
        let path = SharedData.temporaryFile(lines.joined(separator: "\n"))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inputs = try ReplayLoader.load(gpsPath: path, heartRatePath: nil)
        #expect(inputs.stats.nonJSONLines == 2)
        #expect(inputs.stats.tpvReports == 2)
    }

    @Test func heartRateIsMergedByTimeAndCountsAfterTheLastFix() throws {
        let gps = SharedData.temporaryFile((0..<4).map(Self.tpvLine).joined(separator: "\n") + "\n")
        let hr = SharedData.temporaryFile("""
            {"time":"2026-05-10T07:29:59Z","bpm":90,"rr_ms":[666],"contact":true}
            {"time":"2026-05-10T07:30:02Z","bpm":100,"rr_ms":[600],"contact":true}
            {"time":"2026-05-10T07:30:05Z","bpm":0,"rr_ms":[],"contact":false}
            {"time":"2026-05-10T07:30:09Z","bpm":110,"rr_ms":[545],"contact":true}
            """)
        defer {
            try? FileManager.default.removeItem(atPath: gps)
            try? FileManager.default.removeItem(atPath: hr)
        }
        let inputs = try ReplayLoader.load(gpsPath: gps, heartRatePath: hr)
        let order = inputs.items.map { if case .fix = $0 { "g" } else { "h" } }.joined()
        // The 07:30:02 notification follows the 07:30:02 fix: GPS first on equal times.
        #expect(order == "hggghghh")
        let report = Replay.run(inputs, configuration: TrackerConfiguration())
        #expect(report.summary.elapsedTime == 10)
        #expect(report.summary.heartRateMax == 110)
        #expect(report.summary.heartRateAverage == 100)
    }

    @Test func badHeartRateLineIsLocated() throws {
        let gps = SharedData.temporaryFile(Self.tpvLine(0) + "\n")
        let hr = SharedData.temporaryFile("{\"time\":\"2026-05-10T07:30:00Z\",\"bpm\":70}\n{\"time\":\"yesterday\",\"bpm\":70}\n")
        defer {
            try? FileManager.default.removeItem(atPath: gps)
            try? FileManager.default.removeItem(atPath: hr)
        }
        #expect {
            _ = try ReplayLoader.load(gpsPath: gps, heartRatePath: hr)
        } throws: { ($0 as? ReplayError)?.message.hasPrefix("\(hr):2: time \"yesterday\"") == true }
    }

    @Test(.enabled(if: SharedData.isAvailable)) func sameInputGivesByteIdenticalJSON() throws {
        let path = SharedData.path("sim/track-intervals-1.gpsd.jsonl")
        let hr = SharedData.path("hr/hr-normal-1.jsonl")
        let first = Replay.run(try ReplayLoader.load(gpsPath: path, heartRatePath: hr), configuration: TrackerConfiguration()).json()
        let second = Replay.run(try ReplayLoader.load(gpsPath: path, heartRatePath: hr), configuration: TrackerConfiguration()).json()
        #expect(first == second)
        #expect(first.utf8.count > 100_000)
    }

    @Test(.enabled(if: SharedData.isAvailable)) func jsonDocumentHasTheDocumentedShape() throws {
        let path = SharedData.path("sim/walk-1.gpsd.jsonl")
        let json = Replay.run(try ReplayLoader.load(gpsPath: path, heartRatePath: nil), configuration: TrackerConfiguration()).json()
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        let summary = object["summary"] as! [String: Any]
        for key in ["distance_m", "moving_time_s", "elapsed_time_s", "avg_pace_s_per_km", "max_speed_mps", "hr_avg", "hr_max"] {
            #expect(summary.keys.contains(key), "summary.\(key)")
        }
        #expect(summary["hr_avg"] is NSNull)
        let sample = (object["samples"] as! [[String: Any]])[5]
        #expect(Set(sample.keys) == ["time", "lat", "lon", "speed_mps", "distance_m", "moving"])
        #expect((sample["time"] as! String).wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
        let split = (object["splits"] as! [[String: Any]])[0]
        #expect(split["index"] as? Int == 1)
        for key in ["cues", "alerts", "warnings"] { #expect(object[key] is [Any]) }
    }

    @Test func jsonNumbersAreFixedPoint() {
        #expect(JSONWriter.fixed(1.005, digits: 2) == "1.01" || JSONWriter.fixed(1.005, digits: 2) == "1.00")
        #expect(JSONWriter.fixed(-0.0004, digits: 3) == "0.000")
        #expect(JSONWriter.fixed(-2.5, digits: 1) == "-2.5")
        #expect(JSONWriter.fixed(45.47756889, digits: 7) == "45.4775689")
        #expect(JSONWriter.fixed(12, digits: 0) == "12")
        #expect(JSONWriter.fixed(.nan, digits: 2) == "null")
    }
}
