/// `application/x-pacer-track`: the one place that knows the chunk format, so it can change.
/// UTF-8 lines `time_ms,lat,lon,speed_mps,distance_m,moving,hr` (see openapi.yaml): absolute
/// values on every line (the device's TrackUploadFormat writes them so; gzip takes the
/// repetition out), moving 0/1, hr empty when there is none. Blank lines are ignored.
public enum TrackChunkFormat {
    public static let contentType = "application/x-pacer-track"

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    public static func decode(_ bytes: [UInt8]) throws(Failure) -> [TrackSample] {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Failure(description: "the track is not UTF-8") }
        var samples: [TrackSample] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine[...]
            if line.isEmpty { continue }
            samples.append(try sample(line, number: index + 1))
        }
        return samples
    }

    static func sample(_ line: Substring, number: Int) throws(Failure) -> TrackSample {
        let fields = line.split(separator: ",", omittingEmptySubsequences: false)
        func fail(_ what: String) -> Failure { Failure(description: "track line \(number): \(what)") }
        guard fields.count == 7 else {
            throw fail("\(fields.count) fields, expected 7 (time_ms,lat,lon,speed_mps,distance_m,moving,hr)")
        }
        guard let time = Int64(fields[0]), time >= 0 else { throw fail("time_ms '\(fields[0])' is not a whole number of milliseconds") }
        guard let lat = Double(fields[1]), lat.isFinite, (-90...90).contains(lat) else { throw fail("lat '\(fields[1])' is not a latitude") }
        guard let lon = Double(fields[2]), lon.isFinite, (-180...180).contains(lon) else { throw fail("lon '\(fields[2])' is not a longitude") }
        guard let speed = Double(fields[3]), speed.isFinite, speed >= 0 else { throw fail("speed_mps '\(fields[3])' is not a speed") }
        guard let distance = Double(fields[4]), distance.isFinite, distance >= 0 else {
            throw fail("distance_m '\(fields[4])' is not a distance")
        }
        guard fields[5] == "0" || fields[5] == "1" else { throw fail("moving '\(fields[5])' is not 0 or 1") }
        var heartRate: Int?
        if !fields[6].isEmpty {
            guard let bpm = Int(fields[6]), (0...300).contains(bpm) else { throw fail("hr '\(fields[6])' is not a heart rate") }
            heartRate = bpm
        }
        return TrackSample(timeMs: time, lat: lat, lon: lon, speedMps: speed, distanceM: distance, moving: fields[5] == "1",
                           heartRate: heartRate)
    }

    /// The line for `sample`, as the device writes it (for tests and tools).
    public static func line(_ sample: TrackSample) -> String {
        func fixed(_ value: Double, _ decimals: Int) -> String {
            var scaled = (abs(value) * pow10(decimals)).rounded()
            let sign = value < 0 && scaled != 0 ? "-" : ""
            let whole = Int64(scaled / pow10(decimals))
            scaled -= Double(whole) * pow10(decimals)
            let fraction = String(Int64(scaled))
            return sign + String(whole) + (decimals > 0 ? "." + String(repeating: "0", count: decimals - fraction.count) + fraction : "")
        }
        return "\(sample.timeMs),\(fixed(sample.lat, 7)),\(fixed(sample.lon, 7)),\(fixed(sample.speedMps, 2)),"
            + "\(fixed(sample.distanceM, 1)),\(sample.moving ? 1 : 0),\(sample.heartRate.map(String.init) ?? "")"
    }

    private static func pow10(_ n: Int) -> Double {
        var result = 1.0
        for _ in 0..<n { result *= 10 }
        return result
    }
}
