/// A run's track as the cloud takes it (`application/x-pacer-track`, documented in
/// Sources/PacerCloud/openapi.yaml): one CSV line per sample,
/// `time_ms,lat,lon,speed_mps,distance_m,moving,hr`, lat/lon with 7 decimals, moving 0/1, hr
/// empty when there is none. Gzipped by the uplink. Absolute values on every line: a chunk
/// stands alone, and gzip takes the repetition out (the 3 h 44 min marathon: 171 KB).
public enum TrackUploadFormat {
    /// Samples per chunk: 10 minutes at 1 Hz, a few tens of KB gzipped, resumable piecewise.
    public static let samplesPerChunk = 600
    /// A heart rate older than this at a sample is not that sample's.
    public static let heartRateReachSeconds = 5.0

    /// The run in chunks of lines, samples inside a privacy zone left out.
    public static func chunks(samples: [TrackSample], heartRate: [HeartRateSample], hiding zones: [PrivacyZone],
                              samplesPerChunk: Int = samplesPerChunk) -> [String] {
        var lines: [String] = []
        lines.reserveCapacity(samples.count)
        var h = 0
        var lastValid: HeartRateSample?
        for sample in samples {
            // Heart rate is merged by time: the newest valid reading not after the sample.
            while h < heartRate.count, heartRate[h].time <= sample.time {
                if heartRate[h].isValid { lastValid = heartRate[h] }
                h += 1
            }
            guard !zones.hides(sample.coordinate) else { continue }
            let hr = lastValid.flatMap { sample.time.seconds(since: $0.time) <= heartRateReachSeconds ? $0.bpm : nil }
            lines.append(line(sample, heartRate: hr))
        }
        return stride(from: 0, to: lines.count, by: max(1, samplesPerChunk)).map { start in
            lines[start..<min(lines.count, start + samplesPerChunk)].joined(separator: "\n") + "\n"
        }
    }

    public static func line(_ sample: TrackSample, heartRate: Int?) -> String {
        let lat = FixedDecimal.format(sample.coordinate.latitude, decimals: 7) ?? "0"
        let lon = FixedDecimal.format(sample.coordinate.longitude, decimals: 7) ?? "0"
        let speed = FixedDecimal.format(sample.speed, decimals: 2) ?? "0"
        let distance = FixedDecimal.format(sample.distance, decimals: 1) ?? "0"
        return "\(sample.time.milliseconds),\(lat),\(lon),\(speed),\(distance),\(sample.moving ? 1 : 0),\(heartRate.map(String.init) ?? "")"
    }
}
