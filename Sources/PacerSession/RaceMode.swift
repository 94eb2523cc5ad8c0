import PacerCore

/// A race as race mode runs it: the synced race's id (the cloud's), name, the runner's bib, its
/// course and the official start (the gun). The daemon makes it from the last sync's `races`.
public struct RaceMode: Sendable, Equatable {
    /// A lowercase UUID: `POST /v1/races/{id}/positions`.
    public var id: String
    public var name: String
    public var bib: Int
    public var course: RaceCourse
    /// The official start; nil when the race has none (then starting race mode stands in for it).
    public var gunTime: Timestamp?

    public init(id: String, name: String, bib: Int, course: RaceCourse, gunTime: Timestamp?) {
        self.id = id
        self.name = name
        self.bib = bib
        self.course = course
        self.gunTime = gunTime
    }
}

/// One position taken in race mode, for the race's positions endpoint (the uplink keeps it in
/// the store until the cloud took it). Times are GPS time.
public struct RacePositionFix: Sendable, Equatable {
    public var raceID: String
    public var time: Timestamp
    public var latitude: Double
    public var longitude: Double
    /// Metres along the course (`RaceWire.progressM`: 0 behind the start line).
    public var progress: Double
    /// The runner's own start-line crossing and the finish, once known.
    public var startedAt: Timestamp?
    public var finishedAt: Timestamp?

    public init(raceID: String, time: Timestamp, latitude: Double, longitude: Double, progress: Double, startedAt: Timestamp?, finishedAt: Timestamp?) {
        self.raceID = raceID
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.progress = progress
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }
}

/// What the cloud said to the race positions sent (the uplink hands it back to the session).
public enum RaceReply: Sendable, Equatable {
    /// The runner's place among the runners ranked (`of`), when the race ranks them yet.
    case place(Int, of: Int?)
    /// The race refuses this device's positions for good (not enrolled, race deleted): what it said.
    case refused(String)
}

/// Race mode as `pacerctl status` shows it.
public struct RaceStatus: Sendable, Equatable {
    public var id: String
    public var name: String
    public var bib: Int
    public var courseMeters: Double
    public var gunTime: Timestamp?
    /// Metres along the course at the last placed position.
    public var progress: Double?
    public var startedAt: Timestamp?
    public var result: RaceResult?
    public var offCourse = false
    public var place: Int?
    public var of: Int?
    /// Why the cloud takes no positions of this race (nil: it does, or has not answered yet).
    public var refused: String?
}
