import Foundation
import PacerCore
import Export

/// Collects what a writer hands its sink, chunk by chunk.
final class ChunkCollector {
    var chunks: [String] = []
    var text: String { chunks.joined() }
    var largestChunk: Int { chunks.map(\.utf8.count).max() ?? 0 }

    func sink(_ chunk: String) throws {
        chunks.append(chunk)
    }

    static func gpx(_ run: ExportRun, _ points: [ExportPoint]) throws -> (ChunkCollector, ExportStatistics) {
        let collector = ChunkCollector()
        var writer = GPXWriter(sink: collector.sink)
        try writer.write(run, points: points)
        return (collector, writer.statistics)
    }

    static func tcx(_ run: ExportRun, _ points: [ExportPoint]) throws -> (ChunkCollector, ExportStatistics) {
        let collector = ChunkCollector()
        var writer = TCXWriter(sink: collector.sink)
        try writer.write(run, points: points)
        return (collector, writer.statistics)
    }
}

extension String {
    func occurrences(of needle: String) -> Int {
        components(separatedBy: needle).count - 1
    }
}

func time(_ iso: String) -> Timestamp {
    guard let t = Timestamp(iso8601: iso) else { fatalError("bad test time \(iso)") }
    return t
}

/// A long synthetic run: 1 Hz, about 3 m/s along a slowly turning curve (a wide loop with
/// wiggles), altitude on most points, heart rate on most points with a strap drop-out, and a few
/// invalid points mixed in (non-finite or off-globe coordinates) that writers must skip.
struct SyntheticRun {
    var run: ExportRun
    /// Everything fed to the writers, invalid points included, in time order.
    var points: [ExportPoint]
    /// The points a writer should write (the valid ones).
    var expected: [ExportPoint]
    var invalidCount: Int { points.count - expected.count }

    init(seconds: Int = 13_200, lapMetres: Double = 1000) {
        let start = time("2026-05-10T07:30:00.250Z")
        var coordinate = Coordinate(latitude: 45.503_503_4, longitude: 9.179_49)
        var distance = 0.0
        var points: [ExportPoint] = []
        var expected: [ExportPoint] = []
        var lapStarts: [(index: Int, distance: Double)] = [(0, 0)]
        for i in 0..<seconds {
            let t = Double(i)
            let speed = 3.0 + 0.3 * sin(t / 97)
            let heading = t / 400 + 0.8 * sin(t / 1300)
            if i > 0 {
                coordinate = WGS84.offsetting(coordinate, east: speed * sin(heading), north: speed * cos(heading))
                distance += speed
            }
            let dropout = (4000..<4090).contains(i) || i % 37 == 0
            let point = ExportPoint(
                time: start.adding(seconds: t), coordinate: coordinate,
                altitude: i % 53 == 0 ? nil : 120 + 8 * sin(t / 700),
                heartRate: dropout ? nil : 150 + Int(15 * sin(t / 900)) + i % 5,
                distance: distance, speed: speed)
            points.append(point)
            expected.append(point)
            if distance >= Double(lapStarts.count) * lapMetres {
                lapStarts.append((expected.count - 1, distance))
            }
            // A few broken fixes, at the same time as a real one: skipped by the writers.
            if i == 1000 { points.append(ExportPoint(time: point.time, coordinate: Coordinate(latitude: .nan, longitude: 9.2), heartRate: 150)) }
            if i == 5000 { points.append(ExportPoint(time: point.time, coordinate: Coordinate(latitude: 45.5, longitude: .infinity))) }
            if i == 9000 { points.append(ExportPoint(time: point.time, coordinate: Coordinate(latitude: 95, longitude: 9.2))) }
        }
        var laps: [ExportLap] = []
        for (n, lapStart) in lapStarts.enumerated() {
            let endIndex = n + 1 < lapStarts.count ? lapStarts[n + 1].index : expected.count - 1
            let endDistance = n + 1 < lapStarts.count ? lapStarts[n + 1].distance : distance
            let lapPoints = expected[lapStart.index..<max(endIndex, lapStart.index + 1)]
            let rates = lapPoints.compactMap(\.heartRate)
            laps.append(ExportLap(
                startTime: expected[lapStart.index].time,
                time: expected[endIndex].time.seconds(since: expected[lapStart.index].time),
                distance: endDistance - lapStart.distance,
                averageHeartRate: rates.isEmpty ? nil : Double(rates.reduce(0, +)) / Double(rates.count),
                maxHeartRate: rates.max()))
        }
        let rates = expected.compactMap(\.heartRate)
        run = ExportRun(
            name: "Sunday long run & <friends> \"3h40\" 🏃", startTime: start, distance: distance,
            movingTime: Double(seconds - 1), elapsedTime: Double(seconds - 1),
            averageHeartRate: Double(rates.reduce(0, +)) / Double(rates.count), maxHeartRate: rates.max(),
            laps: laps)
        self.points = points
        self.expected = expected
    }

    /// The expected points as tools/verify-export and tools/verify-fit read them: one JSON object
    /// per line.
    var expectedJSONLines: String {
        var text = ""
        for p in expected {
            let hr = p.heartRate.map(String.init) ?? "null"
            let ele = p.altitude.map { "\($0)" } ?? "null"
            text += #"{"time":"\#(p.time.iso8601)","lat":\#(p.coordinate.latitude),"lon":\#(p.coordinate.longitude),"hr":\#(hr),"ele":\#(ele),"#
            text += #""distance":\#(p.distance.map { "\($0)" } ?? "null"),"speed":\#(p.speed.map { "\($0)" } ?? "null")}"#
            text += "\n"
        }
        return text
    }
}
