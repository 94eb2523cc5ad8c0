import Foundation
import GPSD
import PacerCore
import PacerReplay
import Recording
import Store
import Testing

/// Strap notifications recorded as HRM lines in the raw log carry a run's heart rate across an
/// interruption: the resumed run's HR average and maximum are the replay's of its raw log.
@Suite(.timeLimit(.minutes(10))) struct HeartRateResumeTests {
    static let start = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!

    static func tpvLine(_ second: Int) -> String {
        let time = start.adding(seconds: Double(second)).iso8601
        return #"{"class":"TPV","mode":3,"time":"\#(time)","lat":\#(45.4775 + Double(second) * 0.000027),"lon":9.2241,"speed":3.0,"track":0.0,"eph":5.0}"#
    }

    /// Two minutes: a fix each second and a notification half a second later. The first half runs
    /// hotter, so its maximum shows whether it survived the interruption.
    static func lines() -> [String] {
        (0..<120).flatMap { second -> [String] in
            let bpm = second < 60 ? 150 + second % 7 : 120 + second % 5
            return [tpvLine(second), HeartRateLine.line([0x06, UInt8(bpm)], time: start.adding(seconds: Double(second) + 0.5))]
        }
    }

    /// The daemon's way: the raw line, then what it decodes to.
    static func feed(_ lines: some Sequence<String>, into recording: inout RunRecording) throws {
        let decoder = GPSDecoder()
        for line in lines {
            recording.record(rawLine: line)
            switch try decoder.decode(line) {
            case .fix(let fix): try recording.ingest(.fix(fix))
            case .other(className: HeartRateLine.className):
                let recorded = try #require(HeartRateLine.parse(line))
                try recording.ingest(.heartRate(try HeartRateMeasurement.decode(recorded.bytes).get().sample(at: recorded.time)))
            default: break
            }
            try recording.commitIfDue()
        }
    }

    @Test func heartRateSurvivesAResume() throws {
        let directory = NSTemporaryDirectory() + "pacer-hr-resume-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let all = Self.lines()
        let cut = all.count / 2

        let runID: Int64
        do {
            let store = try RunStore(path: directory + "/live.db")
            var recording = RunRecording(store: store, configuration: TrackerConfiguration())
            try Self.feed(all[..<cut], into: &recording)
            runID = try #require(recording.runID)
        }
        let store = try RunStore(path: directory + "/live.db")
        #expect(try store.recoverInterruptedRuns() == [runID])
        var resumed = try RunRecording.resuming(try #require(try store.run(runID)), store: store, configuration: TrackerConfiguration())
        try Self.feed(all[cut...], into: &resumed)
        try resumed.finish()
        let live = try #require(try store.run(runID))

        var rawLog: [String] = []
        try store.forEachRawLine(runID) { rawLog.append(String($0)) }
        let path = directory + "/raw.jsonl"
        try (rawLog.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let replay = Replay.run(try ReplayLoader.load(gpsPath: path, heartRatePath: nil), configuration: TrackerConfiguration())

        #expect(replay.stats.hrmLines > 100)
        #expect(replay.summary.heartRateMax == 156)  // from the first life
        #expect(live.heartRateMax == replay.summary.heartRateMax)
        #expect(abs((live.heartRateAverage ?? 0) - (replay.summary.heartRateAverage ?? -1)) < 1e-9)
    }
}
