import Foundation

/// A race's state at one instant, computed once (per race, per frame period) by one instance
/// and sent by every instance to its spectators: the leaderboard, every runner's marker, and
/// how the runners spread along the course. JSON on the wire (`/races/{id}/frame`, the live
/// stream's `frame` events) and in the store.
public struct RaceFrame: Sendable, Equatable, Codable {
    /// One runner: place (nil when disqualified or not started), bib, name, where and how fast.
    public struct Row: Sendable, Equatable, Codable {
        public var place: Int?
        public var bib: Int
        public var name: String
        public var status: RaceEntryStatus
        /// Metres along the course, the course's length once finished.
        public var progress_m: Double?
        /// Metres behind the leader (running), or milliseconds behind the winner (finished).
        public var gap_m: Double?
        public var gap_ms: Int64?
        public var pace_s_km: Double?
        public var lat: Double?
        public var lon: Double?
        /// When the newest position was taken: the page shows "last fix N s ago" from it.
        public var last_ms: Int64?
        public var gun_ms: Int64?
        public var net_ms: Int64?

        public var finished: Bool { gun_ms != nil }
    }

    public var race: String
    public var seq: Int64
    /// When the frame was made (the server's clock), so a page can age "last fix" without its own clock skew.
    public var made_ms: Int64
    public var length_m: Double
    /// Runners present (not disqualified), started, finished.
    public var present: Int
    public var started: Int
    public var finished: Int
    /// Every present or disqualified runner, in leaderboard order (finishers by gun time, then
    /// runners by distance; disqualified last).
    public var rows: [Row]
    /// Runners (present, started, not finished) per equal stretch of the course.
    public var density: [Int]

    public static let densityBins = 40

    /// The frame of `entries` at `nowMs`: only present and disqualified runners are on it.
    public static func make(race: Race, entries: [RaceEntry], seq: Int64, nowMs: Int64) -> RaceFrame {
        let shown = entries.filter { $0.status != .enrolled }
        var rows = shown.map { entry -> Row in
            let gun = entry.gunMs(raceStartsMs: race.startsMs)
            let progress = gun != nil ? race.lengthM : entry.progressM.map { min(max($0, 0), race.lengthM) }
            return Row(place: nil, bib: entry.bib, name: entry.displayName, status: entry.status, progress_m: progress, gap_m: nil, gap_ms: nil,
                       pace_s_km: entry.paceSPerKm, lat: entry.lastLat, lon: entry.lastLon, last_ms: entry.lastMs, gun_ms: gun,
                       net_ms: gun == nil ? nil : entry.netMs)
        }
        rows.sort(by: ranksBefore)
        var place = 0
        let winner = rows.first { $0.status == .present && $0.finished }?.gun_ms
        let leader = rows.first { $0.status == .present && !$0.finished && $0.progress_m != nil }?.progress_m
        var density = Array(repeating: 0, count: densityBins)
        for index in rows.indices where rows[index].status == .present {
            if let gun = rows[index].gun_ms {
                place += 1
                rows[index].place = place
                rows[index].gap_ms = winner.map { gun - $0 }
            } else if let progress = rows[index].progress_m {
                place += 1
                rows[index].place = place
                rows[index].gap_m = leader.map { $0 - progress }
                let bin = Int(progress / max(race.lengthM, 1) * Double(densityBins))
                density[min(max(bin, 0), densityBins - 1)] += 1
            }
        }
        let present = rows.filter { $0.status == .present }
        return RaceFrame(race: race.id, seq: seq, made_ms: nowMs, length_m: race.lengthM, present: present.count,
                         started: present.filter { $0.progress_m != nil }.count, finished: present.filter(\.finished).count,
                         rows: rows, density: density)
    }

    /// Finishers by gun time, then runners farther along first, then those not yet heard of;
    /// disqualified runners last; bib breaks ties, so the order is total.
    static func ranksBefore(_ a: Row, _ b: Row) -> Bool {
        func tier(_ row: Row) -> Int {
            if row.status == .disqualified { return 3 }
            if row.finished { return 0 }
            return row.progress_m == nil ? 2 : 1
        }
        let (ta, tb) = (tier(a), tier(b))
        if ta != tb { return ta < tb }
        switch ta {
        case 0 where a.gun_ms != b.gun_ms: return a.gun_ms! < b.gun_ms!
        case 1 where a.progress_m != b.progress_m: return a.progress_m! > b.progress_m!
        default: return a.bib < b.bib
        }
    }

    /// What one spectator is sent: the top of the board, the followed runners, and every
    /// marker while the race is small enough to draw them all.
    public struct View: Sendable, Equatable, Codable {
        public var race: String
        public var seq: Int64
        public var made_ms: Int64
        public var length_m: Double
        public var present: Int
        public var started: Int
        public var finished: Int
        public var leaders: [Row]
        public var followed: [Row]
        /// Every runner's marker (nil when there are more than `maxMarkers`: the density bar then).
        public var markers: [Row]?
        public var density: [Int]
    }

    /// The top of the board every spectator gets (a phone shows about this many rows); followed
    /// runners come on top of it.
    public static let maxLeaders = 20
    public static let maxMarkers = 500

    /// The view that follows `bibs` (at most `RaceLimits.maxFollowed` are used).
    public func view(following bibs: [Int]) -> View {
        let wanted = Set(bibs.prefix(RaceLimits.maxFollowed))
        return View(race: race, seq: seq, made_ms: made_ms, length_m: length_m, present: present, started: started, finished: finished,
                    leaders: Array(rows.prefix(Self.maxLeaders)), followed: wanted.isEmpty ? [] : rows.filter { wanted.contains($0.bib) },
                    markers: rows.count <= Self.maxMarkers ? rows : nil, density: density)
    }
}
