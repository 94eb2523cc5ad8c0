import CloudModel
import Foundation
import SQLKit

/// Races (#34): the races, their organisers, runners, observers, positions and frames.
public struct RaceRepository: Sendable {
    let database: StoreDatabase

    // MARK: Races

    struct RaceRow: Decodable {
        let id: String, ownerId: String, name: String, timezone: String, startsMs: Int64, closesMs: Int64, access: String, inviteCode: String
        let routePlan: String, waypoints: String, path: String, lengthM: Double, createdMs: Int64, postponedFromMs: Int64?

        var race: Race {
            Race(id: id, ownerID: ownerId, name: name, timezone: timezone, startsMs: startsMs, closesMs: closesMs, access: RaceAccess(rawValue: access) ?? .invitation,
                 inviteCode: inviteCode, waypoints: Self.points(waypoints), path: Self.points(path), lengthM: lengthM,
                 routePlan: RoutePlan(rawValue: routePlan) ?? .straight, createdMs: createdMs, postponedFromMs: postponedFromMs)
        }

        static func points(_ text: String) -> [LatLon] {
            ((try? JSONDecoder().decode([[Double]].self, from: Data(text.utf8))) ?? []).compactMap {
                $0.count == 2 ? LatLon(lat: $0[0], lon: $0[1]) : nil
            }
        }
    }

    static func json(_ points: [LatLon]) -> String {
        // Seven decimals: a centimetre, what a course needs and no more bytes.
        "[" + points.map { "[" + String(format: "%.7f", $0.lat) + "," + String(format: "%.7f", $0.lon) + "]" }.joined(separator: ",") + "]"
    }

    static let raceColumns: SQLQueryString = """
        r.id, r.owner_id, r.name, r.timezone, r.starts_ms, r.closes_ms, r.access, r.invite_code, r.route_plan, r.waypoints, r.path, r.length_m,
        r.created_ms, r.postponed_from_ms
        """

    /// Adds the race, its owner its first organiser, unless the owner organises `limit` races already (false).
    public func addRace(_ race: Race, limit: Int) async throws -> Bool {
        try await database.transaction { db in
            let organised = try await db.raw("SELECT COUNT(*) AS n FROM race_organiser WHERE account_id = \(bind: race.ownerID)").first()?
                .decode(column: "n", as: Int.self) ?? 0
            guard organised < limit else { return false }
            try await db.raw("""
                INSERT INTO race (id, owner_id, name, timezone, starts_ms, closes_ms, access, invite_code, route_plan, waypoints, path, length_m,
                                  start_lat, start_lon, created_ms)
                VALUES (\(bind: race.id), \(bind: race.ownerID), \(bind: race.name), \(bind: race.timezone), \(bind: race.startsMs), \(bind: race.closesMs),
                        \(bind: race.access.rawValue), \(bind: race.inviteCode), \(bind: race.routePlan.rawValue), \(bind: Self.json(race.waypoints)),
                        \(bind: Self.json(race.path)), \(bind: race.lengthM), \(bind: race.start.lat), \(bind: race.start.lon), \(bind: race.createdMs))
                """).run()
            try await db.raw("INSERT INTO race_organiser (race_id, account_id) VALUES (\(bind: race.id), \(bind: race.ownerID))").run()
            return true
        }
    }

    public func race(id: String) async throws -> Race? {
        try await database.read { db in
            try await db.raw("SELECT \(Self.raceColumns) FROM race r WHERE r.id = \(bind: id)").row(RaceRow.self)
        }?.race
    }

    /// The race whose registration link has `code`.
    public func race(inviteCode code: String) async throws -> Race? {
        try await database.read { db in
            try await db.raw("SELECT \(Self.raceColumns) FROM race r WHERE r.invite_code = \(bind: code)").row(RaceRow.self)
        }?.race
    }

