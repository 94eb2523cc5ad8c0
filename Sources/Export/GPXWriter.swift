import PacerCore

/// Streams a run as GPX 1.1: one `<trk>` (named after the run, its type the sport: `running`, `cycling`, …) with one
/// `<trkseg>`; each point a `<trkpt lat lon>` (7 decimals) with `<ele>` when known, `<time>`
/// (ISO-8601 UTC, milliseconds) and the heart rate, when known, in Garmin's
/// TrackPointExtension v1 (`<gpxtpx:hr>`). Laps, distances and totals have no place in GPX and
/// are not written.
///
/// ```swift
/// var writer = GPXWriter { chunk in try file.write(chunk) }
/// try writer.begin(run)
/// for point in points { try writer.add(point) }
/// try writer.end()
/// ```
///
/// `begin` writes the header, each `add` one `<trkpt>` (or nothing for a skipped point), `end`
/// the closing tags; each hands its text to `sink` before returning. See ``ExportWriter``.
public struct GPXWriter: ExportWriter {
    public static let namespace = "http://www.topografix.com/GPX/1/1"
    public static let trackPointExtensionNamespace = "http://www.garmin.com/xmlschemas/TrackPointExtension/v1"

    private let sink: (String) throws -> Void
    private var state = WriterState.ready
    public private(set) var statistics = ExportStatistics()

    public init(sink: @escaping (String) throws -> Void) {
        self.sink = sink
    }

    public mutating func begin(_ run: ExportRun) throws {
        try state.requireReady()
        let name = ExportText.escaped(run.name)
        var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        text += #"<gpx version="1.1" creator="Pacer" xmlns="\#(Self.namespace)""#
        text += #" xmlns:gpxtpx="\#(Self.trackPointExtensionNamespace)""#
        text += #" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance""#
        text += #" xsi:schemaLocation="\#(Self.namespace) http://www.topografix.com/GPX/1/1/gpx.xsd"#
        text += #" \#(Self.trackPointExtensionNamespace) http://www.garmin.com/xmlschemas/TrackPointExtensionv1.xsd">"#
        text += "\n  <metadata>\n"
        if !name.isEmpty { text += "    <name>\(name)</name>\n" }
        text += "    <time>\(run.startTime.iso8601)</time>\n  </metadata>\n  <trk>\n"
        if !name.isEmpty { text += "    <name>\(name)</name>\n" }
        text += "    <type>\(run.sport.gpxType)</type>\n    <trkseg>\n"
        state = .writing
        try emit(text)
    }

    public mutating func add(_ point: ExportPoint) throws {
        try state.requireWriting()
        guard statistics.admits(point) else { return }
        var text = "      <trkpt lat=\""
        text.reserveCapacity(256)
        text += ExportText.degrees(point.coordinate.latitude, isLongitude: false)
        text += "\" lon=\""
        text += ExportText.degrees(point.coordinate.longitude, isLongitude: true)
        text += "\">\n"
        if let altitude = point.altitude, let ele = FixedDecimal.format(altitude, decimals: 1) {
            text += "        <ele>\(ele)</ele>\n"
        }
        text += "        <time>\(point.time.iso8601)</time>\n"
        if let heartRate = statistics.heartRate(of: point) {
            text += "        <extensions>\n          <gpxtpx:TrackPointExtension>\n"
            text += "            <gpxtpx:hr>\(heartRate)</gpxtpx:hr>\n"
            text += "          </gpxtpx:TrackPointExtension>\n        </extensions>\n"
        }
        text += "      </trkpt>\n"
        statistics.writtenPoints += 1
        try emit(text)
    }

    public mutating func end() throws {
        try state.requireWriting()
        state = .ended
        try emit("    </trkseg>\n  </trk>\n</gpx>\n")
    }

    private mutating func emit(_ text: String) throws {
        try state.emit(text, to: sink)
    }
}
