import Foundation
import Gzip
import PacerContract
import PacerCore
import Store
import Testing
@testable import Uplink

/// The pieces: gzip, the track format, privacy zones, the backoff, the outbox's order.
@Suite(.timeLimit(.minutes(10))) struct UplinkPartsTests {
    static let t0 = Timestamp(iso8601: "2026-05-10T07:30:00Z")!

    static func samples(_ n: Int, from origin: Coordinate = Coordinate(latitude: 45.47, longitude: 9.22)) -> [TrackSample] {
        (0..<n).map { i in
            TrackSample(time: t0.adding(seconds: Double(i)), coordinate: WGS84.offsetting(origin, east: Double(i) * 3, north: 0),
                        speed: 3, distance: Double(i) * 3, moving: true, movingTime: Double(i))
        }
    }

    @Test func gzipRoundTripsAndIsGzip() throws {
        let text = Array(String(repeating: "1778400000000,45.4700000,9.2200000,3.00,0.0,1,150\n", count: 500).utf8)
        let packed = try Gzip.compress(text)
        #expect(packed.prefix(2) == [0x1f, 0x8b])
        #expect(packed.count < text.count / 10)
        #expect(try Gzip.decompress(packed) == text)
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(Array("not gzip".utf8)) }
    }

    @Test func theTrackIsChunkedWithHeartRateMerged() {
        let track = Self.samples(1300)
        let hr = (0..<1300).map { HeartRateSample(time: Self.t0.adding(seconds: Double($0) + 0.5), bpm: 140 + $0 % 10, contact: true) }
        let chunks = TrackChunkFormat.chunks(samples: track, heartRate: hr, hiding: [])
        #expect(chunks.count == 3)
        let lines = chunks.joined().split(separator: "\n")
        #expect(lines.count == 1300)
        #expect(lines.first == "1778398200000,45.4700000,9.2200000,3.00,0.0,1,")  // no reading yet at t0
        #expect(lines[1].hasSuffix(",1,140"))  // the reading 0.5 s before
        // A heart rate older than 5 s is not the sample's.
        let stale = TrackChunkFormat.chunks(samples: Self.samples(20), heartRate: [HeartRateSample(time: Self.t0, bpm: 120, contact: true)], hiding: [])
        #expect(stale.joined().split(separator: "\n").map { $0.hasSuffix(",120") } == Array(repeating: true, count: 6) + Array(repeating: false, count: 14))
    }

    @Test func privacyZonesCutPointsOut() {
        let track = Self.samples(100)
        let home = PrivacyZone(center: track[0].coordinate, radiusMeters: 50)
        let lines = TrackChunkFormat.chunks(samples: track, heartRate: [], hiding: [home]).joined().split(separator: "\n")
        // 3 m apart: samples 0...16 are within 50 m.
        #expect(lines.count == 100 - 17)
        #expect(lines.allSatisfy { line in
            let f = line.split(separator: ",")
            return !home.contains(Coordinate(latitude: Double(f[1])!, longitude: Double(f[2])!))
        })
    }

    @Test func backoffIsJitteredExponentialAndCapped() {
        let schedule = RetrySchedule(firstSeconds: 1, capSeconds: 300)
        for failures in 1...20 {
            let ceiling = min(300, pow(2, Double(failures - 1)))
            #expect(schedule.delay(afterFailures: failures, random: 0) == ceiling / 2)
            #expect(schedule.delay(afterFailures: failures, random: 0.999_999) <= ceiling)
        }
        #expect(schedule.delay(afterFailures: 100, random: 1) == 300)
    }

    @Test func theOutboxSendsThePositionFirstThenRunsChunkByChunkSummaryLast() throws {
        let dir = NSTemporaryDirectory() + "uplink-outbox-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try RunStore(path: dir + "/pacer.db")
        var runIDs: [Int64] = []
        for n in 0..<2 {
            let id = try store.beginRun(uuid: "00000000-0000-0000-0000-00000000000\(n)", startTime: Self.t0)
            var summary = RunSummary(distance: 100, movingTime: 30, elapsedTime: 30, averagePacePerKm: 300, maxSpeed: 3)
            summary.endTime = Self.t0.adding(seconds: 30)
            try store.finishRun(id, summary: summary, splits: [], laps: [])
            runIDs.append(id)
        }
        #expect(try store.runsToEnqueue().map(\.id) == runIDs)
        for id in runIDs.reversed() {
            try store.enqueue(runID: id, chunks: [[1], [2]], summary: Array("{}".utf8), at: Self.t0)
            // Queued once only: a second call changes nothing.
            try store.enqueue(runID: id, chunks: [[9]], summary: [9], at: Self.t0)
        }
        try store.setLivePosition(Array("{\"old\":1}".utf8), at: Self.t0)
        try store.setLivePosition(Array("{\"new\":1}".utf8), at: Self.t0)
        #expect(try store.outboxCounts() == OutboxCounts(runs: 2, items: 7, bytes: 2 * (1 + 1 + 2) + 9, position: true))
        var order: [String] = []
        while let item = try store.nextOutboxItem() {
            switch item.kind {
            case .position: order.append("position \(String(decoding: item.payload, as: UTF8.self))")
            case .chunk(let uuid, let sequence): order.append("\(uuid.suffix(1)) chunk \(sequence) \(item.payload)")
            case .summary(let uuid): order.append("\(uuid.suffix(1)) summary")
            }
            try store.acknowledge(item, at: Self.t0)
        }
        #expect(order == ["position {\"new\":1}", "0 chunk 0 [1]", "0 chunk 1 [2]", "0 summary", "1 chunk 0 [1]", "1 chunk 1 [2]", "1 summary"])
        #expect(try store.runs(limit: 10, offset: 0).allSatisfy { $0.uploadState == .uploaded })
        #expect(try store.runsWaitingForUpload() == 0)
    }
}
