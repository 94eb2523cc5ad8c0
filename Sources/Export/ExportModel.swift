import PacerCore

/// One recorded point of a run, as the exporters write it.
///
/// `coordinate` must be finite and on the globe (latitude −90…90, longitude −180…180): a writer
/// skips any other point and counts it in ``ExportStatistics/skippedPoints``. Optional values that
/// are unknown or not finite are left out of the document; a heart rate outside 1…254 bpm is
/// left out too (255 is the "no data" sentinel of some devices) and counted in
/// ``ExportStatistics/droppedHeartRates``.
public struct ExportPoint: Sendable, Equatable {
    public var time: Timestamp
    public var coordinate: Coordinate
    /// Metres above mean sea level (GPX `<ele>`, TCX `AltitudeMeters`).
    public var altitude: Double?
    /// Beats per minute.
    public var heartRate: Int?
    /// Metres since the start of the run (TCX `DistanceMeters`, FIT `distance`; GPX has no such field).
    public var distance: Double?
    /// Metres per second (FIT `speed`; GPX 1.1 and TCX's schema have no such field).
    public var speed: Double?

    public init(time: Timestamp, coordinate: Coordinate, altitude: Double? = nil,
                heartRate: Int? = nil, distance: Double? = nil, speed: Double? = nil) {
        self.time = time
        self.coordinate = coordinate
        self.altitude = altitude
        self.heartRate = heartRate
        self.distance = distance
        self.speed = speed
    }
}

/// One lap of a run. A lap runs from its `startTime` to the next lap's `startTime` (the last one
/// to the end of the run); `time` and `distance` are what the lap header reports.
public struct ExportLap: Sendable, Equatable {
    public var startTime: Timestamp
    /// Seconds (TCX `TotalTimeSeconds`).
    public var time: Double
    /// Metres (TCX `DistanceMeters`).
    public var distance: Double
    /// Per-lap heart rate, when the caller knows it. The TCX writer streams its points, so it
    /// cannot compute these itself: it writes them only when given.
    public var averageHeartRate: Double?
    public var maxHeartRate: Int?

    public init(startTime: Timestamp, time: Double, distance: Double,
                averageHeartRate: Double? = nil, maxHeartRate: Int? = nil) {
        self.startTime = startTime
        self.time = time
        self.distance = distance
        self.averageHeartRate = averageHeartRate
        self.maxHeartRate = maxHeartRate
    }
}

/// What the writers need to know before the first point: the header data, and the laps (a
/// streaming TCX writer must know where laps start before it sees the points).
/// What the activity is, as each format writes it: GPX `<type>`, TCX `Sport` (which knows only
/// running, biking and other), FIT's `sport` enum.
public enum ExportSport: String, Sendable, Equatable {
    case running, walking, hiking, cycling, swimming, other

    var gpxType: String { rawValue }
    var tcxSport: String {
        switch self {
        case .running, .walking, .hiking: "Running"
        case .cycling: "Biking"
        case .swimming, .other: "Other"
        }
    }
    /// FIT profile: generic 0, running 1, cycling 2, swimming 5, walking 11, hiking 17.
    var fitSport: UInt64 {
        switch self {
        case .running: 1
        case .cycling: 2
        case .swimming: 5
        case .walking: 11
        case .hiking: 17
        case .other: 0
        }
    }
}

public struct ExportRun: Sendable, Equatable {
    public var name: String
    public var sport: ExportSport
    public var startTime: Timestamp
    /// Metres.
    public var distance: Double
    /// Seconds. No format has a field for it; it is here for callers.
    public var movingTime: Double
    /// Seconds. The TCX lap's `TotalTimeSeconds` when `laps` is empty.
    public var elapsedTime: Double
    public var averageHeartRate: Double?
    public var maxHeartRate: Int?
    /// In start-time order. Empty: the TCX writer writes one lap for the whole run.
    public var laps: [ExportLap]

    public init(name: String, startTime: Timestamp, distance: Double, movingTime: Double,
                elapsedTime: Double, averageHeartRate: Double? = nil, maxHeartRate: Int? = nil,
                laps: [ExportLap] = [], sport: ExportSport = .running) {
        self.name = name
        self.sport = sport
        self.startTime = startTime
        self.distance = distance
        self.movingTime = movingTime
        self.elapsedTime = elapsedTime
        self.averageHeartRate = averageHeartRate
        self.maxHeartRate = maxHeartRate
        self.laps = laps
    }
}

