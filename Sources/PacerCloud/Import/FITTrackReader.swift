import CloudModel
import Export
import PacerContract

/// Reads the activities of a FIT file: every `record` message's timestamp, position
/// (semicircles), heart rate, distance and speed (or enhanced speed); each session's start,
/// totals and sport (one activity per session: a multisport file gives several); the `sport`
/// message's name; the device's serial (`file_id`); and the timer's stops, which start a new
/// segment. Definitions of any layout are followed (either byte order, developer fields,
/// compressed-timestamp headers); fields Pacer does not use are skipped by their size. Every
/// read is bounds-checked: a truncated or garbled file is refused with the byte where it goes
/// wrong, and a file whose CRC does not match is refused before anything in it is believed.
enum FITTrackReader {
    private struct FieldDefinition {
        var number: UInt8
        var size: Int
        var baseType: UInt8
    }

    private struct Definition {
        var global: UInt16
        var bigEndian: Bool
        var fields: [FieldDefinition]
        /// Developer fields' bytes, after the fields.
        var developerBytes: Int
    }

    /// A session as the file closes it.
    private struct Session {
        var startS: UInt32?
        var endS: UInt32?
        var elapsed: Double?
        var timer: Double?
        var distance: Double?
        var sport: Sport?
    }

    static func read(_ bytes: [UInt8]) throws(ImportError) -> [ImportedTrack] {
        guard bytes.count >= 12 else { throw ImportError("FIT: the file is \(bytes.count) bytes, shorter than a FIT header (12 or 14)") }
        let headerSize = Int(bytes[0])
        guard headerSize == 12 || headerSize == 14, bytes.count >= headerSize else {
            throw ImportError("FIT: the header size byte is \(headerSize); a FIT header is 12 or 14 bytes")
        }
        guard Array(bytes[8..<12]) == FITProtocol.signature else { throw ImportError("FIT: bytes 8 to 11 are not \".FIT\": this is no FIT file") }
        let dataSize = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        let end = headerSize + dataSize
        guard end + 2 <= bytes.count else {
            throw ImportError("FIT: the header announces \(dataSize) bytes of records and a CRC, but only \(bytes.count - headerSize) bytes follow it: the file is truncated")
        }
        if headerSize == 14 {
            let stored = UInt16(bytes[12]) | UInt16(bytes[13]) << 8
            if stored != 0 && stored != FITProtocol.crc(bytes[0..<12]) { throw ImportError("FIT: the header's CRC does not match: the file is damaged") }
        }
        let crc = UInt16(bytes[end]) | UInt16(bytes[end + 1]) << 8
        guard FITProtocol.crc(bytes[0..<end]) == crc else { throw ImportError("FIT: the file's CRC does not match its contents: the file is damaged") }

        var track = ImportedTrack(format: .fit)
        var sessions: [Session] = []
        var sportName: String?
        var sportOfMessage: Sport?
        var segment = 0
        var timerStopped = false
        var definitions: [Int: Definition] = [:]
        var lastTimestamp: UInt32?
        var position = headerSize
        func need(_ count: Int, _ what: String) throws(ImportError) {
            guard position + count <= end else { throw ImportError("FIT: \(what) at byte \(position) runs past the end of the records") }
        }
        while position < end {
            let header = bytes[position]
            position += 1
            if header & 0x80 == 0, header & 0x40 != 0 {
                try need(5, "a definition message")
                let bigEndian = bytes[position + 1] == 1
                guard bytes[position + 1] <= 1 else { throw ImportError("FIT: a definition at byte \(position - 1) has byte order \(bytes[position + 1]) (0 or 1)") }
                let global = bigEndian ? UInt16(bytes[position + 2]) << 8 | UInt16(bytes[position + 3])
                    : UInt16(bytes[position + 2]) | UInt16(bytes[position + 3]) << 8
                let count = Int(bytes[position + 4])
                position += 5
                try need(3 * count, "a definition's fields")
                var fields: [FieldDefinition] = []
                for index in 0..<count {
                    let at = position + 3 * index
                    guard bytes[at + 1] > 0 else { throw ImportError("FIT: a field definition at byte \(at) has size 0") }
                    fields.append(FieldDefinition(number: bytes[at], size: Int(bytes[at + 1]), baseType: bytes[at + 2]))
                }
                position += 3 * count
                var developerBytes = 0
                if header & 0x20 != 0 {
                    try need(1, "a definition's developer fields")
                    let developerCount = Int(bytes[position])
                    position += 1
                    try need(3 * developerCount, "a definition's developer fields")
                    for index in 0..<developerCount { developerBytes += Int(bytes[position + 3 * index + 1]) }
                    position += 3 * developerCount
                }
                definitions[Int(header & 0x0F)] = Definition(global: global, bigEndian: bigEndian, fields: fields, developerBytes: developerBytes)
                continue
            }
            // A data message: a normal header, or a compressed-timestamp one (local type in bits 5-6).
            let compressed = header & 0x80 != 0
            let local = compressed ? Int((header >> 5) & 0x03) : Int(header & 0x0F)
            guard let definition = definitions[local] else {
                throw ImportError("FIT: a data message at byte \(position - 1) uses local type \(local), which no definition before it declares")
            }
            var timestamp: UInt32?
            if compressed, let last = lastTimestamp {
                let offset = UInt32(header & 0x1F)
                var time = (last & ~0x1F) | offset
                if offset < last & 0x1F { time &+= 0x20 }
                timestamp = time
            }
            var values: [UInt8: UInt64] = [:]
            var text: String?
            for field in definition.fields {
                try need(field.size, "field \(field.number) of message \(definition.global)")
                if let value = Self.integer(bytes[position..<position + field.size], field, bigEndian: definition.bigEndian) {
                    values[field.number] = value
                } else if definition.global == 12, field.number == 3, field.baseType == FITProtocol.BaseType.string.rawValue {
                    // The sport message's name ("Morning run", "Bike"): text up to its NUL.
                    let raw = bytes[position..<position + field.size].prefix { $0 != 0 }
                    text = String(validating: raw, as: UTF8.self)?.trimmingSpaces
                }
                position += field.size
            }
            try need(definition.developerBytes, "developer fields of message \(definition.global)")
            position += definition.developerBytes
            if let time = values[253] {
                timestamp = UInt32(truncatingIfNeeded: time)
            }
            if let timestamp { lastTimestamp = timestamp }
            switch definition.global {
            case FITProtocol.Message.record:
                Self.addRecord(values, timestamp: timestamp, segment: segment, to: &track)
                if track.points.count > TrackChunkFormat.maxSamplesPerRun {
                    throw ImportError("FIT: more than \(TrackChunkFormat.maxSamplesPerRun) records; a run has at most that many")
                }
            case FITProtocol.Message.session:
                let start = values[2].map { UInt32(truncatingIfNeeded: $0) }
                let elapsed = values[7].map { Double($0) / 1000 }
                sessions.append(Session(
                    startS: start, endS: start.flatMap { start in elapsed.map { start &+ UInt32($0.rounded(.up)) } } ?? timestamp,
                    elapsed: elapsed, timer: values[8].map { Double($0) / 1000 }, distance: values[9].map { Double($0) / 100 },
                    sport: values[5].map { Self.sport(Int($0), sub: values[6].map { Int($0) }) } ?? sportOfMessage))
            case 12:  // sport: what the activity is, and its name
                if let value = values[0] { sportOfMessage = Self.sport(Int(value), sub: values[1].map { Int($0) }) }
                if let text, !text.isEmpty { sportName = String(text.prefix(120)) }
            case FITProtocol.Message.fileID:
                if let serial = values[3] { track.serial = UInt32(truncatingIfNeeded: serial) }
            case 21:  // event: the timer stopped (stop, stop all) and started again is a new segment
                if values[0] == 0, let type = values[1] {
                    if type == 1 || type == 4 { timerStopped = true }
                    if type == 0, timerStopped { segment += 1; timerStopped = false }
                }
            default:
                break
            }
        }
        track.title = sportName
        guard !sessions.isEmpty else {
            track.sport = sportOfMessage
            return [track]
        }
        // One activity per session: its records are those in its time span (the last session
        // takes any after the others' ends).
        return sessions.enumerated().map { index, session in
            var activity = track
            activity.sport = session.sport
            activity.totalDistance = session.distance
            activity.timerSeconds = session.timer
            activity.elapsedSeconds = session.elapsed
            activity.startMs = session.startS.map { (Int64($0) + FITProtocol.epochOffsetSeconds) * 1000 }
            if sessions.count > 1 {
                let from = session.startS.map { (Int64($0) + FITProtocol.epochOffsetSeconds) * 1000 } ?? Int64.min
                let to = index == sessions.count - 1 ? Int64.max : session.endS.map { (Int64($0) + FITProtocol.epochOffsetSeconds) * 1000 } ?? Int64.max
                activity.points = track.points.filter { $0.timeMs >= from && $0.timeMs <= to }
                activity.left = LeftOut()
            }
            return activity
        }
    }

