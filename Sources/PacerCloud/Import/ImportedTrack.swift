import CloudModel
import Export
import PacerContract
import PacerCore

/// One point of an activity read from a GPX, TCX or FIT file, with what the file says of it.
struct ImportedPoint: Sendable, Equatable {
    var timeMs: Int64
    var lat: Double
    var lon: Double
    var heartRate: Int?
    /// Metres since the start, as the recording device measured it (TCX, FIT).
    var distance: Double?
    /// Metres per second, as the device measured it (FIT, GPX 1.0 `<speed>`).
    var speed: Double?
    /// Metres above sea level (GPX `<ele>`, TCX `AltitudeMeters`, FIT altitude); nil when the
    /// file has none or one no place on earth has.
    var altitude: Double?
    /// The file's track or segment (GPX `trk`/`trkseg`, TCX `Track`): a new one is a new
    /// recording, never joined to the last by a straight line.
    var segment = 0
}

/// One activity read from a file (a FIT file has one per session): its points in the file's
/// order and what the file says of the whole.
struct ImportedTrack: Sendable {
    var format: FileFormat
    var points: [ImportedPoint] = []
    /// The device's distance for the whole activity (FIT session, TCX laps), when given.
    var totalDistance: Double?
    /// The device's moving (timer) and elapsed seconds (FIT session, TCX laps), when given.
    var timerSeconds: Double?
    var elapsedSeconds: Double?
    /// When the activity started by the file (FIT session `start_time`, TCX `Id` or first lap).
    var startMs: Int64?
    /// The file's sport (FIT `sport`/`sub_sport`, TCX `Sport`, GPX `type`); nil: it says none.
    var sport: Sport?
    /// Its name (GPX `trk`/`metadata` `name`, FIT `sport` message's name).
    var title: String?
    /// The recording device's serial number (FIT `file_id`).
    var serial: UInt32?
    /// Points left out, counted by why.
    var left = LeftOut()

    init(format: FileFormat) { self.format = format }
}

/// What an import left out of a file, by reason, said in its message.
struct LeftOut: Sendable, Equatable {
    var noTime = 0
    var noPosition = 0
    var repeatedTime = 0
    var outOfOrder = 0
    var tooFast = 0

    var total: Int { noTime + noPosition + repeatedTime + outOfOrder + tooFast }

    /// "3 points without a time, 1 point out of time order", or nil when nothing was.
    var sentence: String? {
        let parts = [(noTime, "without a time"), (noPosition, "without a valid position"), (repeatedTime, "repeating the time of the point before"),
                     (outOfOrder, "out of time order (before the point ahead of them)"),
                     (tooFast, "reached at a speed no one of that sport reaches")]
            .filter { $0.0 > 0 }.map { "\($0.0) point\($0.0 == 1 ? "" : "s") \($0.1)" }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}

/// Why a file cannot be imported, said so that the runner can tell what is wrong with it.
struct ImportError: Error, Sendable, CustomStringConvertible, Equatable {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A point's position and time, checked as the cloud checks a device's samples.
enum ImportCheck {
    static func position(lat: Double?, lon: Double?) -> (Double, Double)? {
        guard let lat, let lon, lat.isFinite, lon.isFinite, (-90...90).contains(lat), (-180...180).contains(lon) else { return nil }
        // 0, 0 is what several devices write for "no fix".
        guard lat != 0 || lon != 0 else { return nil }
        return (lat, lon)
    }

    /// A heart rate a reader takes as a reading (255 is some devices' "no reading").
    static func heartRate(_ bpm: Int?) -> Int? {
        guard let bpm, (1...254).contains(bpm) else { return nil }
        return bpm
    }

    /// The fastest a point may be reached from the one before (m/s): past it the point is a
    /// glitch. On foot the core's bound for a Doppler reading (`TrackerConfiguration`); a bike
    /// 35 m/s (126 km/h); a swimmer 5; anything else 100.
    static func maxSpeed(_ sport: Sport) -> Double {
        switch sport {
        case .run, .walk, .hike: TrackerConfiguration().maxPlausibleSpeed
        case .ride: 35
        case .swim: 5
        case .other: 100
        }
    }
}

/// An imported activity as the cloud stores a device's run: track chunks and a summary, with
/// what the file says it is.
struct ImportedRun: Sendable {
    var samples: [ChunkSample]
    var summary: RunSummaryBody
    var sport: Sport
    var title: String?
    /// What recognises the activity in another file (`identity`).
    var serial: UInt32?
    var left: LeftOut
    /// `RunDoubt`'s verdict.
    var doubt: String?

