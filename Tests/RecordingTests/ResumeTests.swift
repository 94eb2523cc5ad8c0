import Foundation
import GPSD
import PacerCore
import PacerReplay
import Recording
import Store
import Testing

/// An interrupted run continued by the next recorder gives what a replay of its raw log gives.
@Suite(.timeLimit(.minutes(10))) struct ResumeTests {
    static let log = #filePath.split(separator: "/").dropLast(3).joined(separator: "/") + "/../shared/data/sim/hairpins-1.gpsd.jsonl"
    static var hasData: Bool { FileManager.default.fileExists(atPath: "/" + log) }

    static func lines() throws -> [String] {
        try String(contentsOfFile: "/" + log, encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// Feeds lines the way the daemon does: raw line, then what it decodes to.
    static func feed(_ lines: some Sequence<String>, into recording: inout RunRecording, decoder: GPSDecoder) throws {
        for line in lines {
            guard let message = try? decoder.decode(line) else { continue }
            recording.record(rawLine: line)
            if case .fix(let fix) = message { try recording.ingest(.fix(fix)) }
            try recording.commitIfDue()
        }
    }

    @Test(.enabled(if: hasData)) func aResumedRunEqualsTheReplayOfItsRawLog() throws {
        let directory = NSTemporaryDirectory() + "pacer-resume-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let all = try Self.lines()
        let cut = all.count / 2

        // First life: records half the run, a lap, then "dies" (never finished, last batch unsaved).
        let runID: Int64
        do {
            let store = try RunStore(path: directory + "/live.db")
            var recording = RunRecording(store: store, configuration: TrackerConfiguration())
            let decoder = GPSDecoder()
            try Self.feed(all[..<(cut / 2)], into: &recording, decoder: decoder)
            recording.record(rawLine: ControlLine.line(.lap, time: nil))
            try recording.ingest(.control(.lap))
            try Self.feed(all[(cut / 2)..<cut], into: &recording, decoder: decoder)
            runID = try #require(recording.runID)
        }
        // Second life: recovery, then the rest of the run continues the same run.
        let store = try RunStore(path: directory + "/live.db")
        #expect(try store.recoverInterruptedRuns() == [runID])
        #expect(try store.canResume(runID))
        let interrupted = try #require(try store.run(runID))
        var resumed = try RunRecording.resuming(interrupted, store: store, configuration: TrackerConfiguration())
        #expect(resumed.runID == runID)
        #expect(try store.run(runID)?.state == .recording)
        try Self.feed(all[cut...], into: &resumed, decoder: GPSDecoder())
        try resumed.finish()

        let live = try store.detail(runID)
        #expect(live.run.state == .finished)
        #expect(try store.runCount() == 1)

        // The stored raw log, replayed into a fresh store, gives the same samples, splits and laps.
        var rawLog: [String] = []
        try store.forEachRawLine(runID) { rawLog.append(String($0)) }
        #expect(rawLog.count <= all.count + 1)  // + the lap; minus the unsaved batch, if any
        let replayStore = try RunStore(path: directory + "/replay.db")
        var replay = RunRecording(store: replayStore, configuration: TrackerConfiguration())
        let decoder = GPSDecoder()
        for line in rawLog {
            replay.record(rawLine: line)
            switch try decoder.decode(line) {
            case .fix(let fix): try replay.ingest(.fix(fix))
            case .other(className: ControlLine.className): try replay.ingest(.control(try #require(ControlLine.parse(Array(line.utf8)))))
            default: break
            }
            try replay.commitIfDue()
        }
        try replay.finish()
        let replayID = try #require(replay.runID)
        let replayed = try replayStore.detail(replayID)
        #expect(try store.track(runID).samples == replayStore.track(replayID).samples)
        #expect(live.splits == replayed.splits)
        #expect(live.laps == replayed.laps)
        #expect(live.laps.count == 2)
        #expect(live.run.distance == replayed.run.distance)
        #expect(live.run.movingTime == replayed.run.movingTime)
    }

    @Test func onlyTheNewestRunCanBeResumed() throws {
        let directory = NSTemporaryDirectory() + "pacer-resume-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RunStore(path: directory + "/s.db")
        let start = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!
        var first = try RunRecorder(store: store, uuid: "a", startTime: start)
        first.record(rawLine: "{}", at: start)
        try first.flush()
        var second = try RunRecorder(store: store, uuid: "b", startTime: start.adding(seconds: 60))
        second.record(rawLine: "{}", at: start.adding(seconds: 60))
        try second.flush()
        #expect(try store.recoverInterruptedRuns() == [first.runID, second.runID])
        #expect(try !store.canResume(first.runID))
        #expect(try store.canResume(second.runID))
    }
}
