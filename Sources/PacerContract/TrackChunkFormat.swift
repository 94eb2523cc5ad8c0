import PacerCore

/// `application/x-pacer-track` (openapi.yaml `TrackChunk`), written by the device and read by
/// the cloud: UTF-8 lines `time_ms,lat,lon,speed_mps,distance_m,moving,hr[,alt_m]`, lat/lon with 7
/// decimals, speed with 2, distance with 1, moving 0/1, hr empty when there is none, and the
/// altitude with 1 decimal when it is known (no eighth field when not: older lines read as they did). Absolute
/// values on every line: a chunk stands alone, and gzip takes the repetition out (the 3 h 44 min
/// marathon: 171 KB). Lines end in LF (CRLF is read too); blank lines are ignored. Read as a
/// stream of bytes, line by line, so the work per chunk is bounded by the caps below, whatever
/// the body inflates to.
public enum TrackChunkFormat {
    public static let contentType = "application/x-pacer-track"

    /// Samples per chunk the device writes: 10 minutes at 1 Hz, a few tens of KB gzipped,
    /// resumable piecewise.
    public static let samplesPerChunk = 600
    /// A heart rate older than this at a sample is not that sample's.
    public static let heartRateReachSeconds = 5.0

    /// Lines per chunk the cloud takes, blank ones included: 20,000 is 5.5 h at 1 Hz in one chunk.
    public static let maxLinesPerChunk = 20_000
    /// Bytes per line: a line the device writes is under 80.
    public static let maxLineBytes = 256
    /// Samples per run: a 24 h run at 1 Hz is 86,400 (172,800 even if heart rate came on lines
    /// of its own).
    public static let maxSamplesPerRun = 200_000

    // MARK: Writing (the device)

