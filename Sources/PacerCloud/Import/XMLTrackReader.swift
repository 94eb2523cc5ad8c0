import CloudModel
import Export
import Foundation
import PacerContract

/// Reads the points of a GPX (1.0 or 1.1) or TCX (v2) file with `XMLScanner`: `trkpt` with its
/// `time`, GPX 1.0 `speed` and a Garmin TrackPointExtension `hr`; TCX `Trackpoint` with `Time`,
/// `Position`, `DistanceMeters`, `HeartRateBpm/Value` and the ActivityExtension `Speed`.
/// Elements are matched by local name, whatever prefix a file gives its namespaces. A GPX file
/// is one activity, each `trk` and `trkseg` a segment of it, with its `name` and `type`; each
/// TCX `Activity` is one, with its `Sport`, its `Id` (the start) and its laps' totals, each
/// `Track` a segment.
struct XMLTrackReader {
    private let format: FileFormat
    private var track: ImportedTrack
    private var finished: [ImportedTrack] = []
    private var segment = -1
    /// TCX: the laps' totals of the current activity.
    private var lapDistance: Double?
    private var lapSeconds: Double?
    /// TCX: the current lap has had a track.
    private var trackInLap = false
    /// GPX: the title is a track's name (not the file's).
    private var titledByTrack = false
    /// Local names of the open elements.
    private var path: [String] = []
    private var text = ""
    private var point: PendingPoint?

    private struct PendingPoint {
        var line: Int
        var lat: Double?
        var lon: Double?
        var timeText: String?
        var heartRate: Int?
        var distance: Double?
        var speed: Double?
        var altitude: Double?
    }

    private init(format: FileFormat) {
        self.format = format
        track = ImportedTrack(format: format)
    }

    /// The points of `bytes`, a GPX or TCX file; a refusal naming the line and what is wrong.
    static func read(_ bytes: [UInt8], format: FileFormat) throws(ImportError) -> [ImportedTrack] {
        var reader = XMLTrackReader(format: format)
        var scanner = XMLScanner(bytes)
        do {
            try scanner.scan { event, line in try reader.handle(event, line: line) }
        } catch let failure as XMLScanner.Failure {
            throw ImportError("\(format.name) line \(failure.line): \(failure.message)")
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError("\(format.name) line \(scanner.line): \(error)")
        }
        if format == .gpx || reader.finished.isEmpty { reader.finishActivity() }
        return reader.finished
    }

    /// The activity read so far goes to `finished`; the next starts empty.
    private mutating func finishActivity() {
        if format == .tcx {
            // The furthest point's distance (the device's own), else the laps' total (a file without GPS).
            if track.totalDistance == nil { track.totalDistance = lapDistance }
            track.timerSeconds = lapSeconds
        }
        finished.append(track)
        track = ImportedTrack(format: format)
        (lapDistance, lapSeconds, segment) = (nil, nil, -1)
    }

    /// A GPX `type` or TCX `Sport` as Pacer's sport: by its words (Strava's, Garmin's and
    /// FIT's names: "running", "Biking", "cycling", "VirtualRide", "hiking", …), or Strava's GPX
    /// numbers (1 ride, 4 hike, 9 run, 10 walk); anything else is "other".
    static func sport(_ text: String) -> Sport {
        let word = text.lowercased().filter { $0.isLetter || $0.isNumber }
        switch word {
        case "1": return .ride
        case "4": return .hike
        case "9": return .run
        case "10": return .walk
        default: break
        }
        if word.contains("run") || word.contains("jog") { return .run }
        if word.contains("ride") || word.contains("bik") || word.contains("cycl") { return .ride }
        if word.contains("hik") || word.contains("trek") { return .hike }
        if word.contains("walk") { return .walk }
        if word.contains("swim") { return .swim }
        return .other
    }

    private var pointElement: String { format == .gpx ? "trkpt" : "Trackpoint" }

    private static func localName(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }

    private func fail(_ line: Int, _ message: String) -> ImportError {
        ImportError("\(format.name) line \(line): \(message)")
    }

