import PacerCore

/// Packs samples and heart-rate readings into little-endian bytes for `track_chunk`.
///
/// Times are milliseconds since the run's start; positions 1e-7° (1 cm); speed mm/s; distance cm;
/// moving time ms. That is exactly the precision `pacerctl replay --json` prints, so a stored run
/// compares equal to a replay of its raw lines. 23 bytes a sample.
enum TrackCodec {
    static let sampleSize = 23

    static func encode(_ samples: [TrackSample], runStart: Timestamp) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(samples.count * sampleSize)
        for s in samples {
            put(&bytes, UInt32(clamping: s.time.milliseconds - runStart.milliseconds))
            // Rounded exactly as the JSON output rounds (FixedDecimal), so stored equals printed.
            put(&bytes, UInt32(bitPattern: Int32(clamping: FixedDecimal.scaled(s.coordinate.latitude, decimals: 7) ?? 0)))
            put(&bytes, UInt32(bitPattern: Int32(clamping: FixedDecimal.scaled(s.coordinate.longitude, decimals: 7) ?? 0)))
            put(&bytes, UInt16(clamping: FixedDecimal.scaled(s.speed, decimals: 3) ?? 0))
            put(&bytes, UInt32(clamping: FixedDecimal.scaled(s.distance, decimals: 2) ?? 0))
            put(&bytes, UInt32(clamping: FixedDecimal.scaled(s.movingTime, decimals: 3) ?? 0))
            bytes.append(s.moving ? 1 : 0)
        }
        return bytes
    }

    static func decodeSamples(_ bytes: [UInt8], runStart: Timestamp, into samples: inout [TrackSample]) throws(StoreError) {
        guard bytes.count % sampleSize == 0 else { throw .corrupt("sample chunk of \(bytes.count) bytes") }
        var i = 0
        while i < bytes.count {
            let t = Int64(u32(bytes, i))
            let lat = Double(Int32(bitPattern: u32(bytes, i + 4))) / 1e7
            let lon = Double(Int32(bitPattern: u32(bytes, i + 8))) / 1e7
            let speed = Double(u16(bytes, i + 12)) / 1000
            let distance = Double(u32(bytes, i + 14)) / 100
            let moving = Double(u32(bytes, i + 18)) / 1000
            samples.append(TrackSample(
                time: Timestamp(milliseconds: runStart.milliseconds + t),
                coordinate: Coordinate(latitude: lat, longitude: lon),
                speed: speed, distance: distance, moving: bytes[i + 22] != 0, movingTime: moving))
            i += sampleSize
        }
    }

    /// The samples' altitudes (`track_chunk.altitude`), 4 bytes each in decimetres, `Int32.min`
    /// for none; nil when no sample has one (no receiver's 3D fix, or a run recorded before).
    static func encodeAltitudes(_ samples: [TrackSample]) -> [UInt8]? {
        guard samples.contains(where: { $0.altitude != nil }) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(samples.count * 4)
        for s in samples {
            put(&bytes, UInt32(bitPattern: s.altitude.flatMap { FixedDecimal.scaled($0, decimals: 1) }.map { Int32(clamping: $0) } ?? Int32.min))
        }
        return bytes
    }

    /// Sets the altitudes of `samples[start...]`, the samples decoded from the same chunk.
    static func decodeAltitudes(_ bytes: [UInt8], into samples: inout [TrackSample], from start: Int) throws(StoreError) {
        guard bytes.count == 4 * (samples.count - start) else {
            throw .corrupt("altitude chunk of \(bytes.count) bytes for \(samples.count - start) samples")
        }
        for k in 0..<(samples.count - start) {
            let value = Int32(bitPattern: u32(bytes, 4 * k))
            samples[start + k].altitude = value == Int32.min ? nil : Double(value) / 10
        }
    }

    static func encode(_ readings: [HeartRateSample], runStart: Timestamp) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(readings.count * 10)
        for r in readings {
            put(&bytes, UInt32(clamping: r.time.milliseconds - runStart.milliseconds))
            put(&bytes, UInt16(clamping: r.bpm))
            bytes.append(r.contact.map { $0 ? 1 : 0 } ?? 2)
            let rr = r.rrIntervalsMs.prefix(255)
            bytes.append(UInt8(rr.count))
            for interval in rr { put(&bytes, UInt16(clamping: Int(interval.rounded()))) }
        }
        return bytes
    }

    static func decodeHeartRate(_ bytes: [UInt8], runStart: Timestamp, into readings: inout [HeartRateSample]) throws(StoreError) {
        var i = 0
        while i < bytes.count {
            guard i + 8 <= bytes.count else { throw .corrupt("heart-rate chunk truncated") }
            let t = Int64(u32(bytes, i))
            let bpm = Int(u16(bytes, i + 4))
            let contact: Bool? = bytes[i + 6] == 2 ? nil : bytes[i + 6] == 1
            let count = Int(bytes[i + 7])
            i += 8
            guard i + 2 * count <= bytes.count else { throw .corrupt("heart-rate chunk truncated") }
            var rr: [Double] = []
            rr.reserveCapacity(count)
            for k in 0..<count { rr.append(Double(u16(bytes, i + 2 * k))) }
            i += 2 * count
            readings.append(HeartRateSample(
                time: Timestamp(milliseconds: runStart.milliseconds + t), bpm: bpm, rrIntervalsMs: rr, contact: contact))
        }
    }

    private static func put(_ bytes: inout [UInt8], _ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
        bytes.append(UInt8(truncatingIfNeeded: v >> 16))
        bytes.append(UInt8(truncatingIfNeeded: v >> 24))
    }

    private static func put(_ bytes: inout [UInt8], _ v: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: v))
        bytes.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    private static func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> UInt16 {
        UInt16(b[i]) | UInt16(b[i + 1]) << 8
    }
}