    /// Open races starting from `fromMs`, whose name contains `name` (any case) and whose start
    /// lies within `radiusM` of `near`; nearest first when a place is given, else soonest first.
    /// Invitation races are never listed. At most `limit`.
    public func findRaces(name: String?, near: LatLon?, radiusM: Double, fromMs: Int64, limit: Int) async throws -> [Race] {
        var query: SQLQueryString = "SELECT \(Self.raceColumns) FROM race r WHERE r.access = 'open' AND r.starts_ms >= \(bind: fromMs)"
        if let name, !name.isEmpty {
            query = query + " AND LOWER(r.name) LIKE \(bind: "%" + Self.likeEscaped(name.lowercased()) + "%") ESCAPE '\\'"
        }
        if let near {
            // A box first (the index), the circle after.
            let dLat = radiusM / 111_000, dLon = radiusM / (111_000 * max(cos(near.lat * .pi / 180), 0.01))
            query = query + " AND r.start_lat BETWEEN \(bind: near.lat - dLat) AND \(bind: near.lat + dLat)"
                + " AND r.start_lon BETWEEN \(bind: near.lon - dLon) AND \(bind: near.lon + dLon)"
        }
        // A box holds more than the circle: read a bounded number more, then cut.
        let scanned = query + " ORDER BY r.starts_ms, r.id LIMIT \(literal: limit * 4)"
        var races = try await database.read { db in try await db.raw(scanned).rows(RaceRow.self) }.map(\.race)
        if let near {
            races = races.filter { $0.start.distanceM(to: near) <= radiusM }
                .sorted { ($0.start.distanceM(to: near), $0.startsMs) < ($1.start.distanceM(to: near), $1.startsMs) }
        }
        return Array(races.prefix(limit))
    }

