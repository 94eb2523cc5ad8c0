import PacerContract

/// A run as GPX 1.1 (`GET /v1/runs/{run_id}/gpx`), heart rate in Garmin's TrackPointExtension
/// as most tools read it. In three parts, so that the points can be streamed.
enum GPXDocument {
    static func head(runID: String, startTime: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="pacer-cloud" xmlns="http://www.topografix.com/GPX/1/1" \
        xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1" \
        xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
        xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
        <metadata><name>Run \(AlertPage.escape(runID))</name><time>\(AlertPage.escape(startTime))</time></metadata>
        <trk><name>Run \(AlertPage.escape(runID))</name><type>running</type><trkseg>

        """
    }

    static func point(_ sample: ChunkSample) -> String {
        var out = "<trkpt lat=\"\(coordinate(sample.lat))\" lon=\"\(coordinate(sample.lon))\">"
        out += "<time>\(WireTime.text(milliseconds: sample.timeMs))</time>"
        if let hr = sample.heartRate {
            out += "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\(hr)</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions>"
        }
        return out + "</trkpt>\n"
    }

    static let tail = "</trkseg></trk>\n</gpx>\n"

    private static func coordinate(_ value: Double) -> String {
        // The chunk's 7 decimals, without the float noise a plain description adds.
        let line = TrackChunkFormat.line(ChunkSample(timeMs: 0, lat: value, lon: 0, speedMps: 0, distanceM: 0, moving: false, heartRate: nil))
        return String(line.split(separator: ",")[1])
    }
}