    /// The activity of `track`. Points are taken in the file's order: one not after the point
    /// before it, or reached from it faster than the sport allows, is left out (and counted).
    /// Distance: the device's where the file has it for every point, else summed on the WGS-84
    /// ellipsoid within each segment (a gap between segments is no distance). Moving time by the
    /// core's rules (`MovingClock`), a new segment a pause. Without two positioned points the
    /// file's own totals make the activity, shown without a map.
    init(_ track: ImportedTrack) throws(ImportError) {
        let sport = track.sport ?? .run
        let maxSpeed = ImportCheck.maxSpeed(sport)
        var left = track.left
        var points: [ImportedPoint] = []
        points.reserveCapacity(track.points.count)
        for point in track.points {
            guard let previous = points.last else { points.append(point); continue }
            guard point.timeMs != previous.timeMs else { left.repeatedTime += 1; continue }
            guard point.timeMs > previous.timeMs else { left.outOfOrder += 1; continue }
            if point.segment == previous.segment {
                let metres = WGS84.distance(Coordinate(latitude: previous.lat, longitude: previous.lon), Coordinate(latitude: point.lat, longitude: point.lon))
                let seconds = Double(point.timeMs - previous.timeMs) / 1000
                // A few metres of jitter between close fixes is no speed.
                if metres > 10, metres / seconds > maxSpeed { left.tooFast += 1; continue }
            }
            if let speed = point.speed, speed.isFinite, speed > maxSpeed { left.tooFast += 1; continue }
            points.append(point)
        }
        guard points.count <= TrackChunkFormat.maxSamplesPerRun else {
            throw ImportError("the file has \(points.count) points; a run has at most \(TrackChunkFormat.maxSamplesPerRun)")
        }
        let totalDistance = track.totalDistance.flatMap { $0.isFinite && $0 >= 0 ? min($0, WireLimits.distanceM.upperBound) : nil }
        let timer = track.timerSeconds.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        let elapsedTotal = track.elapsedSeconds.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        guard points.count >= 2 else {
            // No track: the file's own distance and time, when it has them (a foot pod, a treadmill).
            guard let startMs = track.startMs ?? points.first?.timeMs, let seconds = timer ?? elapsedTotal, seconds > 0 || (totalDistance ?? 0) > 0 else {
                throw ImportError("the file has \(points.count) point\(points.count == 1 ? "" : "s") with a time and a position and no totals of its own "
                    + "(distance and time); an activity needs one or the other" + (left.sentence.map { " (left out: \($0))" } ?? ""))
            }
            guard WireTime.range.contains(startMs) else { throw ImportError("the file's start is not between 1980 and 2200") }
            let elapsed = elapsedTotal ?? seconds
            let distance = totalDistance ?? 0
            // Points without a position are what such a file is made of: nothing left out.
            left.noPosition = 0
            self.samples = []
            summary = RunSummaryBody(
                start_time: WireTime.text(milliseconds: startMs), end_time: WireTime.text(milliseconds: startMs + Int64(elapsed * 1000)),
                distance_m: distance, moving_time_s: seconds, elapsed_time_s: elapsed,
                avg_pace_s_per_km: distance >= 1 && seconds > 0 ? seconds / (distance / 1000) : nil, max_speed_mps: nil,
                hr_avg: nil, hr_max: nil, chunks: 0, state: "finished")
            (self.sport, title, serial, self.left) = (sport, track.title, track.serial, left)
            doubt = RunDoubt.reason(distanceM: distance, movingS: seconds, elapsedS: elapsed, sport: sport, points: [])
            return
        }
        guard let first = points.first, let last = points.last, WireTime.range.contains(first.timeMs), WireTime.range.contains(last.timeMs) else {
            throw ImportError("the file's times are not between 1980 and 2200 (first \(WireTime.text(milliseconds: points[0].timeMs)))")
        }
        let deviceDistances = points.allSatisfy { $0.distance.map { $0.isFinite && $0 >= 0 } ?? false }
        var samples: [ChunkSample] = []
        samples.reserveCapacity(points.count)
        var distance = 0.0
        var clock = MovingClock()
        var maxSpeedSeen = 0.0
        var heartRates: [Int] = []
        for (index, point) in points.enumerated() {
            var speed = point.speed.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            let newSegment = index > 0 && point.segment != points[index - 1].segment
            if index > 0 {
                let previous = points[index - 1]
                let step = newSegment ? 0 : WGS84.distance(Coordinate(latitude: previous.lat, longitude: previous.lon),
                                                             Coordinate(latitude: point.lat, longitude: point.lon))
                let newDistance = deviceDistances ? max(distance, point.distance ?? 0) : distance + step
                let seconds = Double(point.timeMs - previous.timeMs) / 1000
                if speed == nil { speed = seconds > 0 && !newSegment ? (newDistance - distance) / seconds : 0 }
                distance = newDistance
            } else if deviceDistances {
                distance = point.distance ?? 0
            }
            let clampedSpeed = min(max(speed ?? 0, 0), WireLimits.speedMps.upperBound)
            let moving = clock.add(time: Double(point.timeMs - first.timeMs) / 1000, speed: clampedSpeed, newSegment: newSegment)
            maxSpeedSeen = max(maxSpeedSeen, clampedSpeed)
            let heartRate = ImportCheck.heartRate(point.heartRate)
            if let heartRate { heartRates.append(heartRate) }
            samples.append(ChunkSample(timeMs: point.timeMs, lat: point.lat, lon: point.lon, speedMps: clampedSpeed,
                                       distanceM: min(distance, WireLimits.distanceM.upperBound), moving: moving, heartRate: heartRate,
                                       altitudeM: point.altitude.flatMap { $0.isFinite && WireLimits.altitudeM.contains($0) ? $0 : nil }))
        }
        let total = totalDistance ?? min(distance, WireLimits.distanceM.upperBound)
        // The device's timer where the file gives it (it knew when it was paused); else the core's rules.
        let elapsedOfTrack = Double(last.timeMs - min(track.startMs ?? first.timeMs, first.timeMs)) / 1000
        let moving = min(timer ?? clock.movingTime, max(elapsedOfTrack, elapsedTotal ?? 0))
        // The session's start, when the file gives one before the first fix.
        let startMs = min(track.startMs.flatMap { WireTime.range.contains($0) ? $0 : nil } ?? first.timeMs, first.timeMs)
        self.samples = samples
        summary = RunSummaryBody(
            start_time: WireTime.text(milliseconds: startMs), end_time: WireTime.text(milliseconds: last.timeMs),
            distance_m: total, moving_time_s: moving, elapsed_time_s: Double(last.timeMs - startMs) / 1000,
            avg_pace_s_per_km: total >= 1 && moving > 0 ? moving / (total / 1000) : nil, max_speed_mps: maxSpeedSeen,
            hr_avg: heartRates.isEmpty ? nil : Double(heartRates.reduce(0, +)) / Double(heartRates.count), hr_max: heartRates.max(),
            chunks: (samples.count + TrackChunkFormat.samplesPerChunk - 1) / TrackChunkFormat.samplesPerChunk, state: "finished")
        (self.sport, title, serial, self.left) = (sport, track.title, track.serial, left)
        doubt = RunDoubt.reason(distanceM: total, movingS: moving, elapsedS: summary.elapsed_time_s, sport: sport,
                                points: samples.map { RunDoubt.Point(timeMs: $0.timeMs, distanceM: $0.distanceM) })
    }

    /// What recognises this activity in another file: the recording device's serial and the
    /// start (to the second), or, without a serial, the start (to the minute) and the distance
    /// (to 100 m). Two files of one activity agree on these whatever else they keep.
    var identity: String {
        let startS = (WireTime.milliseconds(summary.start_time) ?? 0) / 1000
        if let serial { return "serial \(serial) start \(startS)" }
        return "start \(startS / 60) distance \(Int((summary.distance_m / 100).rounded()))"
    }

    /// The samples as the device would upload them: chunks of `TrackChunkFormat.samplesPerChunk` lines.
    var chunkBodies: [[UInt8]] {
        stride(from: 0, to: samples.count, by: TrackChunkFormat.samplesPerChunk).map { start in
            let lines = samples[start..<min(samples.count, start + TrackChunkFormat.samplesPerChunk)].map(TrackChunkFormat.line)
            return Array((lines.joined(separator: "\n") + "\n").utf8)
        }
    }
}
