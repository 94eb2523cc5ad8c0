import PacerConfig
import PacerCore
import Testing
@testable import PacerSession

/// Race mode in the run session, on injected time: `race start` starts a run when none
/// records, the race's tracker is fed the run's own tracker events (as `pacerctl replay
/// --course` feeds it), the runner hears the distance to go, the result and the place (when it
/// changes, at most once a minute, and with each distance-to-go cue), and a position goes to
/// the race every `[race] position_every_s`, with the crossings once known.
@Suite(.timeLimit(.minutes(10))) struct RaceModeTests {
    static let raceID = "6f1c4b6e-0000-4000-8000-000000000034"
    /// SessionDriver's fixes head east from here.
    static let start = Coordinate(latitude: 45.4779, longitude: 9.2241)

    /// A straight course east from the driver's first fix, `meters` long, a point every 10 m.
    static func mode(meters: Double = 1200, gun: Timestamp? = SessionDriver.t0) throws -> RaceMode {
        let points = stride(from: 0.0, through: meters, by: 10).map { WGS84.offsetting(start, east: $0, north: 0) }
        return RaceMode(id: raceID, name: "Naviglio 10k", bib: 12, course: try RaceCourse(points: points), gunTime: gun)
    }

    static func positions(_ driver: SessionDriver) -> [RacePositionFix] {
        driver.uplink.compactMap { if case .racePosition(let fix) = $0 { fix } else { nil } }
    }

    @Test func raceStartStartsARunAndTheRaceRunsToItsFinishWithGunAndNetTime() throws {
        let driver = SessionDriver()
        let reply = driver.command(.startRace(try Self.mode()), at: SessionDriver.at(-5))
        #expect(driver.begun.count == 1, "a run is started for the race")
        guard case .success(let status)? = reply else { Issue.record("race start refused: \(String(describing: reply))"); return }
        #expect(status.race?.name == "Naviglio 10k")
        #expect(driver.said("race mode on: \"Naviglio 10k\" (bib 12, 1.20 km)"))
        driver.run(seconds: 340, speed: 4)

        let result = try #require(driver.status(at: SessionDriver.at(340)).race?.result)
        #expect(result.gunTime == SessionDriver.t0)
        #expect(abs(result.finishTime.seconds(since: SessionDriver.t0) - 300) < 3, "1200 m at 4 m/s from the gun")
        // Live equals replay: the core's tracker over the same fixes decides the same result.
        var tracker = RunTracker(configuration: PacerConfiguration().tracking)
        var race = RaceProgressTracker(course: try Self.mode().course, configuration: RaceConfiguration(gunTime: SessionDriver.t0))
        var replayed: RaceResult?
        for i in 0..<340 {
            for case .finished(let r) in race.ingest(tracker.ingest(SessionDriver.fix(i, speed: 4))) { replayed = r }
        }
        #expect(replayed == result)

        let kinds = driver.cues.map(\.kind)
        #expect(kinds.filter { $0 == .raceToGo }.count == 2, "1 kilometre and 500 metres to go")
        let finish = try #require(driver.cues.first { $0.kind == .raceFinish })
        #expect(finish.text == "Finished. Gun time 4 minutes 59 seconds, net time 4 minutes 59 seconds.", "1200 m at 4.01 m/s, set off at the gun")
        #expect(driver.said("Naviglio 10k: finished at"))

        let positions = Self.positions(driver)
        #expect(positions.allSatisfy { $0.raceID == Self.raceID })
        for (a, b) in zip(positions, positions.dropFirst()) where b.finishedAt == nil {
            #expect(b.time.seconds(since: a.time) >= 4.75, "one every [race] position_every_s")
            #expect(b.progress >= a.progress)
        }
        #expect(positions.count >= 55 && positions.count <= 64, "\(positions.count)")
        let last = try #require(positions.last)
        #expect(last.finishedAt == result.finishTime)
        #expect(last.startedAt == result.startTime)
        #expect(positions.first?.startedAt == nil, "the start is known once the runner is away from the line")
        // Past the finish nothing more goes to the race.
        #expect(last.time <= result.finishTime.adding(seconds: 5))
    }

    @Test func thePlaceIsSaidWhenItChangesAtMostOnceAMinuteAndWithEachDistanceToGo() throws {
        let driver = SessionDriver()
        driver.command(.startRace(try Self.mode()), at: SessionDriver.at(-1))
        driver.run(seconds: 30, speed: 4)
        let places = { driver.cues.filter { $0.kind == .racePlace }.map(\.text) }
        driver.send(.raceReply(raceID: Self.raceID, .place(5, of: 20)), at: SessionDriver.at(30))
        #expect(places() == ["You are 5th of 20."])
        driver.send(.raceReply(raceID: Self.raceID, .place(4, of: 20)), at: SessionDriver.at(40))
        driver.send(.raceReply(raceID: "another-race", .place(1, of: 2)), at: SessionDriver.at(41))
        #expect(places().count == 1, "not again within a minute, and only this race's place")
        driver.send(.raceReply(raceID: Self.raceID, .place(4, of: 20)), at: SessionDriver.at(91))
        #expect(places() == ["You are 5th of 20.", "You are 4th of 20."])
        driver.send(.raceReply(raceID: Self.raceID, .place(4, of: 21)), at: SessionDriver.at(200))
        #expect(places().count == 2, "an unchanged place is not said again")
        // 1 km to go comes at 200 m: the place goes with it.
        driver.run(from: 30, seconds: 30, speed: 4)
        let toGo = try #require(driver.cues.firstIndex { $0.kind == .raceToGo })
        #expect(driver.cues[toGo].text == "1 kilometre to go.")
        #expect(driver.cues[toGo + 1].text == "You are 4th of 21.")
    }

    @Test func aRefusedRaceQueuesNoMorePositionsAndRaceModeGoesOn() throws {
        let driver = SessionDriver()
        driver.command(.startRace(try Self.mode()), at: SessionDriver.at(-1))
        driver.run(seconds: 20, speed: 4)
        let before = Self.positions(driver).count
        #expect(before == 4)
        driver.send(.raceReply(raceID: Self.raceID, .refused("HTTP 404: not enrolled")), at: SessionDriver.at(20))
        #expect(driver.said("the cloud takes no positions for \"Naviglio 10k\" (HTTP 404: not enrolled)"))
        driver.run(from: 20, seconds: 20, speed: 4)
        #expect(Self.positions(driver).count == before)
        #expect(driver.status(at: SessionDriver.at(40)).race?.refused == "HTTP 404: not enrolled")
    }

    @Test func commandsFitTheStateRaceModeEndsWithTheRun() throws {
        let driver = SessionDriver()
        #expect(driver.command(.stopRace, at: SessionDriver.at(0)) == .failure(CommandFailure(code: .conflict, message: "race mode is not on")))
        driver.command(.start, at: SessionDriver.at(0))
        driver.run(seconds: 5)
        // Armed while a run records: no second run, the answer at once.
        guard case .success(let status)? = driver.command(.startRace(try Self.mode()), at: SessionDriver.at(5)) else {
            Issue.record("race start refused")
            return
        }
        #expect(status.race != nil)
        #expect(driver.begun.count == 1)
        #expect(driver.command(.startRace(try Self.mode()), at: SessionDriver.at(6))
                == .failure(CommandFailure(code: .conflict, message: "race mode is already on for \"Naviglio 10k\"")))
        #expect(driver.status(at: SessionDriver.at(6)).line.contains("race Naviglio 10k"))
        guard case .success(let off)? = driver.command(.stopRace, at: SessionDriver.at(7)) else {
            Issue.record("race stop refused")
            return
        }
        #expect(off.race == nil)
        #expect(off.phase == .recording, "the run goes on")
        driver.command(.startRace(try Self.mode()), at: SessionDriver.at(8))
        driver.command(.stop, at: SessionDriver.at(9))
        #expect(driver.said("race mode for \"Naviglio 10k\" ends with the run"))
        #expect(driver.status(at: SessionDriver.at(10)).race == nil)
    }

    @Test func withoutVoiceNothingIsSaidAndPositionsStillGo() throws {
        var configuration = PacerConfiguration()
        configuration.voice.enabled = false
        configuration.race.positionEverySeconds = 2
        let driver = SessionDriver(configuration: configuration)
        driver.command(.startRace(try Self.mode(meters: 400)), at: SessionDriver.at(-1))
        driver.run(seconds: 140, speed: 4)
        #expect(driver.cues.isEmpty)
        #expect(driver.status(at: SessionDriver.at(140)).race?.result != nil)
        let positions = Self.positions(driver)
        #expect(positions.count >= 48 && positions.count <= 56, "every 2 s to the finish: \(positions.count)")
    }

    @Test func positionsWaitForTheHourBeforeTheGunAndWithoutAGunRaceModeIsIt() throws {
        let early = SessionDriver()
        early.command(.startRace(try Self.mode(gun: SessionDriver.t0.adding(seconds: 2 * 3600))), at: SessionDriver.at(-1))
        early.run(seconds: 30, speed: 4)
        #expect(Self.positions(early).isEmpty, "the race takes positions from an hour before its start")

        let noGun = SessionDriver()
        noGun.command(.startRace(try Self.mode(meters: 400, gun: nil)), at: SessionDriver.at(-1))
        noGun.run(seconds: 140, speed: 4)
        let result = try #require(noGun.status(at: SessionDriver.at(140)).race?.result)
        #expect(result.gunTime == SessionDriver.t0, "the first position after race start is the gun")
        #expect(noGun.cues.contains { $0.kind == .raceFinish && $0.text.hasPrefix("Finished. Gun time 1 minute") })
    }

    @Test func raceModeIsKeptForARestartAndGoesOnWithTheContinuedRun() throws {
        // Before the restart: race mode is kept with the run's UUID, and cleared at its end.
        let before = SessionDriver()
        before.command(.startRace(try Self.mode()), at: SessionDriver.at(-1))
        #expect(before.raceModes.last??.raceID == Self.raceID)
        #expect(before.raceModes.last??.runUUID == "run-uuid-1", "told again once the run has its UUID")
        before.command(.stop, at: SessionDriver.at(0))
        #expect(before.raceModes.last! == nil)

        // After it: run 7, interrupted at second 100, continues with the fix of second 110; the
        // executor hands race mode the tracker events of the run's stored inputs.
        let policy = ResumePolicy(runID: 7, lastSampleTime: SessionDriver.t0.adding(seconds: 100), windowSeconds: 600, startedNs: SessionDriver.at(105))
        let after = SessionDriver(resumable: policy)
        var tracker = RunTracker(configuration: PacerConfiguration().tracking)
        let replayed = (0...100).flatMap { tracker.ingest(SessionDriver.fix($0, speed: 4)) }
        after.send(.gpsLine("TPV 110", fix: SessionDriver.fix(110, speed: 4), receivedNs: SessionDriver.at(110)), at: SessionDriver.at(110))
        after.send(.raceContinued(try Self.mode(), replayed: replayed), at: SessionDriver.at(110))
        #expect(after.said("race mode for \"Naviglio 10k\" goes on with the continued run, 40"), "\(after.notes.map(\.message))")
        let race = try #require(after.status(at: SessionDriver.at(110)).race)
        #expect(race.startedAt != nil, "the start crossing stands")
        #expect(after.cues.isEmpty && Self.positions(after).isEmpty, "nothing said or queued again")
        #expect(after.raceModes.last??.runUUID == "interrupted-uuid")
        after.run(from: 111, seconds: 80, speed: 4)
        #expect(Self.positions(after).count == 16, "positions go on every 5 s: \(Self.positions(after).map(\.time))")
        #expect(after.cues.map(\.text) == ["500 metres to go."], "the next cue point, not the ones passed before the restart")
    }

    @Test func theReminderIsDueOnceBeforeTheStartAndNotAfterIt() {
        let startsAt: Int64 = 1_800_000_000_000
        let races = [UpcomingRace(id: "a", name: "Naviglio 10k", startsAtMs: startsAt, bib: 12),
                     UpcomingRace(id: "b", name: "Park 5k", startsAtMs: startsAt + 86_400_000, bib: 3)]
        #expect(RaceReminder.due(races, said: [], nowMs: startsAt - 16 * 60_000, minutes: 15).isEmpty)
        #expect(RaceReminder.due(races, said: [], nowMs: startsAt - 15 * 60_000, minutes: 15)
                == [RaceReminder.Due(raceID: "a", text: "The race Naviglio 10k starts in 15 minutes, bib 12.")])
        #expect(RaceReminder.due(races, said: [], nowMs: startsAt - 50_000, minutes: 15).map(\.text) == ["The race Naviglio 10k starts in 1 minute, bib 12."])
        #expect(RaceReminder.due(races, said: ["a"], nowMs: startsAt - 60_000, minutes: 15).isEmpty)
        #expect(RaceReminder.due(races, said: [], nowMs: startsAt, minutes: 15).isEmpty, "not once the race has started")
        #expect(RaceReminder.due(races, said: [], nowMs: startsAt - 60_000, minutes: 0).isEmpty)
    }
}
