import FoundationEssentials
import GPSD
import PacerCore

/// Loads a gpsd JSON log (what `gpspipe -w` writes) and an optional heart-rate log, decodes them
/// the way the daemon does (gpsd JSON through libgps, strap notifications recorded as HRM lines
/// through the BLE decoder), and merges them by time.
public enum ReplayLoader {
    public static func load(
        gpsPath: String, heartRatePath: String?, skipMalformed: Bool = false, keepRawLines: Bool = false
    ) throws(ReplayError) -> ReplayInputs {
        var stats = InputStats()
        var gps: [(key: Int64, input: ReplayInput)] = []
        var heartRate: [HeartRateSample] = []
        let decoder = GPSDecoder()
        let gpsFile = try LogFile(path: gpsPath)
        var lastKey = Int64.min
        try gpsFile.forEachLine { (line, number) throws(ReplayError) in
            stats.gpsLines += 1
            let message: GPSMessage
            do throws(GPSDecodeError) {
                message = try line.withUnsafeBufferPointer { (bytes) throws(GPSDecodeError) in try decoder.decode(utf8: bytes) }
            } catch {
                switch error {
                case .notJSON:
                    stats.nonJSONLines += 1
                    return
                case .malformed(let reason):
                    if skipMalformed {
                        stats.malformedLines += 1
                        return
                    }
                    throw ReplayError(.malformedLine, "\(gpsPath):\(number): malformed gpsd JSON (\(reason)): \(preview(line))")
                }
            }
            if case .fix(let fix) = message, let t = fix.time { lastKey = max(lastKey, t.milliseconds) }
            if keepRawLines { gps.append((lastKey, .rawLine(String(decoding: line, as: UTF8.self)))) }
            switch message {
            case .fix(let fix):
                stats.tpvReports += 1
                // Fixes without a time keep their place in the file relative to the timed ones.
                gps.append((lastKey, .fix(fix)))
            case .other(className: ControlLine.className):
                if let control = ControlLine.parse(line) {
                    gps.append((lastKey, .control(control)))
                } else {
                    throw ReplayError(.malformedLine, "\(gpsPath):\(number): a \(ControlLine.className) line without a known control: \(preview(line))")
                }
            case .other(className: HeartRateLine.className):
                // Placed by its own time below; its raw line (kept above) stays where it was.
                stats.hrmLines += 1
                if let recorded = HeartRateLine.parse(line),
                    case .success(let measurement) = HeartRateMeasurement.decode(recorded.bytes) {
                    heartRate.append(measurement.sample(at: recorded.time))
                } else {
                    stats.hrmMalformed += 1
                }
            case .gpsdError(let text):
                stats.gpsdErrors.append("\(gpsPath):\(number): gpsd reported an error: \(text)")
            default:
                break
            }
        }
        guard stats.gpsLines > stats.nonJSONLines + stats.malformedLines else {
            throw ReplayError(.noData, "\(gpsPath): no gpsd JSON in this file (\(stats.gpsLines) lines, none a JSON object); expected `gpspipe -w` output")
        }

        if let heartRatePath {
            let file = try LogFile(path: heartRatePath)
            let jsonDecoder = JSONDecoder()
            try file.forEachLine { (line, number) throws(ReplayError) in
                stats.heartRateLines += 1
                if line.allSatisfy({ $0 == 32 || $0 == 9 }) { return }
                let record: HeartRateRecord
                do {
                    record = try jsonDecoder.decode(HeartRateRecord.self, from: Data(line))
                } catch {
                    throw ReplayError(.malformedLine, "\(heartRatePath):\(number): malformed heart-rate line (expected {\"time\",\"bpm\",\"rr_ms\",\"contact\"}): \(preview(line))")
                }
                guard let time = Timestamp(iso8601: record.time) else {
                    throw ReplayError(.malformedLine, "\(heartRatePath):\(number): time \"\(record.time)\" is not ISO-8601 UTC")
                }
                guard (0...300).contains(record.bpm) else {
                    throw ReplayError(.malformedLine, "\(heartRatePath):\(number): bpm \(record.bpm) is out of range 0-300")
                }
                heartRate.append(HeartRateSample(time: time, bpm: record.bpm, rrIntervalsMs: record.rr_ms ?? [], contact: record.contact,
                                                 strap: record.strap))
            }
        }
        stats.heartRateSamples = heartRate.count
        // HRM lines and an HR log may interleave; order by time, keeping file order on ties.
        if zip(heartRate, heartRate.dropFirst()).contains(where: { $0.time > $1.time }) {
            heartRate = heartRate.enumerated()
                .sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }
                .map(\.element)
        }

        // Stable merge by time; GPS first on ties, as a fix and a notification of the same
        // instant arrive in that order in the daemon too.
        var items: [ReplayInput] = []
        items.reserveCapacity(gps.count + heartRate.count)
        var h = 0
        for entry in gps {
            while h < heartRate.count, heartRate[h].time.milliseconds < entry.key {
                items.append(.heartRate(heartRate[h]))
                h += 1
            }
            items.append(entry.input)
        }
        while h < heartRate.count {
            items.append(.heartRate(heartRate[h]))
            h += 1
        }
        return ReplayInputs(items: items, stats: stats)
    }

    private static func preview(_ line: ArraySlice<UInt8>) -> String {
        let text = String(decoding: line.prefix(80), as: UTF8.self)
        return line.count > 80 ? text + "…" : text
    }
}

private struct HeartRateRecord: Decodable {
    var time: String
    var bpm: Int
    var rr_ms: [Double]?
    /// Optional: which strap, where two send (a switch to a second strap).
    var strap: String?
    var contact: Bool?
}
