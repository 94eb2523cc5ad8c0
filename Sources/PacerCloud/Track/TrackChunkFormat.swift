import Gzip

/// `application/x-pacer-track`: the one place that knows the chunk format, so it can change.
/// UTF-8 lines `time_ms,lat,lon,speed_mps,distance_m,moving,hr` (see openapi.yaml): absolute
/// values on every line (the device's TrackUploadFormat writes them so; gzip takes the
/// repetition out), moving 0/1, hr empty when there is none. Lines end in LF or CRLF; blank
/// lines are ignored. Read as a stream of bytes, line by line, so the work per chunk is bounded
/// by the caps below, whatever the body inflates to.
public enum TrackChunkFormat {
    public static let contentType = "application/x-pacer-track"

    /// Lines per chunk, blank ones included. The device sends 600 (10 min at 1 Hz, heart rate on
    /// the GPS sample's line); 20,000 is 5.5 h at 1 Hz in one chunk.
    public static let maxLinesPerChunk = 20_000
    /// Bytes per line: a line the device writes is under 80.
    public static let maxLineBytes = 256
    /// Samples per run: a 24 h run at 1 Hz is 86,400 (172,800 even if heart rate came on lines
    /// of its own).
    public static let maxSamplesPerRun = 200_000

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
        /// The chunk has more lines than `maxLinesPerChunk` (a 413, not a malformed chunk).
        public var tooManyLines = false
    }

    /// Every sample of a chunk, in order.
    public static func decode(_ bytes: [UInt8]) throws(Failure) -> [TrackSample] {
        var samples: [TrackSample] = []
        do {
            try read(bytes, gzip: false) { samples.append($0) }
        } catch {
            throw (error as? Failure) ?? Failure(description: "\(error)")
        }
        return samples
    }

    /// Reads a stored or received chunk body (gzip or plain) and hands each sample to `each`
    /// as it is parsed: no more than one line is held. Throws `Gzip.Failure`, `Failure`, or what
    /// `each` throws.
    public static func read(_ body: [UInt8], gzip: Bool, maxLines: Int? = maxLinesPerChunk,
                            _ each: (TrackSample) throws -> Void) throws {
        var reader = Reader(maxLines: maxLines)
        if gzip {
            try Gzip.inflate(body) { piece in try reader.feed(piece, each) }
        } else {
            try reader.feed(body[...], each)
        }
        try reader.finish(each)
    }

    /// How many samples a stored chunk holds (no cap: for chunks stored before the caps).
    static func countSamples(_ body: [UInt8], gzip: Bool) -> Int? {
        var count = 0
        do {
            try read(body, gzip: gzip, maxLines: nil) { _ in count += 1 }
        } catch {
            return nil
        }
        return count
    }

    /// A push parser: bytes in, samples out, one partial line kept between pieces.
    struct Reader {
        var maxLines: Int? = TrackChunkFormat.maxLinesPerChunk
        private(set) var lines = 0
        private var pending: [UInt8] = []

        init(maxLines: Int? = TrackChunkFormat.maxLinesPerChunk) {
            self.maxLines = maxLines
        }

        mutating func feed(_ bytes: ArraySlice<UInt8>, _ each: (TrackSample) throws -> Void) throws {
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

        mutating func finish(_ each: (TrackSample) throws -> Void) throws {
            guard !pending.isEmpty else { return }
            let last = pending
            pending = []
            try line(last[...], each)
        }

        private mutating func line(_ raw: ArraySlice<UInt8>, _ each: (TrackSample) throws -> Void) throws {
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

    static func sample(_ line: ArraySlice<UInt8>, number: Int) throws(Failure) -> TrackSample {
        let fields = line.split(separator: 0x2C, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        func fail(_ what: String) -> Failure { Failure(description: "track line \(number): \(what)") }
        guard fields.count == 7 else {
            throw fail("\(fields.count) fields, expected 7 (time_ms,lat,lon,speed_mps,distance_m,moving,hr)")
        }
        guard let time = Int64(fields[0]), DeviceInput.timeRange.contains(time) else {
            throw fail("time_ms \(DeviceInput.quoted(fields[0])) is not milliseconds since the epoch from 1980 to 2200")
        }
        guard let lat = Double(fields[1]), lat.isFinite, (-90...90).contains(lat) else {
            throw fail("lat \(DeviceInput.quoted(fields[1])) is not a latitude")
        }
        guard let lon = Double(fields[2]), lon.isFinite, (-180...180).contains(lon) else {
            throw fail("lon \(DeviceInput.quoted(fields[2])) is not a longitude")
        }
        guard let speed = Double(fields[3]), speed.isFinite, DeviceInput.speedMps.contains(speed) else {
            throw fail("speed_mps \(DeviceInput.quoted(fields[3])) is not a speed 0...1000")
        }
        guard let distance = Double(fields[4]), distance.isFinite, DeviceInput.distanceM.contains(distance) else {
            throw fail("distance_m \(DeviceInput.quoted(fields[4])) is not a distance 0...100000000")
        }
        guard fields[5] == "0" || fields[5] == "1" else { throw fail("moving \(DeviceInput.quoted(fields[5])) is not 0 or 1") }
        var heartRate: Int?
        if !fields[6].isEmpty {
            guard let bpm = Int(fields[6]), DeviceInput.heartRate.contains(bpm) else {
                throw fail("hr \(DeviceInput.quoted(fields[6])) is not a heart rate")
            }
            heartRate = bpm
        }
        return TrackSample(timeMs: time, lat: lat, lon: lon, speedMps: speed, distanceM: distance, moving: fields[5] == "1",
                           heartRate: heartRate)
    }

    /// The line for `sample`, as the device writes it (for tests and tools).
    public static func line(_ sample: TrackSample) -> String {
        func fixed(_ value: Double, _ decimals: Int) -> String {
            // Beyond what an Int64 holds (never a checked sample): the plain description.
            guard value.isFinite, abs(value) < 1e12 else { return "\(value)" }
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