    private mutating func handle(_ event: XMLScanner.Event, line: Int) throws {
        switch event {
        case .start(let qualified, let attributes):
            let name = Self.localName(qualified)
            if path.isEmpty {
                let root = format == .gpx ? "gpx" : "TrainingCenterDatabase"
                guard name == root else { throw fail(line, "the document is <\(qualified.prefix(40))>, not <\(root)>: this is no \(format.name) file") }
            }
            path.append(name)
            text = ""
            switch (format, name) {
            case (.gpx, "trkseg"):
                segment += 1
            case (.tcx, "Track"):
                // A lap's first track goes on from the lap before (laps split one recording);
                // another track in the same lap is the recording started again after a stop.
                if trackInLap || segment < 0 { segment += 1 }
                trackInLap = true
            case (.gpx, "trk"):
                // A track without segments still starts a new one.
                segment += 1
            case (.tcx, "Activity"):
                track.sport = attributes["Sport"].map(Self.sport)
            case (.tcx, "Lap"):
                trackInLap = false
                if let start = attributes["StartTime"].flatMap(WireTime.milliseconds), track.startMs == nil { track.startMs = start }
            default:
                break
            }
            if name == pointElement {
                guard point == nil else { throw fail(line, "<\(pointElement)> inside another <\(pointElement)>") }
                point = PendingPoint(line: line)
                if format == .gpx {
                    point?.lat = attributes["lat"].flatMap { Double($0.filter { !$0.isWhitespace }) }
                    point?.lon = attributes["lon"].flatMap { Double($0.filter { !$0.isWhitespace }) }
                }
            }
        case .text(let string):
            // Only leaf values are kept; the bound keeps a hostile file from growing one without end.
            if text.utf8.count < 256 { text += string }
        case .end(let qualified):
            let name = Self.localName(qualified)
            defer {
                if !path.isEmpty { path.removeLast() }
                text = ""
            }
            let value = text.filter { !$0.isWhitespace }
            let parent = path.count >= 2 ? path[path.count - 2] : ""
            guard point != nil else {
                switch (format, name) {
                case (.gpx, "name") where parent == "trk" || parent == "metadata":
                    // The first track's name, else the file's.
                    let title = text.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !title.isEmpty, !titledByTrack, parent == "trk" || track.title == nil {
                        track.title = String(title.prefix(120))
                        titledByTrack = parent == "trk"
                    }
                case (.gpx, "type") where parent == "trk":
                    if !value.isEmpty { track.sport = Self.sport(value) }
                case (.tcx, "Id") where parent == "Activity":
                    if let start = WireTime.milliseconds(value) { track.startMs = start }
                case (.tcx, "DistanceMeters") where parent == "Lap":
                    if let metres = Double(value), metres.isFinite, metres >= 0 { lapDistance = (lapDistance ?? 0) + metres }
                case (.tcx, "TotalTimeSeconds") where parent == "Lap":
                    if let seconds = Double(value), seconds.isFinite, seconds >= 0 { lapSeconds = (lapSeconds ?? 0) + seconds }
                case (.tcx, "Activity"):
                    finishActivity()
                default:
                    break
                }
                return
            }
            switch (format, name) {
            case (.gpx, "time") where parent == "trkpt", (.tcx, "Time") where parent == "Trackpoint":
                point?.timeText = value
            case (.gpx, "hr"):
                point?.heartRate = Int(value)
            case (.gpx, "speed") where parent == "trkpt":
                point?.speed = Double(value)
            case (.gpx, "ele") where parent == "trkpt", (.tcx, "AltitudeMeters") where parent == "Trackpoint":
                point?.altitude = Double(value)
            case (.tcx, "LatitudeDegrees"):
                point?.lat = Double(value)
            case (.tcx, "LongitudeDegrees"):
                point?.lon = Double(value)
            case (.tcx, "DistanceMeters") where parent == "Trackpoint":
                point?.distance = Double(value)
            case (.tcx, "Value") where parent == "HeartRateBpm":
                point?.heartRate = Int(value)
            case (.tcx, "Speed"):
                point?.speed = Double(value)
            case (_, let other) where other == pointElement:
                try finishPoint()
            default:
                break
            }
        }
    }

    private mutating func finishPoint() throws(ImportError) {
        guard let pending = point else { return }
        point = nil
        // The device's distance for the run: the furthest any point reached, with a position or not.
        if format == .tcx, let distance = pending.distance, distance.isFinite, distance >= 0 {
            track.totalDistance = max(track.totalDistance ?? 0, distance)
        }
        guard let timeText = pending.timeText else {
            // A point without a time is no sample of a run (a GPX route has none).
            track.left.noTime += 1
            return
        }
        guard let ms = WireTime.milliseconds(timeText) else {
            throw fail(pending.line, "<\(pointElement)> has the time \(WireLimits.quoted(timeText)), not an ISO-8601 time like 2026-05-10T07:30:00Z")
        }
        guard let (lat, lon) = ImportCheck.position(lat: pending.lat, lon: pending.lon) else {
            // TCX writes points without a position while the GPS has no fix; GPX must not, but
            // one broken point is no reason to refuse a run.
            track.left.noPosition += 1
            return
        }
        track.points.append(ImportedPoint(timeMs: ms, lat: lat, lon: lon, heartRate: pending.heartRate,
                                          distance: pending.distance, speed: pending.speed, altitude: pending.altitude, segment: max(segment, 0)))
        if track.points.count > TrackChunkFormat.maxSamplesPerRun {
            throw ImportError("\(format.name): more than \(TrackChunkFormat.maxSamplesPerRun) points; a run has at most that many")
        }
    }
}

extension FileFormat {
    var name: String { rawValue.uppercased() }
}
