import PacerContract
import PacerCore
import PacerSession

/// Which synced race `pacerctl race start [ID]` turns race mode on for, and the race as race
/// mode runs it (its course checked as the core checks one).
public enum RaceChoice {
    /// The race named by its id; with none named, the only one, or the one whose start is
    /// nearest `nowMs` (the sync lists races from 12 hours back: one run this morning must not
    /// win over the one about to start). A refusal says why, for the runner.
    public static func choose(_ races: [DeviceRace], id: String?, nowMs: Int64) -> Result<DeviceRace, RaceChoiceRefusal> {
        if let id {
            guard let race = races.first(where: { $0.id == id.lowercased() }) else {
                return .failure(RaceChoiceRefusal(message: "no race \(id) among the runner's races on this device (pacerctl race lists them)"))
            }
            return usable(race)
        }
        let nearest = races.min { a, b in
            abs((WireTime.milliseconds(a.starts_at) ?? .max / 2) - nowMs) < abs((WireTime.milliseconds(b.starts_at) ?? .max / 2) - nowMs)
        }
        guard let next = nearest else {
            return .failure(RaceChoiceRefusal(message: "no race to start: the runner is enrolled in none that this device knows of "
                                              + "(pacerctl race lists them; pacerctl sync fetches them)"))
        }
        return usable(next)
    }

    private static func usable(_ race: DeviceRace) -> Result<DeviceRace, RaceChoiceRefusal> {
        race.status == "disqualified" ? .failure(RaceChoiceRefusal(message: "the runner is disqualified from \(race.name)")) : .success(race)
    }

    /// Race mode's race: the course from the path, its stages where the waypoints lie on it, and
    /// the official start as the gun.
    public static func mode(_ race: DeviceRace) throws(RaceCourseError) -> RaceMode {
        let latitudes = race.path.map { $0.count == 2 ? $0[0] : .nan }
        let longitudes = race.path.map { $0.count == 2 ? $0[1] : .nan }
        let course = try RaceCourse(latitudes: latitudes, longitudes: longitudes, stages: stages(race))
        let gun = WireTime.milliseconds(race.starts_at).map { Timestamp(milliseconds: $0) }
        return RaceMode(id: race.id, name: race.name, bib: race.bib, course: course, gunTime: gun)
    }

    /// The waypoints between the start and the arrival as indices into the path: each the
    /// first place after the previous stage where the path comes within 50 m of it (its nearest
    /// point there: an out-and-back course passes a stage's place twice); none when one is not
    /// on the path.
    static func stages(_ race: DeviceRace) -> [Int] {
        guard race.waypoints.count > 2, race.path.count > 2, race.path.allSatisfy({ $0.count == 2 }) else { return [] }
        func distance(_ index: Int, _ target: Coordinate) -> Double {
            WGS84.distance(target, Coordinate(latitude: race.path[index][0], longitude: race.path[index][1]))
        }
        var stages: [Int] = []
        var index = 1
        let last = race.path.count - 1
        for waypoint in race.waypoints.dropFirst().dropLast() {
            guard waypoint.count == 2 else { return [] }
            let target = Coordinate(latitude: waypoint[0], longitude: waypoint[1])
            while index < last, distance(index, target) > 50 { index += 1 }
            guard index < last else { return [] }
            while index + 1 < last, distance(index + 1, target) < distance(index, target) { index += 1 }
            stages.append(index)
            index += 1
        }
        return stages
    }
}

public struct RaceChoiceRefusal: Error, Sendable, Equatable {
    public var message: String
}
