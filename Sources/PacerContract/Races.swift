/// `races` (a section of `GET /v1/device/sync`): the races its runner is enrolled in that have
/// not ended, earliest first, each with its course, so race mode works without the network.
public struct RacesSection: Codable, Equatable, Sendable {
    public static let name = "races"
    /// At most this many are sent (the earliest).
    public static let maxRaces = 5

    public var version: String
    public var races: [DeviceRace]

    public init(version: String, races: [DeviceRace]) {
        self.version = version
        self.races = races
    }
}

/// One race as the device needs it: when, the runner's bib, the course.
public struct DeviceRace: Codable, Equatable, Sendable {
    /// A lowercase UUID.
    public var id: String
    /// Cleaned for speech (`NoticeText.clean`).
    public var name: String
    /// The official start (`Time`).
    public var starts_at: String
    public var bib: Int
    /// "enrolled", "present" or "disqualified".
    public var status: String
    public var length_m: Double
    /// The course, start to arrival: [latitude, longitude] pairs (at most `RaceWire.maxPathPoints`).
    public var path: [[Double]]
    /// Start, stages, arrival: [latitude, longitude] pairs.
    public var waypoints: [[Double]]

    public init(id: String, name: String, starts_at: String, bib: Int, status: String, length_m: Double, path: [[Double]], waypoints: [[Double]]) {
        self.id = id
        self.name = name
        self.starts_at = starts_at
        self.bib = bib
        self.status = status
        self.length_m = length_m
        self.path = path
        self.waypoints = waypoints
    }
}

/// `POST /v1/races/{race_id}/positions`: the runner's positions in race mode, oldest first (a
/// backlog after an outage too), with the start-line and finish-line crossings once known.
public struct RacePositions: Codable, Equatable, Sendable {
    public var positions: [RacePositionItem]
    /// The runner's own start-line crossing (`Time`), interpolated between fixes.
    public var started_at: String?
    /// The finish-line crossing (`Time`), interpolated between fixes.
    public var finished_at: String?

    public init(positions: [RacePositionItem], started_at: String? = nil, finished_at: String? = nil) {
        self.positions = positions
        self.started_at = started_at
        self.finished_at = finished_at
    }
}

public struct RacePositionItem: Codable, Equatable, Sendable {
    /// When the fix was taken (`Time`).
    public var time: String
    public var lat: Double
    public var lon: Double
    /// Metres along the course, as the device's core placed it.
    public var progress_m: Double

    public init(time: String, lat: Double, lon: Double, progress_m: Double) {
        self.time = time
        self.lat = lat
        self.lon = lon
        self.progress_m = progress_m
    }
}

/// The reply: how many positions were new, and the runner's place when the race ranks them.
public struct RacePositionsReply: Codable, Equatable, Sendable {
    public var stored: Int
    public var place: Int?
    /// Runners ranked.
    public var of: Int?

    public init(stored: Int, place: Int? = nil, of: Int? = nil) {
        self.stored = stored
        self.place = place
        self.of = of
    }
}

public enum RaceWire {
    public static let maxPositions = 720
    public static let maxPathPoints = 5_000
    /// Progress along a course: at most 50 km, and a little beyond for a runner past the arrival.
    public static let progressM: ClosedRange<Double> = 0...60_000
}