    /// FIT's sport (and sub-sport) as Pacer's: running 1, cycling 2, swimming 5, walking 11,
    /// hiking 17; a virtual ride is cycling with sub-sport 58. Any other (generic, transition,
    /// fitness equipment, …) is "other".
    static func sport(_ sport: Int, sub: Int?) -> Sport {
        switch sport {
        case 1: .run
        case 2: .ride
        case 5: .swim
        case 11: .walk
        case 17: .hike
        default: .other
        }
    }

    private static func addRecord(_ values: [UInt8: UInt64], timestamp: UInt32?, segment: Int, to track: inout ImportedTrack) {
        guard let timestamp else {
            track.left.noTime += 1
            return
        }
        guard let latBits = values[FITProtocol.RecordField.positionLat], let lonBits = values[FITProtocol.RecordField.positionLong],
              let (lat, lon) = ImportCheck.position(lat: FITProtocol.degrees(Int32(truncatingIfNeeded: latBits)),
                                                    lon: FITProtocol.degrees(Int32(truncatingIfNeeded: lonBits))) else {
            track.left.noPosition += 1
            return
        }
        let speed = values[73].map { Double($0) / 1000 } ?? values[FITProtocol.RecordField.speed].map { Double($0) / 1000 }
        // enhanced_altitude (78) or altitude: fifths of a metre above −500 m.
        let altitude = (values[78] ?? values[FITProtocol.RecordField.altitude]).map { Double($0) / 5 - 500 }
        track.points.append(ImportedPoint(
            timeMs: (Int64(timestamp) + FITProtocol.epochOffsetSeconds) * 1000, lat: lat, lon: lon,
            heartRate: values[FITProtocol.RecordField.heartRate].map { Int($0) }, distance: values[FITProtocol.RecordField.distance].map { Double($0) / 100 },
            speed: speed, altitude: altitude, segment: segment))
    }

    /// A whole-number field's value, or nil when it is the base type's "invalid", not a
    /// number of 1, 2, 4 or 8 bytes, or an array.
    private static func integer(_ raw: ArraySlice<UInt8>, _ field: FieldDefinition, bigEndian: Bool) -> UInt64? {
        let type = FITProtocol.BaseType(rawValue: field.baseType)
        guard let type, type != .string, type != .byte, field.size == type.size else { return nil }
        var value: UInt64 = 0
        for byte in bigEndian ? Array(raw) : raw.reversed() { value = value << 8 | UInt64(byte) }
        return value == type.invalid ? nil : value
    }
}
