/// One Heart Rate Measurement notification (BLE characteristic 0x2A37), decoded as the Bluetooth
/// SIG Heart Rate Service 1.0 lays it out: flags, heart rate (uint8 or uint16), [energy expended
/// uint16], [RR interval uint16]…, all little-endian.
///
/// Trailing bytes are tolerated, not rejected: the SIG layout gives the RR count by the remaining
/// length, the shared vectors' `spec_decoding` reports `trailing_bytes` as part of a *valid*
/// decoding, and future revisions may append fields. So an odd byte after the RR intervals, or
/// bytes after the last announced field, are counted in `trailingByteCount` and otherwise
/// ignored. Reserved flag bits 5–7 are ignored likewise (kept in `flags`).
public struct HeartRateMeasurement: Sendable, Equatable {
    /// Beats per minute, exactly as sent (0...65535); 0 is what straps send when they have none.
    public let bpm: Int
    public let contact: SensorContact
    /// Kilojoules since the last reset through control point 0x2A39; nil when not sent.
    public let energyExpendedKJ: Int?
    /// RR intervals in 1/1024 s, oldest first.
    public let rrIntervalsRaw: [UInt16]
    /// The flags byte as received (reserved bits included), so `encoded()` gives the same bytes.
    public let flags: UInt8
    /// Bytes after the last field the flags announce (see the type's note).
    public let trailingByteCount: Int

    /// A measurement as a strap would send it: canonical flags, uint16 only when `bpm` needs it.
    public init(bpm: Int, contact: SensorContact, energyExpendedKJ: Int? = nil, rrIntervalsRaw: [UInt16] = []) {
        self.init(bpm: bpm, contact: contact, energyExpendedKJ: energyExpendedKJ, rrIntervalsRaw: rrIntervalsRaw,
                  flags: 0, trailingByteCount: 0)
    }

    private init(bpm: Int, contact: SensorContact, energyExpendedKJ: Int?, rrIntervalsRaw: [UInt16], flags: UInt8, trailingByteCount: Int) {
        self.bpm = bpm
        self.contact = contact
        self.energyExpendedKJ = energyExpendedKJ
        self.rrIntervalsRaw = rrIntervalsRaw
        self.trailingByteCount = trailingByteCount
        self.flags = Self.flags(bpm: bpm, contact: contact, energy: energyExpendedKJ != nil, rr: !rrIntervalsRaw.isEmpty, keeping: flags)
    }

    /// RR intervals in milliseconds: raw × 1000 / 1024, exact in a Double (a power-of-two divisor).
    public var rrIntervalsMs: [Double] { rrIntervalsRaw.map { Double($0) * 1000 / 1024 } }

    /// Flag bit 0: the heart rate was sent as uint16.
    public var isUInt16: Bool { flags & Flag.uint16 != 0 }

    /// Flag bits 5–7, reserved for future use; ignored.
    public var reservedFlagBits: UInt8 { flags & Flag.reserved }

    /// Decodes one 0x2A37 value. Never traps: anything malformed is a `.failure` with the reason.
    public static func decode(_ bytes: some Collection<UInt8>) -> Result<HeartRateMeasurement, HeartRateMeasurementError> {
        let b = Array(bytes)
        guard let flags = b.first else { return .failure(.empty) }
        var offset = 1

        let wide = flags & Flag.uint16 != 0
        let heartRateEnd = offset + (wide ? 2 : 1)
        guard b.count >= heartRateEnd else { return .failure(.truncatedHeartRate(length: b.count, needed: heartRateEnd)) }
        let bpm = wide ? Int(uint16(b, at: offset)) : Int(b[offset])
        offset = heartRateEnd

        var energy: Int?
        if flags & Flag.energy != 0 {
            guard b.count >= offset + 2 else { return .failure(.truncatedEnergyExpended(length: b.count, needed: offset + 2)) }
            energy = Int(uint16(b, at: offset))
            offset += 2
        }

        var rr: [UInt16] = []
        if flags & Flag.rrIntervals != 0 {
            let count = (b.count - offset) / 2
            guard count > 0 else { return .failure(.missingRRInterval) }
            rr.reserveCapacity(count)
            for i in 0..<count { rr.append(uint16(b, at: offset + 2 * i)) }
            offset += 2 * count
        }

        return .success(HeartRateMeasurement(
            bpm: bpm, contact: SensorContact(flags: flags), energyExpendedKJ: energy, rrIntervalsRaw: rr,
            flags: flags, trailingByteCount: b.count - offset))
    }

    /// The value as bytes on air, without trailing bytes. For a decoded measurement this is the
    /// received value minus its `trailingByteCount` last bytes. Out-of-range numbers are clamped
    /// to uint16 rather than trapping.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [flags]
        let value = UInt16(clamping: bpm)
        if isUInt16 { append(value, to: &out) } else { out.append(UInt8(truncatingIfNeeded: value)) }
        if let energyExpendedKJ { append(UInt16(clamping: energyExpendedKJ), to: &out) }
        for interval in rrIntervalsRaw { append(interval, to: &out) }
        return out
    }

    /// Flags consistent with the fields, keeping what the fields cannot say: the uint16 format
    /// of a small value, a lone bit 1 (contact not supported either way) and the reserved bits.
    private static func flags(bpm: Int, contact: SensorContact, energy: Bool, rr: Bool, keeping old: UInt8) -> UInt8 {
        var flags = old & (Flag.reserved | Flag.uint16)
        if bpm > 0xFF { flags |= Flag.uint16 }
        switch contact {
        case .notSupported: flags |= old & 0b110 == 0b010 ? 0b010 : 0
        case .notDetected: flags |= 0b100
        case .detected: flags |= 0b110
        }
        if energy { flags |= Flag.energy }
        if rr { flags |= Flag.rrIntervals }
        return flags
    }

    private enum Flag {
        static let uint16: UInt8 = 0x01
        static let energy: UInt8 = 0x08
        static let rrIntervals: UInt8 = 0x10
        static let reserved: UInt8 = 0xE0
    }

    private static func uint16(_ b: [UInt8], at i: Int) -> UInt16 {
        UInt16(b[i]) | UInt16(b[i + 1]) << 8
    }

    private func append(_ value: UInt16, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
    }
}