extension ExportRun {
    /// The run's laps, or one lap for the whole run (its elapsed time, distance and heart rate)
    /// when it has none; throws ``ExportError/invalidRun(_:)`` when a lap's time or distance is
    /// negative or not finite, or the laps are not in start-time order.
    func checkedLaps() throws -> [ExportLap] {
        let laps = self.laps.isEmpty
            ? [ExportLap(startTime: startTime, time: elapsedTime, distance: distance,
                         averageHeartRate: averageHeartRate, maxHeartRate: maxHeartRate)]
            : self.laps
        for (index, lap) in laps.enumerated() {
            let which = self.laps.isEmpty ? "run" : "lap \(index + 1)"
            guard lap.time >= 0, FixedDecimal.format(lap.time, decimals: 3) != nil else {
                throw ExportError.invalidRun("\(which): time \(lap.time) s is not a finite, non-negative number")
            }
            guard lap.distance >= 0, FixedDecimal.format(lap.distance, decimals: 2) != nil else {
                throw ExportError.invalidRun("\(which): distance \(lap.distance) m is not a finite, non-negative number")
            }
            if index > 0 && lap.startTime < laps[index - 1].startTime {
                throw ExportError.invalidRun("\(which) starts before lap \(index): laps must be in start-time order")
            }
        }
        return laps
    }
}

/// What a writer did with the points it was given.
public struct ExportStatistics: Sendable, Equatable {
    /// Points written to the document.
    public var writtenPoints = 0
    /// Points skipped because their coordinate was not finite or off the globe.
    public var skippedPoints = 0
    /// Heart rates left out because they were outside 1…254 bpm (the point itself is written).
    public var droppedHeartRates = 0

    public init() {}

    /// Whether the point can be written; one off the globe is counted as skipped.
    mutating func admits(_ point: ExportPoint) -> Bool {
        guard ExportText.isValid(point.coordinate) else {
            skippedPoints += 1
            return false
        }
        return true
    }

    /// The point's heart rate as the formats write it; one out of range is counted as dropped.
    mutating func heartRate(of point: ExportPoint) -> Int? {
        let heartRate = ExportText.heartRate(point.heartRate)
        if heartRate == nil, point.heartRate != nil { droppedHeartRates += 1 }
        return heartRate
    }
}

public enum ExportError: Error, Equatable, Sendable {
    /// `add` or `end` before `begin`.
    case notBegun
    /// `begin` called a second time.
    case alreadyBegun
    /// A call after `end`.
    case alreadyEnded
    /// A call after the sink threw: the document is incomplete and the writer unusable.
    case sinkFailed
    /// The run's header data cannot be written (the text says what).
    case invalidRun(String)
}

/// A streaming exporter: `begin` once, `add` each point in time order, `end` once.
///
/// The writer holds no points and no document: every call hands the text it produced to the
/// writer's sink before it returns, in chunks of well under 1 KiB (one per point, plus the header,
/// lap changes and the end; only the escaped run name can make one longer), so a 3-hour run at
/// 1 Hz costs no more memory than a 3-minute one. The output is
/// a pure function of the input: the same calls give the same bytes. If the sink throws, the
/// error is passed on and every later call throws ``ExportError/sinkFailed``.
public protocol ExportWriter {
    mutating func begin(_ run: ExportRun) throws
    mutating func add(_ point: ExportPoint) throws
    mutating func end() throws
    var statistics: ExportStatistics { get }
}

extension ExportWriter {
    /// `begin`, `add` for every point, `end`. `points` may be lazy: it is read once, in order.
    public mutating func write<Points: Sequence<ExportPoint>>(_ run: ExportRun, points: Points) throws {
        try begin(run)
        for point in points { try add(point) }
        try end()
    }
}

/// The text export formats, for callers that pick one at run time (a CLI flag, an upload
/// target). FIT is binary: ``FITWriter`` takes bytes, and ``FileFormat`` picks among all three.
public enum ExportFormat: String, Sendable, CaseIterable {
    case gpx, tcx

    public var fileExtension: String { rawValue }

    public func makeWriter(sink: @escaping (String) throws -> Void) -> any ExportWriter {
        switch self {
        case .gpx: GPXWriter(sink: sink)
        case .tcx: TCXWriter(sink: sink)
        }
    }
}

/// Every export format, text or binary, each writing bytes: what a download serves.
public enum FileFormat: String, Sendable, CaseIterable {
    case gpx, tcx, fit

    public var fileExtension: String { rawValue }

    /// The media type a download is served with.
    public var contentType: String {
        switch self {
        case .gpx: "application/gpx+xml"
        case .tcx: "application/vnd.garmin.tcx+xml"
        case .fit: "application/vnd.ant.fit"
        }
    }

    /// A writer whose output goes to `sink` as bytes (the text formats' UTF-8).
    public func makeWriter(sink: @escaping ([UInt8]) throws -> Void) -> any ExportWriter {
        switch self {
        case .gpx: GPXWriter { text in try sink(Array(text.utf8)) }
        case .tcx: TCXWriter { text in try sink(Array(text.utf8)) }
        case .fit: FITWriter(sink: sink)
        }
    }
}
