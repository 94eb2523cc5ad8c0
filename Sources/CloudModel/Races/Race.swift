import Foundation
import PacerCore

/// Who may enrol: anyone who finds the race, or only those given its private registration link.
public enum RaceAccess: String, Sendable, Equatable, CaseIterable {
    case open, invitation
}

/// How the path between the waypoints was made.
public enum RoutePlan: String, Sendable, Equatable, CaseIterable {
    /// Straight legs from waypoint to waypoint.
    case straight
    /// A GPX file the organiser uploaded.
    case gpx
    /// Over streets, by pgRouting (PostgreSQL only).
    case calculated
}

/// A race (R-CLOUD-6, Track4Run): a course from a start through up to 10 stages to an arrival,
/// a start time, and who may enrol until when. The account that made it is its first organiser.
public struct Race: Sendable, Equatable {
    public var id: String
    public var ownerID: String
    public var name: String
    /// Where it is run (the organiser's zone when made): its times are written in it.
    public var timezone: String
    /// The official start (the gun), milliseconds since 1970.
    public var startsMs: Int64
    /// Enrolment closes then (at the latest the start).
    public var closesMs: Int64
    public var access: RaceAccess
    /// The secret of the registration link (`Tokens`): an invitation race is found only with it.
    public var inviteCode: String
    /// Start, stages, arrival.
    public var waypoints: [LatLon]
    /// The course itself, from the start to the arrival.
    public var path: [LatLon]
    public var lengthM: Double
    public var routePlan: RoutePlan
    public var createdMs: Int64
    /// Set when the race was postponed: the start it had before, for the notice.
    public var postponedFromMs: Int64?

    public init(id: String, ownerID: String, name: String, timezone: String, startsMs: Int64, closesMs: Int64, access: RaceAccess, inviteCode: String,
                waypoints: [LatLon], path: [LatLon], lengthM: Double, routePlan: RoutePlan, createdMs: Int64, postponedFromMs: Int64? = nil) {
        self.id = id
        self.ownerID = ownerID
        self.name = name
        self.timezone = timezone
        self.startsMs = startsMs
        self.closesMs = closesMs
        self.access = access
        self.inviteCode = inviteCode
        self.waypoints = waypoints
        self.path = path
        self.lengthM = lengthM
        self.routePlan = routePlan
        self.createdMs = createdMs
        self.postponedFromMs = postponedFromMs
    }

    public var start: LatLon { waypoints[0] }
}

/// What a runner is in a race: enrolled, marked present by an organiser (so on the map and the
/// leaderboard), or disqualified (greyed where they were, out of the ranking).
public enum RaceEntryStatus: String, Sendable, Equatable, CaseIterable, Codable {
    case enrolled, present, disqualified
}

/// A runner's entry: their bib, status, and what their device last told of them.
public struct RaceEntry: Sendable, Equatable {
    public var raceID: String
    public var accountID: String
    public var displayName: String
    public var bib: Int
    public var status: RaceEntryStatus
    public var enrolledMs: Int64
    /// The newest position: its time, place and progress along the course.
    public var lastMs: Int64?
    public var lastLat: Double?
    public var lastLon: Double?
    public var progressM: Double?
    /// Seconds per km over the last stretch, smoothed.
    public var paceSPerKm: Double?
    /// The runner's own start-line crossing and finish-line crossing (the device interpolates both).
    public var startCrossMs: Int64?
    public var finishMs: Int64?
    /// An organiser's correction of the gun time, which then counts.
    public var correctedGunMs: Int64?

    public init(raceID: String, accountID: String, displayName: String, bib: Int, status: RaceEntryStatus, enrolledMs: Int64,
                lastMs: Int64? = nil, lastLat: Double? = nil, lastLon: Double? = nil, progressM: Double? = nil, paceSPerKm: Double? = nil,
                startCrossMs: Int64? = nil, finishMs: Int64? = nil, correctedGunMs: Int64? = nil) {
        self.raceID = raceID
        self.accountID = accountID
        self.displayName = displayName
        self.bib = bib
        self.status = status
        self.enrolledMs = enrolledMs
        self.lastMs = lastMs
        self.lastLat = lastLat
        self.lastLon = lastLon
        self.progressM = progressM
        self.paceSPerKm = paceSPerKm
        self.startCrossMs = startCrossMs
        self.finishMs = finishMs
        self.correctedGunMs = correctedGunMs
    }

    /// The official result: the organiser's correction, else finish − the gun.
    public func gunMs(raceStartsMs: Int64) -> Int64? { correctedGunMs ?? finishMs.map { $0 - raceStartsMs } }
    /// From the runner's own start-line crossing (shown beside the gun time).
    public var netMs: Int64? {
        guard let finishMs, let startCrossMs, finishMs >= startCrossMs else { return nil }
        return finishMs - startCrossMs
    }
}

