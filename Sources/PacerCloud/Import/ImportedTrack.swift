import Export
import PacerContract
import PacerCore

/// One point of a run read from a GPX, TCX or FIT file, with what the file says of it.
struct ImportedPoint: Sendable, Equatable {
    var timeMs: Int64
    var lat: Double
    var lon: Double
    var heartRate: Int?
    /// Metres since the start, as the recording device measured it (TCX, FIT).
    var distance: Double?
    /// Metres per second, as the device measured it (FIT, GPX 1.0 `<speed>`).
    var speed: Double?
}

/// A run read from a file: its points in time order and what the file says of the whole.
struct ImportedTrack: Sendable {
    var format: FileFormat
    var points: [ImportedPoint] = []
    /// The device's distance for the whole run (a FIT session's `total_distance`), when given.
    var totalDistance: Double?
    /// Points left out: no position, no time, or a position off the globe.
    var skipped = 0
}

/// Why a file cannot be imported, said so that the runner can tell what is wrong with it.
struct ImportError: Error, Sendable, CustomStringConvertible, Equatable {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A point's position and time, checked as the cloud checks a device's samples.
enum ImportCheck {
    /// Moving: at least this speed (1 km/h), as the run's moving time counts it.
    static let movingSpeed = 0.28

    static func position(lat: Double?, lon: Double?) -> (Double, Double)? {
        guard let lat, let lon, lat.isFinite, lon.isFinite, (-90...90).contains(lat), (-180...180).contains(lon) else { return nil }
        return (lat, lon)
    }

    /// A heart rate a reader takes as a reading (255 is some devices' "no reading").
    static func heartRate(_ bpm: Int?) -> Int? {
        guard let bpm, (1...254).contains(bpm) else { return nil }
        return bpm
    }
}

/// An imported run as the cloud stores a device's: track chunks and a summary.
struct ImportedRun: Sendable {
    var samples: [ChunkSample]
    var summary: RunSummaryBody

    /// The run of `track`: points sorted by time (a file's order is not trusted), distance the
    /// device's where the file has it for every point, else summed on the WGS-84 ellipsoid;
    /// speed the device's, else from the distance and time to the point before.
    init(_ track: ImportedTrack) throws(ImportError) {
        let points = track.points.enumerated().sorted { ($0.element.timeMs, $0.offset) < ($1.element.timeMs, $1.offset) }.map(\.element)
        guard points.count >= 2 else {
            throw ImportError("the file has \(points.count) point\(points.count == 1 ? "" : "s") with a time and a position; a run needs at least 2"
                + (track.skipped > 0 ? " (\(track.skipped) had no time or no valid position)" : ""))
        }
        guard points.count <= TrackChunkFormat.maxSamplesPerRun else {
            throw ImportError("the file has \(points.count) points; a run has at most \(TrackChunkFormat.maxSamplesPerRun)")
        }
        guard let first = points.first, let last = points.last, WireTime.range.contains(first.timeMs), WireTime.range.contains(last.timeMs) else {
            throw ImportError("the file's times are not between 1980 and 2200 (first \(WireTime.text(milliseconds: points[0].timeMs)))")
        }
        let deviceDistances = points.allSatisfy { $0.distance.map { $0.isFinite && $0 >= 0 } ?? false }
        var samples: [ChunkSample] = []
        samples.reserveCapacity(points.count)
        var distance = 0.0
        var movingMs: Int64 = 0
        var maxSpeed = 0.0
        var heartRates: [Int] = []
        for (index, point) in points.enumerated() {
            var speed = point.speed.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            if index > 0 {
                let previous = points[index - 1]
                let step = WGS84.distance(Coordinate(latitude: previous.lat, longitude: previous.lon),
                                          Coordinate(latitude: point.lat, longitude: point.lon))
                let newDistance = deviceDistances ? max(distance, point.distance ?? 0) : distance + step
                let seconds = Double(point.timeMs - previous.timeMs) / 1000
                if speed == nil { speed = seconds > 0 ? (newDistance - distance) / seconds : 0 }
                if (speed ?? 0) >= ImportCheck.movingSpeed { movingMs += point.timeMs - previous.timeMs }
                distance = newDistance
            } else if deviceDistances {
                distance = point.distance ?? 0
            }
            let clampedSpeed = min(max(speed ?? 0, 0), WireLimits.speedMps.upperBound)
            maxSpeed = max(maxSpeed, clampedSpeed)
            let heartRate = ImportCheck.heartRate(point.heartRate)
            if let heartRate { heartRates.append(heartRate) }
            samples.append(ChunkSample(timeMs: point.timeMs, lat: point.lat, lon: point.lon, speedMps: clampedSpeed,
                                       distanceM: min(distance, WireLimits.distanceM.upperBound), moving: clampedSpeed >= ImportCheck.movingSpeed,
                                       heartRate: heartRate))
        }
        let total = min(track.totalDistance.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? distance, WireLimits.distanceM.upperBound)
        let moving = Double(movingMs) / 1000
        self.samples = samples
        summary = RunSummaryBody(
            start_time: WireTime.text(milliseconds: first.timeMs), end_time: WireTime.text(milliseconds: last.timeMs),
            distance_m: total, moving_time_s: moving, elapsed_time_s: Double(last.timeMs - first.timeMs) / 1000,
            avg_pace_s_per_km: total >= 1 && moving > 0 ? moving / (total / 1000) : nil, max_speed_mps: maxSpeed,
            hr_avg: heartRates.isEmpty ? nil : Double(heartRates.reduce(0, +)) / Double(heartRates.count), hr_max: heartRates.max(),
            chunks: (samples.count + TrackChunkFormat.samplesPerChunk - 1) / TrackChunkFormat.samplesPerChunk, state: "finished")
    }

    /// The samples as the device would upload them: chunks of `TrackChunkFormat.samplesPerChunk` lines.
    var chunkBodies: [[UInt8]] {
        stride(from: 0, to: samples.count, by: TrackChunkFormat.samplesPerChunk).map { start in
            let lines = samples[start..<min(samples.count, start + TrackChunkFormat.samplesPerChunk)].map(TrackChunkFormat.line)
            return Array((lines.joined(separator: "\n") + "\n").utf8)
        }
    }
}