    /// The run in chunks of lines, samples inside a privacy zone left out, each sample with the
    /// newest valid heart rate not after it and at most `heartRateReachSeconds` old.
    public static func chunks(samples: [TrackSample], heartRate: [HeartRateSample], hiding zones: [PrivacyZone],
                              samplesPerChunk: Int = samplesPerChunk) -> [String] {
        var lines: [String] = []
        lines.reserveCapacity(samples.count)
        var h = 0
        var lastValid: HeartRateSample?
        for sample in samples {
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

    /// The line of a recorded sample (no line end).
    public static func line(_ sample: TrackSample, heartRate: Int?) -> String {
        line(ChunkSample(timeMs: sample.time.milliseconds, lat: sample.coordinate.latitude, lon: sample.coordinate.longitude,
                         speedMps: sample.speed, distanceM: sample.distance, moving: sample.moving, heartRate: heartRate,
                         altitudeM: sample.altitude))
    }

    /// The line of `sample` (no line end). A number that cannot be printed (not finite) is 0.
    public static func line(_ sample: ChunkSample) -> String {
        let lat = FixedDecimal.format(sample.lat, decimals: 7) ?? "0"
        let lon = FixedDecimal.format(sample.lon, decimals: 7) ?? "0"
        let speed = FixedDecimal.format(sample.speedMps, decimals: 2) ?? "0"
        let distance = FixedDecimal.format(sample.distanceM, decimals: 1) ?? "0"
        let line = "\(sample.timeMs),\(lat),\(lon),\(speed),\(distance),\(sample.moving ? 1 : 0),\(sample.heartRate.map(String.init) ?? "")"
        guard let altitude = sample.altitudeM.flatMap({ FixedDecimal.format($0, decimals: 1) }) else { return line }
        return line + "," + altitude
    }

    // MARK: Reading (the cloud)

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
        /// The chunk has more lines than `maxLinesPerChunk` (a 413, not a malformed chunk).
        public var tooManyLines = false

        public init(description: String, tooManyLines: Bool = false) {
            self.description = description
            self.tooManyLines = tooManyLines
        }
    }

    /// Every sample of a plain (not gzipped) chunk, in order.
    public static func decode(_ bytes: [UInt8]) throws(Failure) -> [ChunkSample] {
        var samples: [ChunkSample] = []
        var reader = Reader()
        do {
            try reader.feed(bytes[...]) { samples.append($0) }
            try reader.finish { samples.append($0) }
        } catch {
            throw (error as? Failure) ?? Failure(description: "\(error)")
        }
        return samples
    }

    /// A push parser: bytes in (as they come, say from gzip), samples out, one partial line kept
    /// between pieces. Throws `Failure`, or what `each` throws.
    public struct Reader {
        public var maxLines: Int?
        public private(set) var lines = 0
        private var pending: [UInt8] = []

        /// `maxLines` nil: no cap (for chunks stored before the caps).
        public init(maxLines: Int? = TrackChunkFormat.maxLinesPerChunk) {
            self.maxLines = maxLines
        }

        public mutating func feed(_ bytes: ArraySlice<UInt8>, _ each: (ChunkSample) throws -> Void) throws {
            var start = bytes.startIndex
            while let newline = bytes[start...].firstIndex(of: 0x0A) {
                let piece = bytes[start..<newline]
                start = newline + 1
                if pending.isEmpty {
                    try line(piece, each)
                } else {
                    pending += piece
                    let whole = pending
                    pending.removeAll(keepingCapacity: true)
                    try line(whole[...], each)
                }
            }
            pending += bytes[start...]
            guard pending.count <= TrackChunkFormat.maxLineBytes else {
                throw Failure(description: "track line \(lines + 1): longer than \(TrackChunkFormat.maxLineBytes) bytes")
            }
        }

        /// The last line, when the chunk does not end in a line end.
        public mutating func finish(_ each: (ChunkSample) throws -> Void) throws {
            guard !pending.isEmpty else { return }
            let last = pending
            pending = []
            try line(last[...], each)
        }

        private mutating func line(_ raw: ArraySlice<UInt8>, _ each: (ChunkSample) throws -> Void) throws {
            lines += 1
            if let maxLines, lines > maxLines {
                throw Failure(description: "more than \(maxLines) lines in one chunk", tooManyLines: true)
            }
            let text = raw.last == 0x0D ? raw.dropLast() : raw
            guard text.count <= TrackChunkFormat.maxLineBytes else {
                throw Failure(description: "track line \(lines): longer than \(TrackChunkFormat.maxLineBytes) bytes")
            }
            if text.isEmpty { return }
            try each(try TrackChunkFormat.sample(text, number: lines))
        }
    }

    static func sample(_ line: ArraySlice<UInt8>, number: Int) throws(Failure) -> ChunkSample {
        let fields = line.split(separator: 0x2C, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        func fail(_ what: String) -> Failure { Failure(description: "track line \(number): \(what)") }
        guard fields.count == 7 || fields.count == 8 else {
            throw fail("\(fields.count) fields, expected 7 or 8 (time_ms,lat,lon,speed_mps,distance_m,moving,hr[,alt_m])")
        }
        guard let time = Int64(fields[0]), WireTime.range.contains(time) else {
            throw fail("time_ms \(WireLimits.quoted(fields[0])) is not milliseconds since the epoch from 1980 to 2200")
        }
        guard let lat = Double(fields[1]), lat.isFinite, (-90...90).contains(lat) else {
            throw fail("lat \(WireLimits.quoted(fields[1])) is not a latitude")
        }
        guard let lon = Double(fields[2]), lon.isFinite, (-180...180).contains(lon) else {
            throw fail("lon \(WireLimits.quoted(fields[2])) is not a longitude")
        }
        guard let speed = Double(fields[3]), speed.isFinite, WireLimits.speedMps.contains(speed) else {
            throw fail("speed_mps \(WireLimits.quoted(fields[3])) is not a speed 0...1000")
        }
        guard let distance = Double(fields[4]), distance.isFinite, WireLimits.distanceM.contains(distance) else {
            throw fail("distance_m \(WireLimits.quoted(fields[4])) is not a distance 0...100000000")
        }
        guard fields[5] == "0" || fields[5] == "1" else { throw fail("moving \(WireLimits.quoted(fields[5])) is not 0 or 1") }
        var heartRate: Int?
        if !fields[6].isEmpty {
            guard let bpm = Int(fields[6]), WireLimits.heartRate.contains(bpm) else {
                throw fail("hr \(WireLimits.quoted(fields[6])) is not a heart rate")
            }
            heartRate = bpm
        }
        var altitude: Double?
        if fields.count == 8, !fields[7].isEmpty {
            guard let metres = Double(fields[7]), metres.isFinite, WireLimits.altitudeM.contains(metres) else {
                throw fail("alt_m \(WireLimits.quoted(fields[7])) is not an altitude -1000...10000 m")
            }
            altitude = metres
        }
        return ChunkSample(timeMs: time, lat: lat, lon: lon, speedMps: speed, distanceM: distance, moving: fields[5] == "1",
                           heartRate: heartRate, altitudeM: altitude)
    }
}