/// The limits of R-CLOUD-6, and the bounds that keep a race's work bounded.
public enum RaceLimits {
    public static let maxStages = 10
    public static let maxLengthM = 50_000.0
    /// Points of a stored path: a GPX track is thinned to this (a point every 10 m of a 50 km course).
    public static let maxPathPoints = 5_000
    /// Points closer than this to the last kept one are dropped from an uploaded track.
    public static let thinningM = 10.0
    public static let maxNameLength = 80
    /// Runners per race, and races an account organises at once.
    public static let maxRunners = 50_000
    public static let maxOrganisers = 20
    public static let maxOrganisedRaces = 100
    /// Positions per device request (an hour of backlog at one every 5 s).
    public static let maxPositionsPerRequest = 720
    /// Runners a spectator follows with every fix.
    public static let maxFollowed = 10
}

/// Why a race's fields were refused, naming the field.
public typealias RaceInputError = AccountInputError

/// The checks of a race's fields, pure (the controllers and the store share them).
public enum RaceRules {
    public static func validatedName(_ text: String) -> Result<String, RaceInputError> {
        let name = text.trimmingSpaces.precomposedStringWithCanonicalMapping
        guard !name.isEmpty, name.count <= RaceLimits.maxNameLength, !name.contains(where: \.isNewline),
              !name.unicodeScalars.contains(where: EmailAddress.isInvisible) else {
            return .failure(RaceInputError(field: "name", "name: 1 to \(RaceLimits.maxNameLength) characters on one line, like \"Park 10k\""))
        }
        return .success(name)
    }

    /// Waypoints typed one per line as "latitude, longitude": the start, up to 10 stages, the arrival.
    public static func parsedWaypoints(_ text: String) -> Result<[LatLon], RaceInputError> {
        let lines = text.split(whereSeparator: \.isNewline).map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
        guard lines.count <= RaceLimits.maxStages + 2 else {
            return .failure(RaceInputError(field: "waypoints",
                                           "waypoints: at most \(RaceLimits.maxStages) stages between the start and the arrival (\(lines.count - 2) given)"))
        }
        guard lines.count >= 2 else {
            return .failure(RaceInputError(field: "waypoints", "waypoints: give the start and the arrival, one \"latitude, longitude\" per line"))
        }
        var points: [LatLon] = []
        for (index, line) in lines.enumerated() {
            let parts = line.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
            guard parts.count == 2, let lat = number(parts[0]), let lon = number(parts[1]), (-90...90).contains(lat), (-180...180).contains(lon) else {
                return .failure(RaceInputError(field: "waypoints",
                                               "waypoints: line \(index + 1) is not \"latitude, longitude\" in degrees, like 45.4642, 9.1900"))
            }
            points.append(LatLon(lat: lat, lon: lon))
        }
        return .success(points)
    }

    /// Digits, one point and a leading minus only: `Double()` alone takes "1e3", "nan" and "inf".
    public static func number(_ text: String) -> Double? {
        let body = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !body.isEmpty, body.count <= 24, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              body.filter({ $0 == "." }).count <= 1 else { return nil }
        return Double(text)
    }

    /// The course's length, or why it is refused: more than 50 km, or too many points.
    public static func measured(_ path: [LatLon]) -> Result<Double, RaceInputError> {
        guard path.count >= 2 else { return .failure(RaceInputError(field: "path", "path: a course needs at least two points")) }
        guard path.count <= RaceLimits.maxPathPoints else {
            return .failure(RaceInputError(field: "path", "path: at most \(RaceLimits.maxPathPoints) points (\(path.count) given)"))
        }
        let length = length(of: path)
        guard length <= RaceLimits.maxLengthM else {
            return .failure(RaceInputError(field: "path", "path: a course is at most \(Int(RaceLimits.maxLengthM / 1000)) km; this one is "
                                           + String(format: "%.1f", length / 1000) + " km"))
        }
        guard length >= 100 else { return .failure(RaceInputError(field: "path", "path: a course is at least 100 m long")) }
        return .success(length)
    }

    public static func length(of path: [LatLon]) -> Double {
        zip(path, path.dropFirst()).reduce(0) { $0 + $1.0.distanceM(to: $1.1) }
    }

    /// An uploaded track as a course: points closer than `RaceLimits.thinningM` to the last kept
    /// one dropped (the last point always kept), so a 1 Hz recording becomes a light course.
    public static func thinned(_ track: [LatLon]) -> [LatLon] {
        guard var last = track.first else { return [] }
        var kept = [last]
        for point in track.dropFirst() where point.distanceM(to: last) >= RaceLimits.thinningM {
            kept.append(point)
            last = point
        }
        // The arrival is where the track ends: it replaces a kept point closer than the spacing.
        if let end = track.last, kept.last != end {
            if kept.count > 1 { kept[kept.count - 1] = end } else { kept.append(end) }
        }
        return kept
    }
}
