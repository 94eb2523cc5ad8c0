import FoundationEssentials
import PacerCore
import SQLite

/// A position taken in race mode, waiting for the cloud (`POST /v1/races/{id}/positions`).
public struct RacePositionRecord: Sendable, Equatable {
    /// The row's id, once stored (0 before).
    public var id: Int64
    public var raceID: String
    public var time: Timestamp
    public var latitude: Double
    public var longitude: Double
    /// Metres along the course.
    public var progress: Double
    /// The runner's start-line crossing and the finish, as far as they were known at `time`.
    public var startedAt: Timestamp?
    public var finishedAt: Timestamp?

    public init(id: Int64 = 0, raceID: String, time: Timestamp, latitude: Double, longitude: Double, progress: Double,
                startedAt: Timestamp? = nil, finishedAt: Timestamp? = nil) {
        self.id = id
        self.raceID = raceID
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.progress = progress
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }
}

/// Race positions in the store: kept from the moment they are taken until the cloud took them,
/// so a dead network or a restart loses none. The uplink sends the newest first, then the
/// backlog oldest first, in batches.
extension RunStore {
    public func queueRacePosition(_ position: RacePositionRecord) throws(StoreError) {
        try write("queueing a race position") { db in
            try db.cachedStatement(sql: """
                INSERT INTO race_position (race_id, time_ms, lat, lon, progress_m, started_ms, finished_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [position.raceID, position.time.milliseconds, position.latitude, position.longitude, position.progress,
                                         position.startedAt?.milliseconds, position.finishedAt?.milliseconds])
        }
    }

    /// The newest position waiting, of any race.
    public func newestRacePosition() throws(StoreError) -> RacePositionRecord? {
        try read("reading race positions") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM race_position WHERE refused_ms IS NULL ORDER BY time_ms DESC, id DESC LIMIT 1")
                .map(Self.racePosition)
        }
    }

    /// The backlog: the race of the oldest position waiting, and up to `limit` of its positions,
    /// oldest first.
    public func oldestRacePositions(limit: Int) throws(StoreError) -> [RacePositionRecord] {
        try read("reading race positions") { db in
            guard let race = try String.fetchOne(db, sql: "SELECT race_id FROM race_position WHERE refused_ms IS NULL ORDER BY time_ms, id LIMIT 1")
            else { return [] }
            return try Row.fetchAll(db, sql: "SELECT * FROM race_position WHERE refused_ms IS NULL AND race_id = ? ORDER BY time_ms, id LIMIT ?",
                                    arguments: [race, limit]).map(Self.racePosition)
        }
    }

    /// The cloud has them: gone.
    public func acknowledgeRacePositions(_ ids: [Int64]) throws(StoreError) {
        guard !ids.isEmpty else { return }
        try write("noting race positions sent") { db in
            for id in ids { try db.cachedStatement(sql: "DELETE FROM race_position WHERE id = ?").execute(arguments: [id]) }
        }
    }

    /// The cloud refuses the race for good (not enrolled, race deleted): every position of it
    /// waiting is set aside, kept but never sent again.
    public func setAsideRacePositions(raceID: String, error: String, at time: Timestamp) throws(StoreError) {
        try write("setting aside race positions") { db in
            try db.execute(sql: "UPDATE race_position SET refused_ms = ?, error = ? WHERE race_id = ? AND refused_ms IS NULL",
                           arguments: [time.milliseconds, error, raceID])
        }
    }

    /// These positions are refused for good (a batch the cloud will never take): set aside.
    public func setAsideRacePositions(ids: [Int64], error: String, at time: Timestamp) throws(StoreError) {
        try write("setting aside race positions") { db in
            for id in ids {
                try db.execute(sql: "UPDATE race_position SET refused_ms = ?, error = ? WHERE id = ?", arguments: [time.milliseconds, error, id])
            }
        }
    }

    /// Positions waiting, and those set aside.
    public func racePositionCounts() throws(StoreError) -> (waiting: Int, setAside: Int) {
        try read("counting race positions") { db in
            let waiting = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM race_position WHERE refused_ms IS NULL") ?? 0
            let refused = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM race_position WHERE refused_ms IS NOT NULL") ?? 0
            return (waiting, refused)
        }
    }

    private static func racePosition(_ row: Row) -> RacePositionRecord {
        RacePositionRecord(id: row["id"], raceID: row["race_id"], time: Timestamp(milliseconds: row["time_ms"]), latitude: row["lat"],
                           longitude: row["lon"], progress: row["progress_m"],
                           startedAt: (row["started_ms"] as Int64?).map { Timestamp(milliseconds: $0) },
                           finishedAt: (row["finished_ms"] as Int64?).map { Timestamp(milliseconds: $0) })
    }
}