    static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }

    /// The races the account organises, runs in or observes, soonest first (at most `limit`),
    /// each with the account's part in it, read in the same query.
    public func racesOf(accountID: String, limit: Int) async throws -> [(race: Race, organises: Bool, bib: Int?)] {
        struct Row: Decodable {
            let race: RaceRow
            let organises: Bool
            let bib: Int?
            init(from decoder: any Decoder) throws {
                race = try RaceRow(from: decoder)
                let columns = try decoder.container(keyedBy: Column.self)
                organises = try columns.decode(Int.self, forKey: .organises) != 0
                bib = try columns.decodeIfPresent(Int.self, forKey: .bib)
            }
            enum Column: String, CodingKey { case organises, bib }
        }
        return try await database.read { db in
            try await db.raw("""
                SELECT \(Self.raceColumns),
                       (SELECT COUNT(*) FROM race_organiser o WHERE o.race_id = r.id AND o.account_id = \(bind: accountID)) AS organises,
                       (SELECT e.bib FROM race_entry e WHERE e.race_id = r.id AND e.account_id = \(bind: accountID)) AS bib
                FROM race r WHERE r.id IN (
                    SELECT race_id FROM race_organiser WHERE account_id = \(bind: accountID)
                    UNION SELECT race_id FROM race_entry WHERE account_id = \(bind: accountID)
                    UNION SELECT race_id FROM race_observer WHERE account_id = \(bind: accountID))
                ORDER BY r.starts_ms, r.id LIMIT \(literal: limit)
                """).rows(Row.self)
        }.map { ($0.race.race, $0.organises, $0.bib) }
    }

    /// A new start (and registration deadline); the old start is kept for the notice.
    public func postpone(raceID: String, startsMs: Int64, closesMs: Int64) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE race SET postponed_from_ms = starts_ms, starts_ms = \(bind: startsMs), closes_ms = \(bind: closesMs),
                                dirty_seq = dirty_seq + 1
                WHERE id = \(bind: raceID) RETURNING id
                """).all().count == 1
        }
    }

    /// Deletes the race with everything of it.
    public func deleteRace(id: String) async throws -> Bool {
        try await database.transaction { db in
            for table in ["race_position", "race_entry", "race_observer", "race_organiser"] {
                try await db.raw("DELETE FROM \(ident: table) WHERE race_id = \(bind: id)").run()
            }
            return try await db.raw("DELETE FROM race WHERE id = \(bind: id) RETURNING id").all().count == 1
        }
    }

    // MARK: Organisers and observers

    public func isOrganiser(_ accountID: String, of raceID: String) async throws -> Bool {
        try await database.read { db in
            try await db.raw("SELECT 1 AS yes FROM race_organiser WHERE race_id = \(bind: raceID) AND account_id = \(bind: accountID)").first() != nil
        }
    }

    public struct Person: Sendable, Equatable, Decodable {
        public let accountId: String, email: String, displayName: String
    }

    public func organisers(raceID: String) async throws -> [Person] {
        try await people("SELECT account_id FROM race_organiser WHERE race_id = \(bind: raceID)")
    }

    /// Everyone a change of the race concerns: its organisers, runners and observers, once each.
    public func concerned(raceID: String) async throws -> [Person] {
        try await people("""
            SELECT account_id FROM race_organiser WHERE race_id = \(bind: raceID)
            UNION SELECT account_id FROM race_entry WHERE race_id = \(bind: raceID)
            UNION SELECT account_id FROM race_observer WHERE race_id = \(bind: raceID)
            """)
    }

    private func people(_ ids: SQLQueryString) async throws -> [Person] {
        try await database.read { db in
            try await db.raw("SELECT a.id AS account_id, a.email, a.display_name FROM account a WHERE a.id IN (" + ids + ") ORDER BY a.email")
                .rows(Person.self)
        }
    }

    /// Adds a co-organiser: false when there are `limit` already; nil when they were one.
    public func addOrganiser(raceID: String, accountID: String, limit: Int) async throws -> Bool? {
        try await database.transaction { db in
            if try await db.raw("SELECT 1 AS yes FROM race_organiser WHERE race_id = \(bind: raceID) AND account_id = \(bind: accountID)").first() != nil {
                return nil
            }
            let count = try await db.raw("SELECT COUNT(*) AS n FROM race_organiser WHERE race_id = \(bind: raceID)").first()?
                .decode(column: "n", as: Int.self) ?? 0
            guard count < limit else { return false }
            try await db.raw("INSERT INTO race_organiser (race_id, account_id) VALUES (\(bind: raceID), \(bind: accountID))").run()
            return true
        }
    }

    public func observe(raceID: String, accountID: String, _ on: Bool) async throws {
        try await database.transaction { db in
            if on {
                try await db.raw("INSERT INTO race_observer (race_id, account_id) VALUES (\(bind: raceID), \(bind: accountID)) ON CONFLICT DO NOTHING").run()
            } else {
                try await db.raw("DELETE FROM race_observer WHERE race_id = \(bind: raceID) AND account_id = \(bind: accountID)").run()
            }
        }
    }

    public func isObserver(_ accountID: String, of raceID: String) async throws -> Bool {
        try await database.read { db in
            try await db.raw("SELECT 1 AS yes FROM race_observer WHERE race_id = \(bind: raceID) AND account_id = \(bind: accountID)").first() != nil
        }
    }

    // MARK: Runners

    struct EntryRow: Decodable {
        let raceId: String, accountId: String, displayName: String, bib: Int, status: String, enrolledMs: Int64
        let lastMs: Int64?, lastLat: Double?, lastLon: Double?, progressM: Double?, paceSKm: Double?
        let startCrossMs: Int64?, finishMs: Int64?, correctedGunMs: Int64?
        var entry: RaceEntry {
            RaceEntry(raceID: raceId, accountID: accountId, displayName: displayName, bib: bib, status: RaceEntryStatus(rawValue: status) ?? .enrolled,
                      enrolledMs: enrolledMs, lastMs: lastMs, lastLat: lastLat, lastLon: lastLon, progressM: progressM, paceSPerKm: paceSKm,
                      startCrossMs: startCrossMs, finishMs: finishMs, correctedGunMs: correctedGunMs)
        }
    }

    static let entryColumns: SQLQueryString = """
        e.race_id, e.account_id, a.display_name, e.bib, e.status, e.enrolled_ms, e.last_ms, e.last_lat, e.last_lon, e.progress_m,
        e.pace_s_km, e.start_cross_ms, e.finish_ms, e.corrected_gun_ms
        """

    public enum Enrolment: Sendable, Equatable {
        case enrolled(bib: Int)
        case already(bib: Int)
        case full
    }

    /// Enrols the account with the next bib (1, 2, …), or says it was already (with its bib), or
    /// that the race has `limit` runners. The race's row is locked meanwhile, so two enrolling
    /// at once get different bibs on PostgreSQL too.
    public func enrol(raceID: String, accountID: String, nowMs: Int64, limit: Int) async throws -> Enrolment {
        let lock = database.dialect.forUpdate
        return try await database.transaction { db in
            _ = try await db.raw("SELECT id FROM race WHERE id = \(bind: raceID)\(unsafeRaw: lock)").first()
            if let bib = try await db.raw("SELECT bib FROM race_entry WHERE race_id = \(bind: raceID) AND account_id = \(bind: accountID)").first()?
                .decode(column: "bib", as: Int.self) {
                return .already(bib: bib)
            }
            let row = try await db.raw("SELECT COUNT(*) AS n, MAX(bib) AS top FROM race_entry WHERE race_id = \(bind: raceID)").first()
            let count = try row?.decode(column: "n", as: Int.self) ?? 0
            guard count < limit else { return .full }
            let bib = (try row?.decode(column: "top", as: Int?.self) ?? 0) + 1
            try await db.raw("""
                INSERT INTO race_entry (race_id, account_id, bib, status, enrolled_ms)
                VALUES (\(bind: raceID), \(bind: accountID), \(bind: bib), 'enrolled', \(bind: nowMs))
                """).run()
            return .enrolled(bib: bib)
        }
    }

    /// Withdraws the account, before the start; false when it was not enrolled.
    public func withdraw(raceID: String, accountID: String) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("DELETE FROM race_position WHERE race_id = \(bind: raceID) AND account_id = \(bind: accountID)").run()
            let gone = try await db.raw("DELETE FROM race_entry WHERE race_id = \(bind: raceID) AND account_id = \(bind: accountID) RETURNING bib").all().count == 1
            if gone { try await db.raw("UPDATE race SET dirty_seq = dirty_seq + 1 WHERE id = \(bind: raceID)").run() }
            return gone
        }
    }

    /// The race's runners, by bib.
    public func entries(raceID: String) async throws -> [RaceEntry] {
        try await database.read { db in
            try await db.raw("""
                SELECT \(Self.entryColumns) FROM race_entry e JOIN account a ON a.id = e.account_id
                WHERE e.race_id = \(bind: raceID) ORDER BY e.bib
                """).rows(EntryRow.self)
        }.map(\.entry)
    }

    public func entry(raceID: String, accountID: String) async throws -> RaceEntry? {
        try await database.read { db in
            try await db.raw("""
                SELECT \(Self.entryColumns) FROM race_entry e JOIN account a ON a.id = e.account_id
                WHERE e.race_id = \(bind: raceID) AND e.account_id = \(bind: accountID)
                """).row(EntryRow.self)
        }?.entry
    }

    /// Each runner's bib and status, by account: what a device's post is checked against.
    public func entryKeys(raceID: String) async throws -> [String: (bib: Int, status: RaceEntryStatus)] {
        let rows = try await database.read { db in
            try await db.raw("SELECT account_id, bib, status FROM race_entry WHERE race_id = \(bind: raceID)").all().map {
                (try $0.decode(column: "account_id", as: String.self), try $0.decode(column: "bib", as: Int.self),
                 RaceEntryStatus(rawValue: try $0.decode(column: "status", as: String.self)) ?? .enrolled)
            }
        }
        return Dictionary(rows.map { ($0.0, (bib: $0.1, status: $0.2)) }, uniquingKeysWith: { first, _ in first })
    }

    /// The account's races with its entries, that start after `fromMs`, soonest first.
    public func enrolments(accountID: String, fromMs: Int64, limit: Int) async throws -> [(Race, RaceEntry)] {
        let races = try await database.read { db in
            try await db.raw("""
                SELECT \(Self.raceColumns) FROM race r JOIN race_entry e ON e.race_id = r.id
                WHERE e.account_id = \(bind: accountID) AND r.starts_ms >= \(bind: fromMs) ORDER BY r.starts_ms, r.id LIMIT \(literal: limit)
                """).rows(RaceRow.self)
        }.map(\.race)
        var pairs: [(Race, RaceEntry)] = []
        for race in races {
            if let entry = try await entry(raceID: race.id, accountID: accountID) { pairs.append((race, entry)) }
        }
        return pairs
    }

    /// An organiser's marking of the runner with `bib`: present, disqualified or back to
    /// enrolled, and a corrected gun time (nil: as the device timed it). False when no runner has it.
    public func mark(raceID: String, bib: Int, status: RaceEntryStatus, correctedGunMs: Int64?) async throws -> Bool {
        try await database.transaction { db in
            let changed = try await db.raw("""
                UPDATE race_entry SET status = \(bind: status.rawValue), corrected_gun_ms = \(bind: correctedGunMs)
                WHERE race_id = \(bind: raceID) AND bib = \(bind: bib) RETURNING bib
                """).all().count == 1
            if changed { try await db.raw("UPDATE race SET dirty_seq = dirty_seq + 1 WHERE id = \(bind: raceID)").run() }
            return changed
        }
    }

    // MARK: Positions

    /// One runner's positions of one request, as the position writer batches them.
    public struct PositionBatch: Sendable {
        public var raceID: String
        public var accountID: String
        /// (time, lat, lon, progress), any order.
        public var positions: [(tMs: Int64, lat: Double, lon: Double, progressM: Double)]
        public var startCrossMs: Int64?
        public var finishMs: Int64?

        public init(raceID: String, accountID: String, positions: [(tMs: Int64, lat: Double, lon: Double, progressM: Double)],
                    startCrossMs: Int64?, finishMs: Int64?) {
            self.raceID = raceID
            self.accountID = accountID
            self.positions = positions
            self.startCrossMs = startCrossMs
            self.finishMs = finishMs
        }
    }

    /// Rows per INSERT: well below SQLite's 32,766 bound parameters (6 each).
    static let rowsPerInsert = 500

    /// Writes every batch in one transaction, in a few statements whatever their number: the
    /// positions (a resend is a no-op), each runner's newest position (never an older one: a
    /// backlog after an outage fills the history without moving the marker back; never for a
    /// disqualified runner, whose marker stays where it was), pace and crossings, and the races'
    /// change count. The number of positions that were new, per batch.
    public func addPositions(_ batches: [PositionBatch]) async throws -> [Int] {
        guard !batches.isEmpty else { return [] }
        struct Key: Hashable { let race: String, account: String, tMs: Int64 }
        let rows = batches.flatMap { batch in batch.positions.map { (batch.raceID, batch.accountID, $0) } }
        // Each runner's newest position of all the batches.
        var newest: [String: (race: String, account: String, p: (tMs: Int64, lat: Double, lon: Double, progressM: Double))] = [:]
        for (race, account, p) in rows where (newest[race + " " + account]?.p.tMs ?? .min) < p.tMs {
            newest[race + " " + account] = (race, account, p)
        }
        let runners = Array(newest.values)
        return try await database.transaction { db in
            var added = Set<Key>()
            for slice in stride(from: 0, to: rows.count, by: Self.rowsPerInsert) {
                let values = rows[slice..<min(slice + Self.rowsPerInsert, rows.count)].map { race, account, p -> SQLQueryString in
                    "(\(bind: race), \(bind: account), \(bind: p.tMs), \(bind: p.lat), \(bind: p.lon), \(bind: p.progressM))"
                }.joined(separator: ", ")
                for row in try await db.raw("INSERT INTO race_position (race_id, account_id, t_ms, lat, lon, progress_m) VALUES " + values
                                            + " ON CONFLICT DO NOTHING RETURNING race_id, account_id, t_ms").all() {
                    added.insert(Key(race: try row.decode(column: "race_id", as: String.self), account: try row.decode(column: "account_id", as: String.self),
                                     tMs: try row.decode(column: "t_ms", as: Int64.self)))
                }
            }
            let stored = batches.map { batch in
                // A position sent twice in one flush is new once: counted for the first batch that has it.
                batch.positions.filter { added.remove(Key(race: batch.raceID, account: batch.accountID, tMs: $0.tMs)) != nil }.count
            }
            for slice in stride(from: 0, to: runners.count, by: Self.rowsPerInsert) {
                let values = runners[slice..<min(slice + Self.rowsPerInsert, runners.count)].map { runner -> SQLQueryString in
                    "(\(bind: runner.race), \(bind: runner.account), \(bind: runner.p.tMs), \(bind: runner.p.lat), \(bind: runner.p.lon), \(bind: runner.p.progressM))"
                }.joined(separator: ", ")
                // Pace from the stretch since the marker's last position, smoothed (0.3 of the new).
                try await db.raw("WITH v (race_id, account_id, t_ms, lat, lon, progress_m) AS (VALUES " + values + ") " + """
                    UPDATE race_entry SET
                        pace_s_km = CASE WHEN race_entry.last_ms IS NOT NULL AND v.progress_m - race_entry.progress_m > 5
                            THEN (v.t_ms - race_entry.last_ms) / (v.progress_m - race_entry.progress_m)
                                 * (CASE WHEN race_entry.pace_s_km IS NULL THEN 1.0 ELSE 0.3 END)
                                 + COALESCE(race_entry.pace_s_km * 0.7, 0)
                            ELSE race_entry.pace_s_km END,
                        last_ms = v.t_ms, last_lat = v.lat, last_lon = v.lon, progress_m = v.progress_m
                    FROM v
                    WHERE race_entry.race_id = v.race_id AND race_entry.account_id = v.account_id
                      AND (race_entry.last_ms IS NULL OR race_entry.last_ms < v.t_ms) AND race_entry.status <> 'disqualified'
                    """).run()
            }
            for batch in batches where batch.startCrossMs != nil || batch.finishMs != nil {
                try await db.raw("""
                    UPDATE race_entry SET start_cross_ms = COALESCE(\(bind: batch.startCrossMs), start_cross_ms),
                                          finish_ms = COALESCE(\(bind: batch.finishMs), finish_ms)
                    WHERE race_id = \(bind: batch.raceID) AND account_id = \(bind: batch.accountID)
                    """).run()
            }
            for raceID in Set(batches.map(\.raceID)) {
                try await db.raw("UPDATE race SET dirty_seq = dirty_seq + 1 WHERE id = \(bind: raceID)").run()
            }
            return stored
        }
    }

    /// The runner's positions, oldest first (at most `limit`).
    public func positions(raceID: String, accountID: String, limit: Int) async throws -> [(tMs: Int64, progressM: Double)] {
        try await database.read { db in
            try await db.raw("""
                SELECT t_ms, progress_m FROM race_position WHERE race_id = \(bind: raceID) AND account_id = \(bind: accountID)
                ORDER BY t_ms LIMIT \(literal: limit)
                """).all().map { (try $0.decode(column: "t_ms", as: Int64.self), try $0.decode(column: "progress_m", as: Double.self)) }
        }
    }

    // MARK: Frames

    /// Whether the race has changes no frame shows yet.
    public func hasChanges(raceID: String) async throws -> Bool {
        try await database.read { db in
            try await db.raw("SELECT 1 AS yes FROM race WHERE id = \(bind: raceID) AND dirty_seq > frame_dirty_seq").first() != nil
        }
    }

    /// Claims the race's next frame for this instance: its number, or nil when nothing changed
    /// or the last frame is younger than `periodMs` (another instance made it).
    public func claimFrame(raceID: String, nowMs: Int64, periodMs: Int64) async throws -> Int64? {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE race SET frame_ms = \(bind: nowMs), frame_seq = frame_seq + 1, frame_dirty_seq = dirty_seq
                WHERE id = \(bind: raceID) AND dirty_seq > frame_dirty_seq AND frame_ms <= \(bind: nowMs - periodMs)
                RETURNING frame_seq
                """).first()?.decode(column: "frame_seq", as: Int64.self)
        }
    }

    /// Stores frame `seq` (JSON), unless a newer one is there.
    public func storeFrame(raceID: String, seq: Int64, json: String) async throws {
        try await database.transaction { db in
            try await db.raw("UPDATE race SET frame = \(bind: json) WHERE id = \(bind: raceID) AND frame_seq = \(bind: seq)").run()
        }
    }

    /// The newest frame's JSON, if one was made.
    public func frame(raceID: String) async throws -> String? {
        try await database.read { db in
            try await db.raw("SELECT frame FROM race WHERE id = \(bind: raceID)").first()?.decode(column: "frame", as: String?.self)
        }
    }
}
