import PacerContract
import PacerCore
import Testing
@testable import CloudSync

/// `pacerctl race start [ID]`: the race named, or the only or next one, refused with why; the
/// synced race as race mode runs it (course, stages, the official start as the gun).
@Suite(.timeLimit(.minutes(10))) struct RaceChoiceTests {
    static let start = Coordinate(latitude: 45.4779, longitude: 9.2241)

    /// Out 500 m east and back: the stage at the turn, which the path passes once.
    static let startsMs = WireTime.milliseconds("2026-12-06T09:30:00.000Z")!

    static func race(_ id: String, status: String = "enrolled", stageAt: Double? = 500, startsAt: String = "2026-12-06T09:30:00.000Z") -> DeviceRace {
        let out = stride(from: 0.0, through: 500, by: 10).map { WGS84.offsetting(start, east: $0, north: 0) }
        let back = stride(from: 490.0, through: 0, by: -10).map { WGS84.offsetting(start, east: $0, north: 5) }
        let path = (out + back).map { [$0.latitude, $0.longitude] }
        var waypoints = [path[0]]
        if let stageAt { waypoints.append({ let c = WGS84.offsetting(start, east: stageAt, north: 0); return [c.latitude, c.longitude] }()) }
        waypoints.append(path[path.count - 1])
        return DeviceRace(id: id, name: "Race \(id)", starts_at: startsAt, bib: 12, status: status, length_m: 1000,
                          path: path, waypoints: waypoints)
    }

    @Test func theRaceNamedOrTheOnlyOrNextOneOrWhyNot() throws {
        let morning = Self.race("a", startsAt: "2026-12-06T07:00:00.000Z"), b = Self.race("b"), out = Self.race("c", status: "disqualified")
        let now = Self.startsMs - 600_000
        #expect(try RaceChoice.choose([b], id: nil, nowMs: now).get() == b)
        #expect(try RaceChoice.choose([morning, b], id: nil, nowMs: now).get() == b, "the one about to start, not this morning's")
        #expect(try RaceChoice.choose([morning, b], id: "A", nowMs: now).get() == morning)
        #expect(throws: RaceChoiceRefusal.self) { try RaceChoice.choose([], id: nil, nowMs: now).get() }
        if case .failure(let refusal) = RaceChoice.choose([], id: nil, nowMs: now) { #expect(refusal.message.hasPrefix("no race to start")) }
        if case .failure(let refusal) = RaceChoice.choose([b], id: "x", nowMs: now) { #expect(refusal.message.contains("no race x")) }
        if case .failure(let refusal) = RaceChoice.choose([out], id: nil, nowMs: now) { #expect(refusal.message == "the runner is disqualified from Race c") }
    }

    @Test func theModeHasTheCourseItsStagesAndTheGun() throws {
        let mode = try RaceChoice.mode(Self.race("a"))
        #expect(mode.course.stages == [50], "the turn, the path's 51st point")
        #expect(abs(mode.course.length - 1000) < 2)
        #expect(mode.gunTime == Timestamp(iso8601: "2026-12-06T09:30:00.000Z"))
        #expect(mode.bib == 12)
        // A waypoint nowhere on the path: no stages, the course still runs.
        #expect(try RaceChoice.mode(Self.race("b", stageAt: 5000)).course.stages == [])
        var broken = Self.race("c")
        broken.path = [broken.path[0]]
        #expect(throws: RaceCourseError.tooFewPoints(1)) { try RaceChoice.mode(broken) }
    }
}
