import Export
import PacerCore
import PacerReplay
import Store

/// The formats a run is exported in.
public enum RunExportFormat: String, Sendable, CaseIterable {
    /// GPX 1.1 with heart rate (Garmin TrackPointExtension).
    case gpx
    case tcx
    /// The gpsd JSON lines as recorded: `pacerctl replay --gps` of it reproduces the run.
    case gpsd
    /// Heart-rate readings as JSON lines, the format `pacerctl replay --hr` reads.
    case hr

    public var fileExtension: String {
        switch self {
        case .gpx: "gpx"
        case .tcx: "tcx"
        case .gpsd: "gpsd.jsonl"
        case .hr: "hr.jsonl"
        }
    }
}

/// Streams a stored run out in an export format; pacerctl writes it to a file, the daemon to the
/// control socket.
public enum RunExporter {
    /// Writes run `id` in `format`, piece by piece through `write`: never a whole run in memory.
    public static func export(_ runs: RunStore, _ id: Int64, _ format: RunExportFormat, write: @escaping (String) throws -> Void) throws {
        switch format {
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
        case .gpx, .tcx:
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
            var writer = (format == .gpx ? ExportFormat.gpx : ExportFormat.tcx).makeWriter { text in try write(text) }
            try writer.begin(exportRun)
            // A reading stamped with the same instant as a fix can land in the next batch (the fix
            // closed the batch), so each batch's samples wait until the next batch's readings are in.
            var heart = HeartRateAligner()
            var waiting: [TrackSample] = []
            func emit(_ samples: [TrackSample]) throws {
                for s in samples {
                    try writer.add(ExportPoint(time: s.time, coordinate: s.coordinate,
                                               heartRate: heart.bpm(at: s.time), distance: s.distance))
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

