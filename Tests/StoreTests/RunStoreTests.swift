import Foundation
import SQLite
import PacerCore
import Testing
@testable import Store

@Suite(.timeLimit(.minutes(10))) struct RunStoreTests {
    @Test func walWithFullSynchronous() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        let (mode, sync) = try store.queue.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        // NORMAL (1), the usual WAL setting, would fsync the WAL only at checkpoints.
        #expect(mode == "wal")
        #expect(sync == 2)
    }

    @Test func recordedRunReadsBackExactly() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        var recorder = try RunRecorder(store: store, uuid: "run-a", startTime: runStart)
        try recorder.recordSeconds(0..<600)
        recorder.record([.split(Split(index: 1, distance: 1000, time: 320.5, endTime: runStart.adding(seconds: 333)))])
        let summary = RunSummary(distance: 1797.06, movingTime: 587.02, elapsedTime: 599.25, averagePacePerKm: nil,
                                 maxSpeed: 2.98, heartRateAverage: 129.5, heartRateMax: 159, startTime: runStart,
                                 endTime: runStart.adding(seconds: 599.25))
        try recorder.finish(summary: summary)

        let track = try store.track(recorder.runID)
        #expect(track.samples == (0..<600).map(sample).map(rounded))
        #expect(track.heartRate == (0..<600).map(heartRate))
        let detail = try store.detail(recorder.runID)
        #expect(detail.run.state == .finished)
        #expect(detail.run.distance == 1797.06)
        #expect(detail.splits.map(\.index) == [1])
        #expect(detail.heartRate?.maximum == 159)
        #expect(detail.heartRate?.readings == 600 - 7)  // seven readings without contact
        var lines: [String] = []
        try store.forEachRawLine(recorder.runID) { lines.append(String($0)) }
        #expect(lines == (0..<600).map(rawLine))
    }

    /// What the codec keeps: the digits replay JSON prints.
    func rounded(_ s: TrackSample) -> TrackSample {
        func r(_ v: Double, _ d: Int) -> Double { Double(FixedDecimal.format(v, decimals: d)!)! }
        return TrackSample(time: s.time, coordinate: Coordinate(latitude: r(s.coordinate.latitude, 7), longitude: r(s.coordinate.longitude, 7)),
                           speed: r(s.speed, 3), distance: r(s.distance, 2), moving: s.moving, movingTime: r(s.movingTime, 3),
                           altitude: s.altitude.map { r($0, 1) })
    }

    @Test func batchesFollowRunTime() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        var recorder = try RunRecorder(store: store, uuid: "run-b", startTime: runStart, flushInterval: 3)
        var commits = 0
        for i in 0..<30 {
            recorder.record([.sample(sample(i))])
            if try recorder.flushIfDue() { commits += 1 }
        }
        // A commit once the newest sample is 3 s past the last durable one: 0-3, 4-6, 7-9, ...
        #expect(commits == 9)
        let stored = try store.track(recorder.runID).samples.count
        #expect(stored == 28)
    }

    @Test func anInterruptedRunIsRecoveredWithWhatWasDurable() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        var id: Int64 = 0
        do {
            let store = try tmp.open()
            var recorder = try RunRecorder(store: store, uuid: "crashed", startTime: runStart)
            try recorder.recordSeconds(0..<333)
            recorder.record([.split(Split(index: 1, distance: 1000, time: 330, endTime: runStart.adding(seconds: 333)))])
            try recorder.recordSeconds(333..<1197)
            // Collected, never committed: the "crash". A batch commits when its newest item (the
            // HR reading at i + 0.25 s) is 4 s past the last durable one, so the last commit came
            // with second 1196.
            recorder.record([.split(Split(index: 4, distance: 1000, time: 330, endTime: runStart.adding(seconds: 1197)))])
            try recorder.recordSeconds(1197..<1199)
            id = recorder.runID
        }
        let reopened = try tmp.open()
        #expect(try reopened.run(id)?.state == .recording)
        #expect(try reopened.recoverInterruptedRuns() == [id])
        let run = try #require(try reopened.run(id))
        #expect(run.state == .interrupted)
        let lastDurable = sample(1196)
        #expect(abs(run.distance - lastDurable.distance) < 0.01)
        #expect(abs(run.elapsedTime - 1196.25) < 0.001)  // the last HR reading, 0.25 s after the sample
        #expect(run.heartRateMax == 159)
        #expect(try reopened.detail(id).splits.count == 1)
        #expect(try reopened.recoverInterruptedRuns().isEmpty)
        // The daemon may continue it.
        try reopened.resume(runID: id)
        #expect(try reopened.run(id)?.state == .recording)
    }

    @Test func deletingARunLeavesTheOthersWhole() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        var ids: [Int64] = []
        for n in 0..<3 {
            var recorder = try RunRecorder(store: store, uuid: "run-\(n)", startTime: runStart.adding(seconds: Double(n) * 86_400))
            try recorder.recordSeconds(0..<100)
            try recorder.finish(summary: RunSummary(distance: 300, movingTime: 99, elapsedTime: 99, averagePacePerKm: nil, maxSpeed: 3))
            ids.append(recorder.runID)
        }
        try store.deleteRun(ids[1])
        #expect(try store.run(ids[1]) == nil)
        #expect(throws: StoreError.noSuchRun(ids[1])) { try store.deleteRun(ids[1]) }
        #expect(try store.track(ids[0]).samples.count == 100)
        #expect(try store.track(ids[2]).samples.count == 100)
        let orphans = try store.queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM track_chunk WHERE run_id = ?", arguments: [ids[1]])
        }
        #expect(orphans == 0)
    }

    @Test func listIsNewestFirstAndPaged() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        for n in 0..<25 {
            var recorder = try RunRecorder(store: store, uuid: "run-\(n)", startTime: runStart.adding(seconds: Double(n) * 3600))
            try recorder.recordSeconds(0..<5)
            try recorder.finish(summary: RunSummary(distance: Double(n), movingTime: 5, elapsedTime: 5, averagePacePerKm: nil, maxSpeed: 3))
        }
        let first = try store.runs(limit: 10, offset: 0)
        let third = try store.runs(limit: 10, offset: 20)
        #expect(first.map(\.distance) == (15..<25).reversed().map(Double.init))
        #expect(third.count == 5)
        #expect(try store.runCount() == 25)
    }

    @Test func retentionDropsOnlyOldUploadedRawLines() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        var ids: [Int64] = []
        for n in 0..<3 {
            var recorder = try RunRecorder(store: store, uuid: "run-\(n)", startTime: runStart.adding(seconds: Double(n) * 86_400))
            try recorder.recordSeconds(0..<60)
            try recorder.finish(summary: RunSummary(distance: 180, movingTime: 60, elapsedTime: 60, averagePacePerKm: nil,
                                                    maxSpeed: 3, endTime: runStart.adding(seconds: Double(n) * 86_400 + 60)))
            ids.append(recorder.runID)
        }
        try store.setUploadState(.uploaded, runID: ids[0], at: runStart)
        try store.setUploadState(.uploaded, runID: ids[2], at: runStart)
        // Cut-off after runs 0 and 1 ended: run 1 is not uploaded, run 2 is too recent.
        let pruned = try store.pruneRawLines(endedBefore: runStart.adding(seconds: 1.5 * 86_400))
        #expect(pruned == [ids[0]])
        #expect(try store.run(ids[0])?.rawPruned == true)
        #expect(try store.track(ids[0]).samples.count == 60)
        #expect(throws: StoreError.self) { try store.forEachRawLine(ids[0]) { _ in } }
        var kept = 0
        try store.forEachRawLine(ids[1]) { _ in kept += 1 }
        #expect(kept == 60)
    }

    @Test func aFullDiskIsReportedAndTheBatchIsKept() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        var recorder = try RunRecorder(store: store, uuid: "full", startTime: runStart)
        try recorder.recordSeconds(0..<10)
        // Make the file unable to grow, as a full SD card would.
        let pages = try store.queue.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
        try store.queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = \(pages)") }
        var failure: StoreError?
        do {
            for i in 10..<2000 {
                recorder.record(rawLine: String(repeating: "x", count: 2000) + rawLine(i), at: runStart.adding(seconds: Double(i)))
                recorder.record([.sample(sample(i))])
                try recorder.flushIfDue()
            }
        } catch {
            failure = error
        }
        let error = try #require(failure)
        #expect(error.description.contains("full"))
        // Room again: the batch that failed is still there and goes in whole.
        try store.queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        try recorder.flush()
        let samples = try store.track(recorder.runID).samples
        #expect(samples.map(\.time) == (0..<samples.count).map { runStart.adding(seconds: Double($0)) })
        #expect(try store.integrityCheck() == "ok")
    }

    @Test func aReaderCannotWrite() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        _ = try tmp.open()
        let reader = try tmp.open(readOnly: true)
        #expect(throws: StoreError.self) { _ = try reader.beginRun(uuid: "x", startTime: runStart) }
    }

    /// "My runs" must open while the daemon records: the writer must not hold the file exclusively.
    @Test func aReaderSeesDurableRunsWhileRecording() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        var recorder = try RunRecorder(store: store, uuid: "run-live", startTime: runStart)
        try recorder.recordSeconds(0..<30)
        let reader = try tmp.open(readOnly: true)
        let runs = try reader.runs(limit: 10, offset: 0)
        #expect(runs.map(\.uuid) == ["run-live"])
        #expect(runs.first?.state == .recording)
        try recorder.recordSeconds(30..<60)
        #expect(try reader.track(recorder.runID).samples.count > 30)
    }

    @Test func notAStoreIsAClearError() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        _ = FileManager.default.createFile(atPath: tmp.path, contents: Data(String(repeating: "garbage ", count: 1000).utf8))
        #expect {
            _ = try tmp.open()
        } throws: { ($0 as? StoreError)?.description.contains("not a database") == true }
    }
}
