import Foundation
import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct HeartRateMeasurementTests {
    // MARK: The shared vectors (../shared/data/hrm-vectors.json)

    @Test(.enabled(if: HRMVectors.isAvailable)) func everyHeartRateVectorDecodesAsItsSpecDecoding() throws {
        let vectors = try HRMVectors.load().filter { !$0.isBattery }
        #expect(vectors.count == 13)
        for vector in vectors {
            let expected = vector.spec_decoding
            let result = HeartRateMeasurement.decode(vector.bytes)
            guard expected.valid else {
                guard case .failure(let error) = result else {
                    Issue.record("\(vector.id): decoded \(result) but the vector is invalid")
                    continue
                }
                #expect(error.description == expected.reason, "\(vector.id)")
                continue
            }
            guard case .success(let m) = result else {
                Issue.record("\(vector.id): rejected (\(result)) but the vector is valid")
                continue
            }
            #expect(m.bpm == expected.heart_rate_bpm, "\(vector.id)")
            #expect(m.contact.rawValue == expected.sensor_contact, "\(vector.id)")
            #expect(m.energyExpendedKJ == expected.energy_expended_kj, "\(vector.id)")
            #expect(m.rrIntervalsRaw == expected.rr_intervals_raw_1_1024s, "\(vector.id)")
            // The file rounds to 4 decimals; ours are exact.
            let ms = try #require(expected.rr_intervals_ms)
            #expect(m.rrIntervalsMs.count == ms.count, "\(vector.id)")
            for (ours, theirs) in zip(m.rrIntervalsMs, ms) { #expect(abs(ours - theirs) <= 0.00005 + 1e-9, "\(vector.id)") }
            #expect(m.rrIntervalsMs == m.rrIntervalsRaw.map { Double($0) * 1000 / 1024 })
            #expect(m.trailingByteCount == expected.trailing_bytes, "\(vector.id)")
            #expect((m.reservedFlagBits != 0) == expected.reserved_flag_bits_set, "\(vector.id)")
            #expect(m.flags == UInt8(try #require(expected.flags).dropFirst(2), radix: 16), "\(vector.id)")
            #expect((m.isUInt16 ? "uint16" : "uint8") == expected.hr_format, "\(vector.id)")
            #expect(m.encoded() == vector.bytes, "\(vector.id)")
        }
    }

    @Test(.enabled(if: HRMVectors.isAvailable)) func everyBatteryVectorDecodesAsItsSpecDecoding() throws {
        let vectors = try HRMVectors.load().filter(\.isBattery)
        #expect(vectors.count == 4)
        for vector in vectors {
            switch BatteryLevel.decode(vector.bytes) {
            case .success(let percent):
                #expect(vector.spec_decoding.valid, "\(vector.id)")
                #expect(percent == vector.spec_decoding.battery_percent, "\(vector.id)")
            case .failure(let error):
                #expect(!vector.spec_decoding.valid, "\(vector.id)")
                #expect(error == .reserved(UInt8(try #require(vector.spec_decoding.battery_percent_raw))), "\(vector.id)")
                #expect(error.description.hasSuffix(try #require(vector.spec_decoding.reason)), "\(vector.id)")
            }
        }
    }

    // MARK: Every flag combination

    /// A complete value for `flags`: HR 0x48 (or 0x0148 as uint16), energy 0x0132, RR 340 and 748.
    static func complete(_ flags: UInt8) -> [UInt8] {
        var bytes: [UInt8] = [flags]
        bytes += flags & 0x01 != 0 ? [0x48, 0x01] : [0x48]
        if flags & 0x08 != 0 { bytes += [0x32, 0x01] }
        if flags & 0x10 != 0 { bytes += [0x54, 0x01, 0xEC, 0x02] }
        return bytes
    }

    /// All 32 values of the low five bits, each alone and with reserved bits 5–7 set, complete:
    /// every field where its flag says and nothing else.
    @Test func everyFlagCombinationDecodesItsFields() {
        for low in UInt8(0)..<32 {
            for reserved in [UInt8(0x00), 0x20, 0x40, 0x80, 0xE0] {
                let flags = low | reserved
                let bytes = Self.complete(flags)
                guard case .success(let m) = HeartRateMeasurement.decode(bytes) else {
                    Issue.record("flags 0x\(String(flags, radix: 16)): rejected a complete value")
                    continue
                }
                #expect(m.bpm == (flags & 0x01 != 0 ? 0x0148 : 0x48))
                #expect(m.isUInt16 == (flags & 0x01 != 0))
                let contact: SensorContact = switch (flags >> 1) & 3 { case 2: .notDetected; case 3: .detected; default: .notSupported }
                #expect(m.contact == contact)
                #expect(m.energyExpendedKJ == (flags & 0x08 != 0 ? 0x0132 : nil))
                #expect(m.rrIntervalsRaw == (flags & 0x10 != 0 ? [340, 748] : []))
                #expect(m.trailingByteCount == 0)
                #expect(m.flags == flags)
                #expect(m.reservedFlagBits == reserved)
                #expect(m.encoded() == bytes)
            }
        }
    }

    /// Every prefix of every complete value: rejected with the field that is missing, or (an RR
    /// list cut after a whole interval) accepted with fewer intervals. A byte more than a field
    /// needs is a trailing byte.
    @Test func everyFlagCombinationWithTooFewOrTooManyBytes() {
        for flags in UInt8(0)..<32 {
            let complete = Self.complete(flags)
            let heartRateEnd = flags & 0x01 != 0 ? 3 : 2
            let energyEnd = heartRateEnd + (flags & 0x08 != 0 ? 2 : 0)
            for length in 0..<complete.count {
                let result = HeartRateMeasurement.decode(complete.prefix(length))
                let expected: Result<Int, HeartRateMeasurementError> =
                    if length == 0 { .failure(.empty) }
                    else if length < heartRateEnd { .failure(.truncatedHeartRate(length: length, needed: heartRateEnd)) }
                    else if length < energyEnd { .failure(.truncatedEnergyExpended(length: length, needed: energyEnd)) }
                    else if flags & 0x10 != 0 && length < energyEnd + 2 { .failure(.missingRRInterval) }
                    else { .success((length - energyEnd) / 2) }  // RR intervals; only with bit 4 below the end
                switch (result, expected) {
                case (.failure(let got), .failure(let want)):
                    #expect(got == want, "flags 0x\(String(flags, radix: 16)) length \(length)")
                case (.success(let m), .success(let rrCount)):
                    #expect(m.rrIntervalsRaw.count == rrCount, "flags 0x\(String(flags, radix: 16)) length \(length)")
                    #expect(m.trailingByteCount == (length - energyEnd) % 2)
                default:
                    Issue.record("flags 0x\(String(flags, radix: 16)) length \(length): got \(result), expected \(expected)")
                }
            }
            // Extra bytes: one after a complete value (an odd byte after the RR list), then three.
            for extra in 1...3 {
                let bytes = complete + Array(repeating: 0xAA, count: extra)
                guard case .success(let m) = HeartRateMeasurement.decode(bytes) else {
                    Issue.record("flags 0x\(String(flags, radix: 16)) with \(extra) extra: rejected")
                    continue
                }
                if flags & 0x10 != 0 {
                    // Whole pairs are more RR intervals; an odd byte is left over.
                    #expect(m.rrIntervalsRaw == [340, 748] + Array(repeating: 0xAAAA, count: extra / 2))
                    #expect(m.trailingByteCount == extra % 2)
                } else {
                    #expect(m.rrIntervalsRaw.isEmpty)
                    #expect(m.trailingByteCount == extra)
                }
                #expect(m.encoded() == Array(bytes.dropLast(m.trailingByteCount)))
            }
        }
    }

    @Test func errorsSayWhy() {
        #expect(HeartRateMeasurementError.empty.description == "empty value: not even a flags byte")
        #expect(HeartRateMeasurementError.truncatedHeartRate(length: 2, needed: 3).description
            == "too short for its heart-rate field: 2 bytes, the flags need 3")
        #expect(HeartRateMeasurementError.truncatedHeartRate(length: 1, needed: 2).description
            == "too short for its heart-rate field: 1 byte, the flags need 2")
        #expect(HeartRateMeasurementError.truncatedEnergyExpended(length: 3, needed: 4).description
            == "energy-expended flag set but the field is cut short: 3 bytes, the flags need 4")
        #expect(HeartRateMeasurementError.missingRRInterval.description == "RR-interval flag set but no RR-interval present")
    }

    // MARK: Particular values

    @Test func uint16HeartRateIsLittleEndian() throws {
        #expect(try HeartRateMeasurement.decode([0x01, 0x01, 0x01]).get().bpm == 257)
        #expect(try HeartRateMeasurement.decode([0x01, 0x2C, 0x01]).get().bpm == 300)
        #expect(try HeartRateMeasurement.decode([0x01, 0xFF, 0xFF]).get().bpm == 65535)
        #expect(try HeartRateMeasurement.decode([0x01, 0x48, 0x00]).get().bpm == 72)
        #expect(try HeartRateMeasurement.decode([0x00, 0x00]).get().bpm == 0)
        #expect(try HeartRateMeasurement.decode([0x00, 0xFF]).get().bpm == 255)
    }

    @Test func manyRRIntervalsInOrder() throws {
        let raw = (0..<200).map { UInt16(300 + $0 * 3) }
        var bytes: [UInt8] = [0x16, 150]
        for value in raw { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        let m = try HeartRateMeasurement.decode(bytes).get()
        #expect(m.rrIntervalsRaw == raw)
        #expect(m.rrIntervalsMs.count == 200)
        #expect(m.rrIntervalsMs[0] == 292.96875)
        #expect(m.encoded() == bytes)
        // The extremes of a uint16 interval.
        let extremes = try HeartRateMeasurement.decode([0x10, 60, 0x00, 0x00, 0xFF, 0xFF, 0x01, 0x00]).get()
        #expect(extremes.rrIntervalsRaw == [0, 65535, 1])
        #expect(extremes.rrIntervalsMs == [0, 63999.0234375, 0.9765625])
    }

    @Test func reservedBitsAreIgnoredButKept() throws {
        let plain = try HeartRateMeasurement.decode([0x16, 0x48, 0x54, 0x01, 0xEC, 0x02]).get()
        let reserved = try HeartRateMeasurement.decode([0xF6, 0x48, 0x54, 0x01, 0xEC, 0x02]).get()
        #expect(reserved.bpm == plain.bpm && reserved.contact == plain.contact)
        #expect(reserved.rrIntervalsRaw == plain.rrIntervalsRaw && reserved.energyExpendedKJ == nil)
        #expect(reserved.reservedFlagBits == 0xE0 && plain.reservedFlagBits == 0)
        #expect(reserved.encoded() == [0xF6, 0x48, 0x54, 0x01, 0xEC, 0x02])
    }

    @Test func contactFieldHasThreeStates() throws {
        #expect(try HeartRateMeasurement.decode([0x00, 80]).get().contact == .notSupported)
        #expect(try HeartRateMeasurement.decode([0x02, 80]).get().contact == .notSupported)  // bit 1 alone
        #expect(try HeartRateMeasurement.decode([0x04, 80]).get().contact == .notDetected)
        #expect(try HeartRateMeasurement.decode([0x06, 80]).get().contact == .detected)
        #expect(SensorContact.allCases.map(\.rawValue) == ["not_supported", "supported_not_detected", "detected"])
    }

    @Test func decodesAnyCollection() throws {
        let bytes: [UInt8] = [0xFF, 0x00, 0x16, 0x48, 0x54, 0x01, 0xEC, 0x02, 0xFF]
        let slice = bytes[2..<8]
        #expect(try HeartRateMeasurement.decode(slice).get().rrIntervalsRaw == [340, 748])
        #expect(try HeartRateMeasurement.decode(slice.reversed().reversed()).get().bpm == 72)
    }

    /// Canonical flags from fields: uint16 only when needed, contact bits, energy and RR bits.
    @Test func buildsAndEncodesAsAStrapWould() throws {
        let m = HeartRateMeasurement(bpm: 72, contact: .detected, rrIntervalsRaw: [340, 748])
        #expect(m.flags == 0x16)
        #expect(m.encoded() == [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02])
        #expect(try HeartRateMeasurement.decode(m.encoded()).get() == m)
        let wide = HeartRateMeasurement(bpm: 300, contact: .notDetected, energyExpendedKJ: 50)
        #expect(wide.flags == 0x0D)
        #expect(wide.encoded() == [0x0D, 0x2C, 0x01, 0x32, 0x00])
        #expect(try HeartRateMeasurement.decode(wide.encoded()).get() == wide)
        // Out of range numbers clamp instead of trapping.
        #expect(HeartRateMeasurement(bpm: 70_000, contact: .notSupported).encoded() == [0x01, 0xFF, 0xFF])
        #expect(HeartRateMeasurement(bpm: -1, contact: .notSupported, energyExpendedKJ: -5).encoded() == [0x08, 0x00, 0x00, 0x00])
    }

    /// Every 1-, 2- and 3-byte value, and a few thousand longer ones, decode without trapping and
    /// re-encode to themselves less their trailing bytes.
    @Test func noInputTraps() {
        var inputs: [[UInt8]] = [[]]
        for a in 0...255 { inputs.append([UInt8(a)]) }
        for a in 0...255 { for b in stride(from: 0, through: 255, by: 17) { inputs.append([UInt8(a), UInt8(b)]) } }
        for a in 0...255 { for b in stride(from: 0, through: 255, by: 51) { for c in [0, 1, 128, 255] { inputs.append([UInt8(a), UInt8(b), UInt8(c)]) } } }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<5000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let count = Int(state >> 58)
            inputs.append((0..<count).map { i in UInt8(truncatingIfNeeded: state >> (i % 8 * 8) &+ UInt64(i)) })
        }
        for bytes in inputs {
            if case .success(let m) = HeartRateMeasurement.decode(bytes) {
                #expect(m.encoded() == Array(bytes.dropLast(m.trailingByteCount)))
                #expect((0...65535).contains(m.bpm))
            }
        }
    }

    // MARK: Into a sample

    @Test func sampleContactFollowsTheSensorState() throws {
        let time = Timestamp(iso8601: "2026-05-10T07:41:12.250Z")!
        let worn = try HeartRateMeasurement.decode([0x16, 0x48, 0x54, 0x01, 0xEC, 0x02]).get().sample(at: time)
        #expect(worn == HeartRateSample(time: time, bpm: 72, rrIntervalsMs: [332.03125, 730.46875], contact: true))
        #expect(worn.isValid)

        let unsupported = try HeartRateMeasurement.decode([0x00, 0x55]).get().sample(at: time)
        #expect(unsupported.contact == nil && unsupported.bpm == 85 && unsupported.isValid)

        // The strap's number is kept as sent, but a no-contact sample is never a valid reading.
        let off = try HeartRateMeasurement.decode([0x04, 0xFF]).get().sample(at: time)
        #expect(off.contact == false && off.bpm == 255 && !off.isValid)
        let zero = try HeartRateMeasurement.decode([0x06, 0x00]).get().sample(at: time)
        #expect(zero.contact == true && !zero.isValid)
    }

    // MARK: Battery level

    @Test func batteryLevelIsOneByteUpTo100() {
        for value in 0...255 {
            let result = BatteryLevel.decode([UInt8(value)])
            if value <= 100 {
                #expect(result == .success(value))
            } else {
                #expect(result == .failure(.reserved(UInt8(value))))
            }
        }
        #expect(BatteryLevel.decode([]) == .failure(.empty))
        #expect(BatteryLevel.decode([50, 0]) == .failure(.wrongLength(2)))
        #expect(BatteryLevelError.reserved(101).description == "101 is not a percentage: 101-255 reserved for future use")
        #expect(BatteryLevelError.wrongLength(2).description == "2 bytes: a battery level is exactly one byte")
    }
}
