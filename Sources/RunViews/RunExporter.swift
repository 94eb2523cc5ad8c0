import Export
import PacerCore
import PacerReplay
import Store

/// The formats a run is exported in.
public enum RunExportFormat: String, Sendable, CaseIterable {
    /// GPX 1.1 with heart rate (Garmin TrackPointExtension).
    case gpx
    case tcx
    /// A FIT activity file (binary: on the control socket's text channel it travels as base64,
    /// see `RunExporter.export`).
    case fit
    /// The gpsd JSON lines as recorded: `pacerctl replay --gps` of it reproduces the run.
    case gpsd
    /// Heart-rate readings as JSON lines, the format `pacerctl replay --hr` reads.
    case hr

    public var fileExtension: String {
        switch self {
        case .gpx: "gpx"
        case .tcx: "tcx"
        case .fit: "fit"
        case .gpsd: "gpsd.jsonl"
        case .hr: "hr.jsonl"
        }
    }
}

/// Streams a stored run out in an export format; pacerctl writes it to a file, the daemon to the
/// control socket.
public enum RunExporter {
    /// Writes run `id` in `format`, piece by piece through `write`: never a whole run in memory
    /// (FIT, whose header holds its size, is the exception: one piece at the end). FIT, being
    /// binary, is written as base64 in pieces whose lengths are multiples of 4, so that any
    /// concatenation of whole pieces decodes on its own; `exportBytes` writes the bytes.
    public static func export(_ runs: RunStore, _ id: Int64, _ format: RunExportFormat, write: @escaping (String) throws -> Void) throws {
        switch format {
        case .fit:
            try exportTrack(runs, id, FITWriter { bytes in try write(Base64.encode(bytes)) })
        case .gpsd:
            try runs.forEachRawLine(id) { line in try write(String(line) + "\n") }
        case .hr:
            try runs.forEachTrackChunk(id) { _, readings in
                for r in readings {
                    var w = JSONWriter(capacity: 96)
                    w.beginObject()
                    w.time("time", r.time)
                    w.integer("bpm", r.bpm)
                    w.beginArray("rr_ms")
                    for rr in r.rrIntervalsMs { w.number(nil, rr, digits: 0) }
                    w.endArray()
                    if let contact = r.contact { w.bool("contact", contact) } else { w.string("contact", nil) }
                    w.endObject()
                    try write(w.output + "\n")
                }
            }
        case .gpx:
            try exportTrack(runs, id, GPXWriter(sink: write))
        case .tcx:
            try exportTrack(runs, id, TCXWriter(sink: write))
        }
    }

    /// As `export`, but bytes: FIT as it is, the text formats as UTF-8.
    public static func exportBytes(_ runs: RunStore, _ id: Int64, _ format: RunExportFormat, write: @escaping ([UInt8]) throws -> Void) throws {
        if format == .fit {
            try exportTrack(runs, id, FITWriter(sink: write))
        } else {
            try export(runs, id, format) { text in try write(Array(text.utf8)) }
        }
    }

    /// The run's samples, laps and totals through `writer`, each sample with its heart rate.
    private static func exportTrack(_ runs: RunStore, _ id: Int64, _ writer: some ExportWriter) throws {
        var writer = writer
        let detail = try runs.detail(id)
        let run = detail.run
        var lapStart = run.startTime
        let laps = detail.laps.map { lap in
            defer { lapStart = lap.endTime }
            return ExportLap(startTime: lapStart, time: lap.time, distance: lap.distance)
        }
        let exportRun = ExportRun(
            name: "Pacer run \(run.id)", startTime: run.startTime, distance: run.distance, movingTime: run.movingTime,
            elapsedTime: run.elapsedTime, averageHeartRate: run.heartRateAverage, maxHeartRate: run.heartRateMax, laps: laps)
        try writer.begin(exportRun)
        // A reading stamped with the same instant as a fix can land in the next batch (the fix
        // closed the batch), so each batch's samples wait until the next batch's readings are in.
        var heart = HeartRateAligner()
        var waiting: [TrackSample] = []
        func emit(_ samples: [TrackSample]) throws {
            for s in samples {
                try writer.add(ExportPoint(time: s.time, coordinate: s.coordinate, altitude: s.altitude,
                                           heartRate: heart.bpm(at: s.time), distance: s.distance, speed: s.speed))
            }
        }
        try runs.forEachTrackChunk(id) { samples, readings in
            heart.append(readings)
            try emit(waiting)
            waiting = samples
        }
        try emit(waiting)
        try writer.end()
    }
}

/// RFC 4648 base64 with padding, for FIT on the text channel.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                out.append(position <= count ? alphabet[Int((group >> (18 - 6 * UInt32(position))) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Gives each GPS sample the heart rate a strap reported around it: the latest valid reading at
/// most 2.5 s old (1 Hz straps, one notification lost), never one from the future.
struct HeartRateAligner {
    private var pending: [HeartRateSample] = []
    private var index = 0
    private var latest: HeartRateSample?

    mutating func append(_ readings: [HeartRateSample]) {
        pending.removeFirst(index)
        index = 0
        pending += readings
    }

    mutating func bpm(at time: Timestamp) -> Int? {
        while index < pending.count, pending[index].time <= time {
            if pending[index].isValid { latest = pending[index] } else { latest = nil }
            index += 1
        }
        guard let latest, time.seconds(since: latest.time) <= 2.5 else { return nil }
        return latest.bpm
    }
}

