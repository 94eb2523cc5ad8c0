import PacerCore

/// Writes a run as a FIT activity file (protocol 2.0, little-endian): `file_id` (activity), a
/// timer-start `event`, one `record` per point (timestamp, position in semicircles, distance,
/// speed, heart rate, altitude; a value the point lacks is FIT's "invalid"), a timer-stop
/// `event`, one `lap` per ``ExportRun/laps`` entry (one for the whole run when there are none),
/// one running `session` with the run's distance and time, and the `activity`; the 14-byte
/// header and the file end with the FIT SDK's CRC-16.
///
/// Unlike the text writers it cannot stream: the header holds the size of everything after it.
/// `add` encodes each point (23 bytes), `end` hands the whole file to `sink` in one call; a 24 h
/// run at 1 Hz is about 2 MB. Points are assigned to laps as ``TCXWriter`` does (so laps, written
/// after the records, get each one's heart rate when ``ExportLap`` does not carry it). FIT times
/// are whole seconds (rounded down). `begin` refuses the runs ``TCXWriter`` refuses.
public struct FITWriter: ExportWriter {
    /// The FIT SDK profile this file follows (21.32), as the header writes it.
    static let profileVersion: UInt16 = 2132
    /// Development (255): Pacer has no manufacturer id of its own.
    static let manufacturer: UInt64 = 255

    private let sink: ([UInt8]) throws -> Void
    private var state = WriterState.ready
    public private(set) var statistics = ExportStatistics()

    private var run: ExportRun?
    private var laps: [ExportLap] = []
    private var lapHeartRates: [HeartRateTally] = []
    private var runHeartRate = HeartRateTally()
    private var currentLap = 0
    private var lastTime: Timestamp?
    private var body = FITBody()

    public init(sink: @escaping ([UInt8]) throws -> Void) {
        self.sink = sink
    }

    public mutating func begin(_ run: ExportRun) throws {
        try state.requireReady()
        laps = try run.checkedLaps()
        lapHeartRates = Array(repeating: HeartRateTally(), count: laps.count)
        self.run = run
        let start = UInt64(FITProtocol.time(run.startTime))
        body.write(.fileID, [4, Self.manufacturer, 1, start])  // type 4: activity
        body.write(.event, [start, 0, 0])  // timer (0) start (0)
        state = .writing
    }

    public mutating func add(_ point: ExportPoint) throws {
        try state.requireWriting()
        guard statistics.admits(point) else { return }
        while currentLap + 1 < laps.count && laps[currentLap + 1].startTime <= point.time { currentLap += 1 }
        let heartRate = statistics.heartRate(of: point)
        if let heartRate {
            lapHeartRates[currentLap].add(heartRate)
            runHeartRate.add(heartRate)
        }
        let lat = UInt64(UInt32(bitPattern: FITProtocol.semicircles(point.coordinate.latitude)))
        let lon = UInt64(UInt32(bitPattern: FITProtocol.semicircles(point.coordinate.longitude)))
        body.write(.record, [
            UInt64(FITProtocol.time(point.time)), lat, lon,
            Self.scaled(point.distance, scale: 100, offset: 0, invalid: 0xFFFF_FFFF),
            Self.scaled(point.speed, scale: 1000, offset: 0, invalid: 0xFFFF),
            heartRate.map(UInt64.init) ?? 0xFF,
            Self.scaled(point.altitude, scale: 5, offset: 500, invalid: 0xFFFF),
        ])
        lastTime = max(lastTime ?? point.time, point.time)
        statistics.writtenPoints += 1
    }

    public mutating func end() throws {
        try state.requireWriting()
        guard let run else { throw ExportError.notBegun }
        let runEnd = max(run.startTime.adding(seconds: run.elapsedTime), lastTime ?? run.startTime)
        let endTime = UInt64(FITProtocol.time(runEnd))
        body.write(.event, [endTime, 0, 4])  // timer (0) stop all (4)
        for (index, lap) in laps.enumerated() {
            let lapEnd = index + 1 < laps.count ? laps[index + 1].startTime : max(lap.startTime.adding(seconds: lap.time), runEnd)
            body.write(.lap, [
                UInt64(FITProtocol.time(lapEnd)), UInt64(FITProtocol.time(lap.startTime)),
                Self.scaled(lap.time, scale: 1000, offset: 0, invalid: 0xFFFF_FFFF),
                Self.scaled(lap.time, scale: 1000, offset: 0, invalid: 0xFFFF_FFFF),
                Self.scaled(lap.distance, scale: 100, offset: 0, invalid: 0xFFFF_FFFF),
                Self.heartRate(lap.averageHeartRate, otherwise: lapHeartRates[index].average),
                Self.heartRate(lap.maxHeartRate.map(Double.init), otherwise: lapHeartRates[index].maximum),
                9, 1, UInt64(index), run.sport.fitSport,  // event lap (9), stop (1); message_index; sport
            ])
        }
        let elapsed = Self.scaled(run.elapsedTime, scale: 1000, offset: 0, invalid: 0xFFFF_FFFF)
        body.write(.session, [
            endTime, UInt64(FITProtocol.time(run.startTime)), elapsed, elapsed,
            Self.scaled(run.distance, scale: 100, offset: 0, invalid: 0xFFFF_FFFF),
            run.sport.fitSport, 0,  // sport, sub-sport generic
            Self.heartRate(run.averageHeartRate, otherwise: runHeartRate.average),
            Self.heartRate(run.maxHeartRate.map(Double.init), otherwise: runHeartRate.maximum),
            0, UInt64(laps.count), 8, 1, 0,  // first lap, laps; event session (8), stop (1); message_index
        ])
        body.write(.activity, [endTime, elapsed, 1, 0, 26, 1])  // 1 session, manual; event activity (26), stop (1)

        var file: [UInt8] = [14, 0x20]
        file.appendLittleEndian(UInt64(Self.profileVersion), size: 2)
        file.appendLittleEndian(UInt64(body.bytes.count), size: 4)
        file += FITProtocol.signature
        file.appendLittleEndian(UInt64(FITProtocol.crc(file)), size: 2)
        file += body.bytes
        file.appendLittleEndian(UInt64(FITProtocol.crc(file)), size: 2)
        body = FITBody()
        state = .ended
        do {
            try sink(file)
        } catch {
            state = .failed
            throw error
        }
    }

