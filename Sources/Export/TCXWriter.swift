import PacerCore

/// Streams a run as a Garmin Training Center (TCX v2) activity: `Sport` "Running", "Biking" or "Other", `<Id>` the
/// start time, one `<Lap StartTime>` per ``ExportRun/laps`` entry (one lap for the whole run,
/// with the run's elapsed time, distance and heart rate, when `laps` is empty), each with
/// `TotalTimeSeconds`, `DistanceMeters`, `Calories` (always 0: Pacer does not estimate them, and
/// the schema requires the element), `AverageHeartRateBpm`/`MaximumHeartRateBpm` only when the
/// ``ExportLap`` carries them, `Intensity` Active, `TriggerMethod` Manual, and a `<Track>` of
/// its points: `Time`, `Position`, then `AltitudeMeters`, `DistanceMeters` and `HeartRateBpm`
/// when known. The run's name goes into the activity's `<Notes>`.
///
/// Points must come in time order. A point belongs to the last lap whose start time is not after
/// it (points before the first lap's start go into the first lap); when a point crosses the next
/// lap's start the writer closes the open lap and opens the next, so it never holds points. Laps
/// are never reopened: a point whose time went backwards stays in the open lap. A lap that gets
/// no points is written without a `<Track>` (the schema does not allow an empty one). The
/// writer cannot compute per-lap heart rate while streaming (the lap header comes before its
/// points): give it in ``ExportLap`` when it is wanted.
///
/// `begin` throws ``ExportError/invalidRun(_:)`` when a lap's (or, without laps, the run's) time
/// or distance is negative or not finite, or the laps are not in start-time order. Chunks and
/// errors otherwise work as for every ``ExportWriter``.
public struct TCXWriter: ExportWriter {
    public static let namespace = "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"

    private let sink: (String) throws -> Void
    private var state = WriterState.ready
    private var laps: [ExportLap] = []
    private var currentLap = 0
    private var trackOpen = false
    private var notes = ""
    public private(set) var statistics = ExportStatistics()

    public init(sink: @escaping (String) throws -> Void) {
        self.sink = sink
    }

    public mutating func begin(_ run: ExportRun) throws {
        try state.requireReady()
        let laps = try run.checkedLaps()
        self.laps = laps
        notes = ExportText.escaped(run.name)
        currentLap = 0
        trackOpen = false

        var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        text += #"<TrainingCenterDatabase xmlns="\#(Self.namespace)""#
        text += #" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance""#
        text += #" xsi:schemaLocation="\#(Self.namespace) http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">"#
        text += "\n  <Activities>\n    <Activity Sport=\"\(run.sport.tcxSport)\">\n"
        text += "      <Id>\(run.startTime.iso8601)</Id>\n"
        text += Self.lapHeader(laps[0])
        state = .writing
        try emit(text)
    }

    public mutating func add(_ point: ExportPoint) throws {
        try state.requireWriting()
        guard statistics.admits(point) else { return }
        while currentLap + 1 < laps.count && laps[currentLap + 1].startTime <= point.time {
            try advanceLap()
        }
        var text = ""
        text.reserveCapacity(512)
        if !trackOpen {
            text += "        <Track>\n"
            trackOpen = true
        }
        text += "          <Trackpoint>\n            <Time>\(point.time.iso8601)</Time>\n"
        text += "            <Position>\n              <LatitudeDegrees>"
        text += ExportText.degrees(point.coordinate.latitude, isLongitude: false)
        text += "</LatitudeDegrees>\n              <LongitudeDegrees>"
        text += ExportText.degrees(point.coordinate.longitude, isLongitude: true)
        text += "</LongitudeDegrees>\n            </Position>\n"
        if let altitude = point.altitude, let value = FixedDecimal.format(altitude, decimals: 1) {
            text += "            <AltitudeMeters>\(value)</AltitudeMeters>\n"
        }
        if let distance = point.distance, distance >= 0, let value = FixedDecimal.format(distance, decimals: 2) {
            text += "            <DistanceMeters>\(value)</DistanceMeters>\n"
        }
        if let heartRate = statistics.heartRate(of: point) {
            text += "            <HeartRateBpm>\n              <Value>\(heartRate)</Value>\n            </HeartRateBpm>\n"
        }
        text += "          </Trackpoint>\n"
        statistics.writtenPoints += 1
        try emit(text)
    }

    public mutating func end() throws {
        try state.requireWriting()
        while currentLap + 1 < laps.count {
            try advanceLap()
        }
        var text = closeLap()
        if !notes.isEmpty { text += "      <Notes>\(notes)</Notes>\n" }
        text += "    </Activity>\n  </Activities>\n</TrainingCenterDatabase>\n"
        state = .ended
        try emit(text)
    }

    /// Closes the open lap and opens the next one, as one chunk.
    private mutating func advanceLap() throws {
        let text = closeLap() + Self.lapHeader(laps[currentLap + 1])
        currentLap += 1
        try emit(text)
    }

    private mutating func closeLap() -> String {
        defer { trackOpen = false }
        return (trackOpen ? "        </Track>\n" : "") + "      </Lap>\n"
    }

    /// The lap's opening tag and header elements, in the schema's order (`ActivityLap_t`).
    /// `begin` has checked that time and distance format.
    private static func lapHeader(_ lap: ExportLap) -> String {
        var text = "      <Lap StartTime=\"\(lap.startTime.iso8601)\">\n"
        text += "        <TotalTimeSeconds>\(FixedDecimal.format(lap.time, decimals: 3) ?? "0.000")</TotalTimeSeconds>\n"
        text += "        <DistanceMeters>\(FixedDecimal.format(lap.distance, decimals: 2) ?? "0.00")</DistanceMeters>\n"
        text += "        <Calories>0</Calories>\n"
        if let average = ExportText.heartRate(lap.averageHeartRate) {
            text += "        <AverageHeartRateBpm>\n          <Value>\(average)</Value>\n        </AverageHeartRateBpm>\n"
        }
        if let maximum = ExportText.heartRate(lap.maxHeartRate) {
            text += "        <MaximumHeartRateBpm>\n          <Value>\(maximum)</Value>\n        </MaximumHeartRateBpm>\n"
        }
        text += "        <Intensity>Active</Intensity>\n        <TriggerMethod>Manual</TriggerMethod>\n"
        return text
    }

    private mutating func emit(_ text: String) throws {
        try state.emit(text, to: sink)
    }
}
