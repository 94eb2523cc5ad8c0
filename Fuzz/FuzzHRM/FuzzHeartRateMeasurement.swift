import PacerCore

// libFuzzer target for the strap's bytes: Heart Rate Measurement and Battery Level decoding and
// the sensor state they feed. A strap (or anything pretending to be one) sends whatever it likes,
// so none of it may trap, and what is accepted must be exactly what the bytes say. Each check is
// worked out from the SIG layout here, independently of the decoder; a failed precondition is a
// crash libFuzzer saves as an artifact. Built and run by tools/fuzz-hrm.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkHeartRateMeasurement(bytes)
    checkBatteryLevel(bytes)
    checkSensor(script: bytes.prefix(64))  // a long script adds time, not states
    return 0
}

private func uint16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }

private func checkHeartRateMeasurement(_ b: [UInt8]) {
    let result = HeartRateMeasurement.decode(b)
    guard let flags = b.first else {
        precondition(result == .failure(.empty), "empty input must be rejected as empty")
        return
    }
    let wide = flags & 0x01 != 0
    let heartRateEnd = wide ? 3 : 2
    let energyEnd = heartRateEnd + (flags & 0x08 != 0 ? 2 : 0)
    let hasRR = flags & 0x10 != 0

    switch result {
    case .failure(let error):
        precondition(!error.description.isEmpty, "every rejection has a reason")
        if b.count < heartRateEnd {
            precondition(error == .truncatedHeartRate(length: b.count, needed: heartRateEnd), "wrong error: \(error)")
        } else if b.count < energyEnd {
            precondition(error == .truncatedEnergyExpended(length: b.count, needed: energyEnd), "wrong error: \(error)")
        } else {
            precondition(hasRR && b.count - energyEnd < 2 && error == .missingRRInterval, "rejected a well-formed value: \(error)")
        }

    case .success(let m):
        precondition(b.count >= energyEnd && (!hasRR || b.count - energyEnd >= 2), "accepted a value too short for its flags")
        precondition(m.flags == flags && m.isUInt16 == wide && m.reservedFlagBits == flags & 0xE0)
        precondition((0...65535).contains(m.bpm) && (wide || m.bpm <= 255), "bpm \(m.bpm) out of range")
        precondition(m.bpm == (wide ? uint16(b, 1) : Int(b[1])), "bpm is not the heart-rate field")
        let contactField = (flags >> 1) & 3
        precondition(m.contact == (contactField == 3 ? .detected : contactField == 2 ? .notDetected : .notSupported))
        precondition(m.energyExpendedKJ == (flags & 0x08 != 0 ? uint16(b, heartRateEnd) : nil), "energy field")

        let remaining = b.count - energyEnd
        if hasRR {
            precondition(m.rrIntervalsRaw.count == remaining / 2 && m.trailingByteCount == remaining % 2, "RR count")
            for (i, raw) in m.rrIntervalsRaw.enumerated() {
                precondition(Int(raw) == uint16(b, energyEnd + 2 * i), "RR interval \(i)")
            }
        } else {
            precondition(m.rrIntervalsRaw.isEmpty && m.trailingByteCount == remaining, "trailing bytes")
        }
        let ms = m.rrIntervalsMs
        precondition(ms.count == m.rrIntervalsRaw.count)
        for (raw, value) in zip(m.rrIntervalsRaw, ms) {
            precondition(value * 1024 == Double(raw) * 1000 && value >= 0 && value < 64_000, "RR ms \(value) for raw \(raw)")
        }

        // Re-encoding gives back the bytes less the trailing ones, and decodes to the same fields.
        let encoded = m.encoded()
        precondition(encoded == Array(b.prefix(b.count - m.trailingByteCount)), "re-encoding differs")
        guard case .success(let again) = HeartRateMeasurement.decode(encoded) else { preconditionFailure("re-encoded value rejected") }
        precondition(again.bpm == m.bpm && again.contact == m.contact && again.energyExpendedKJ == m.energyExpendedKJ
            && again.rrIntervalsRaw == m.rrIntervalsRaw && again.flags == m.flags && again.trailingByteCount == 0)

        let sample = m.sample(at: Timestamp(milliseconds: 0))
        precondition(sample.bpm == m.bpm && sample.rrIntervalsMs == ms && sample.contact == m.contact.isDetected)
        precondition(sample.isValid == (m.contact != .notDetected && m.bpm > 0), "validity")
    }
}

private func checkBatteryLevel(_ b: [UInt8]) {
    switch BatteryLevel.decode(b) {
    case .success(let percent):
        precondition(b.count == 1 && Int(b[0]) == percent && (0...100).contains(percent), "battery accepted \(b)")
    case .failure(let error):
        precondition(b.count != 1 || b[0] > 100, "battery rejected \(b): \(error)")
        precondition(!error.description.isEmpty)
    }
}

/// The input as a script of sensor events: each step's first byte picks the event (and the time
/// that passes before it); a notification takes the next few bytes as its value.
private func checkSensor(script: ArraySlice<UInt8>) {
    let b = Array(script)
    var sensor = HeartRateSensor(staleAfter: 5)
    var now = Timestamp(milliseconds: 1_778_400_000_000)
    var connected = false
    var notifications = 0, malformed = 0
    var last: (measurement: HeartRateMeasurement, time: Timestamp)?
    var i = 0
    while i < b.count {
        let op = b[i]
        i += 1
        now = now.adding(seconds: Double(op >> 3) * 0.25)  // 0–7.75 s: fresh, at the limit and stale
        switch op & 0x07 {
        case 0:
            sensor.connected(name: nil, address: "A0:9E:1A:00:00:01")
            connected = true
            last = nil
        case 1:
            sensor.disconnected()
            connected = false
            last = nil
        case 2:
            let percent = i < b.count ? Int(b[i]) : 0
            i += 1
            sensor.battery(percent)
            precondition(sensor.batteryPercent.map { connected && (0...100).contains($0) } ?? true, "battery")
        default:
            let length = Int(op & 0x07) * 2 - 4  // 2, 4, 6, 8 or 10 bytes, fewer at the end
            let value = Array(b[min(i, b.count)..<min(i + length, b.count)])
            i += length
            notifications += 1
            switch sensor.notification(value, at: now) {
            case .success(let m): if connected { last = (m, now) }
            case .failure: malformed += 1
            }
        }
        precondition(sensor.notificationCount == notifications && sensor.malformedCount == malformed, "counts")
        precondition(sensor.isConnected == connected)
        precondition(sensor.lastMeasurement == last?.measurement && sensor.lastMeasurementTime == last?.time)

        // Read a little after the event, too: the state must follow the rule table.
        for later in [0.0, 4.999, 5.0, 5.001, 90] {
            let at = now.adding(seconds: later)
            let reading = sensor.reading(at: at)
            guard connected else {
                precondition(reading == .disconnected)
                continue
            }
            guard let last else {
                precondition(reading == .noData)
                continue
            }
            let age = at.seconds(since: last.time)
            let sample = last.measurement.sample(at: last.time)
            switch reading {
            case .disconnected:
                preconditionFailure("disconnected while connected")
            case .noData:
                precondition(!sample.isValid && (sample.contact != false || age > 5), "noData with a usable reading")
            case .noContact(let a):
                precondition(sample.contact == false && a == age && a <= 5)
            case .stale(let bpm, let a):
                precondition(sample.isValid && bpm == sample.bpm && a == age && a > 5)
            case .live(let bpm, let rr, let a):
                precondition(sample.isValid && bpm == sample.bpm && rr == sample.rrIntervalsMs && a == age && a <= 5)
            }
        }
    }
}