    /// `value` × `scale` + `offset`, rounded, as the field stores it; `invalid` when unknown,
    /// not finite or out of the field's range.
    static func scaled(_ value: Double?, scale: Double, offset: Double, invalid: UInt64) -> UInt64 {
        guard let value, value.isFinite else { return invalid }
        let stored = ((value + offset) * scale).rounded(.toNearestOrAwayFromZero)
        guard stored >= 0, stored < Double(invalid) else { return invalid }
        return UInt64(stored)
    }

    private static func heartRate(_ given: Double?, otherwise computed: Double?) -> UInt64 {
        ExportText.heartRate(given ?? computed).map(UInt64.init) ?? 0xFF
    }
}

/// Heart rates seen in a lap or a run.
private struct HeartRateTally {
    private var sum = 0
    private var count = 0
    private(set) var maximum: Double?

    mutating func add(_ bpm: Int) {
        sum += bpm
        count += 1
        maximum = max(maximum ?? 0, Double(bpm))
    }

    var average: Double? { count == 0 ? nil : Double(sum) / Double(count) }
}

/// The messages the writer uses, each under a local message type of its own, and their fields in
/// the order `FITBody.write` takes the values.
enum FITMessage: UInt8, CaseIterable {
    case fileID = 0, event, record, lap, session, activity

    typealias Field = (number: UInt8, type: FITProtocol.BaseType)

    var global: UInt16 {
        switch self {
        case .fileID: FITProtocol.Message.fileID
        case .event: FITProtocol.Message.event
        case .record: FITProtocol.Message.record
        case .lap: FITProtocol.Message.lap
        case .session: FITProtocol.Message.session
        case .activity: FITProtocol.Message.activity
        }
    }

    var fields: [Field] {
        switch self {
        // type, manufacturer, product, time_created
        case .fileID: [(0, .enumeration), (1, .uint16), (2, .uint16), (4, .uint32)]
        // timestamp, event, event_type
        case .event: [(253, .uint32), (0, .enumeration), (1, .enumeration)]
        case .record:
            [(FITProtocol.RecordField.timestamp, .uint32), (FITProtocol.RecordField.positionLat, .sint32),
             (FITProtocol.RecordField.positionLong, .sint32), (FITProtocol.RecordField.distance, .uint32),
             (FITProtocol.RecordField.speed, .uint16), (FITProtocol.RecordField.heartRate, .uint8),
             (FITProtocol.RecordField.altitude, .uint16)]
        // timestamp, start_time, total_elapsed_time, total_timer_time, total_distance, avg_heart_rate,
        // max_heart_rate, event, event_type, message_index, sport
        case .lap:
            [(253, .uint32), (2, .uint32), (7, .uint32), (8, .uint32), (9, .uint32), (15, .uint8), (16, .uint8),
             (0, .enumeration), (1, .enumeration), (254, .uint16), (25, .enumeration)]
        // timestamp, start_time, total_elapsed_time, total_timer_time, total_distance, sport, sub_sport,
        // avg_heart_rate, max_heart_rate, first_lap_index, num_laps, event, event_type, message_index
        case .session:
            [(253, .uint32), (2, .uint32), (7, .uint32), (8, .uint32), (9, .uint32), (5, .enumeration), (6, .enumeration),
             (16, .uint8), (17, .uint8), (25, .uint16), (26, .uint16), (0, .enumeration), (1, .enumeration), (254, .uint16)]
        // timestamp, total_timer_time, num_sessions, type, event, event_type
        case .activity:
            [(253, .uint32), (0, .uint32), (1, .uint16), (2, .enumeration), (3, .enumeration), (4, .enumeration)]
        }
    }
}

/// The records of a FIT file after its header: each message's definition before its first data
/// message, then the data messages.
struct FITBody {
    private(set) var bytes: [UInt8] = []
    private var defined: Set<UInt8> = []

    mutating func write(_ message: FITMessage, _ values: [UInt64]) {
        let fields = message.fields
        precondition(values.count == fields.count, "FITBody.write: \(message) takes \(fields.count) values")
        if defined.insert(message.rawValue).inserted {
            bytes += [0x40 | message.rawValue, 0, 0]  // definition header; reserved; little-endian
            bytes.appendLittleEndian(UInt64(message.global), size: 2)
            bytes.append(UInt8(fields.count))
            for field in fields { bytes += [field.number, UInt8(field.type.size), field.type.rawValue] }
        }
        bytes.append(message.rawValue)
        for (field, value) in zip(fields, values) { bytes.appendLittleEndian(value, size: field.type.size) }
    }
}

extension [UInt8] {
    mutating func appendLittleEndian(_ value: UInt64, size: Int) {
        for index in 0..<size { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}
