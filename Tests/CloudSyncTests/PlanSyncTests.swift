@testable import CloudSync
import Foundation
import HTTPClient
import PacerConfig
import PacerContract
import PacerCore
import PacerTestSupport
import Synchronization
import Testing

/// The `plan` section on the device: its sessions become workout files in the state directory
/// (read back by the workout file parser), an unchanged ETag keeps them, an emptied plan removes
/// them, offline the last plan is used, and a session the device cannot run is skipped with the
/// field named; "today" in the plan's timezone, exactly at local midnight.
@Suite(.timeLimit(.minutes(10))) struct PlanSyncTests {
    static let intervalsID = "0f8e2b1c-1111-4aaa-8bbb-000000000001"
    static let easyID = "0f8e2b1c-2222-4aaa-8bbb-000000000002"
    static let intervals = PlannedSession(id: intervalsID, date: "2026-05-10", name: "6 by 400 metres", steps: [
        PlanStep(type: "warmup", distance_m: 800, pace_s_per_km: [300, 360]),
        PlanStep(type: "repeat", times: 6, steps: [PlanStep(type: "run", distance_m: 400, pace_s_per_km: [190, 210]),
                                                   PlanStep(type: "recover", distance_m: 200)]),
        PlanStep(type: "cooldown", time_s: 300, hr_zone: 1),
    ])
    static let easy = PlannedSession(id: easyID, date: "2026-05-11", name: "Easy", steps: [PlanStep(type: "run", time_s: 1800, hr_bpm: [120, 140])])

    /// What the sync thread tells the pipeline, in order.
    final class Plans: @unchecked Sendable {
        var given: [DevicePlan?] = []
        var log: [String] = []
    }

    static func loop(_ directory: TemporaryDirectory, _ cloud: ScriptedCloud, _ plans: Plans) -> SyncLoop {
        let engine = SyncEngine(settings: SyncLoopTests.settings, storePath: directory.file("pacer.db"),
                                transport: { request throws(HTTPClientError) in try cloud.perform(request) },
                                log: { _, message in plans.log.append(message) }, onPlan: { plans.given.append($0) })
        return SyncLoop(engine: engine, state: { nil }, say: { _ in .noVoice }, log: { _, _ in })
    }

    static func files(_ directory: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.file("plan"))) ?? []).sorted()
    }

    @Test func aPlanBecomesWorkoutFilesKeptOnAnUnchangedETagRemovedWhenEmptiedAndUsedOffline() throws {
        let directory = try TemporaryDirectory(prefix: "pacer-plan")
        let cloud = ScriptedCloud()
        let plans = Plans()
        cloud.plan = PlanSection(version: "1", timezone: "Europe/Rome", sessions: [Self.intervals, Self.easy])
        var loop = Self.loop(directory, cloud, plans)
        #expect(plans.given == [nil], "no sync yet: no plan, and the pipeline hears so at start")
        loop.perform(.fetch, at: 0)

        // One workout file per session, named by date and id, read back as the session's workout.
        #expect(Self.files(directory) == ["2026-05-10-\(Self.intervalsID).toml", "2026-05-11-\(Self.easyID).toml"])
        let path = directory.file("plan/2026-05-10-\(Self.intervalsID).toml")
        let written = try WorkoutFile.load(path: path)
        #expect(written == (try PlanSteps.workout(name: "6 by 400 metres", steps: Self.intervals.steps)))
        #expect(plans.given.count == 2 && plans.given.last??.sessions.map(\.id) == [Self.intervalsID, Self.easyID])
        #expect(plans.given.last??.timezone == "Europe/Rome")

        // Unchanged (304 on the ETag): the files stay as they are, the pipeline hears nothing new.
        let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        loop.handle(.syncNow(reply: { _ in }), at: 100 * SyncLoopTests.second)
        loop.perform(.fetch, at: 100 * SyncLoopTests.second)
        #expect(cloud.requests.last?.ifNoneMatch != nil)
        #expect(Self.files(directory).count == 2)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == modified)
        #expect(plans.given.count == 2)

        // A file of the runner's own in the directory is left alone.
        try "name = \"mine\"\n".write(toFile: directory.file("plan/mine.toml"), atomically: true, encoding: .utf8)

        // Restarted offline: the last plan is used, from the kept sync.
        cloud.online = false
        let offline = Plans()
        var restarted = Self.loop(directory, cloud, offline)
        restarted.perform(.fetch, at: 0)
        #expect(offline.given.count == 1 && offline.given[0]?.sessions.count == 2, "\(offline.given)")
        #expect(Self.files(directory).count == 3)

        // Emptied in the cloud: its files go, the runner's stays.
        cloud.online = true
        cloud.plan = PlanSection(version: "2", timezone: "Europe/Rome", sessions: [])
        restarted.perform(.fetch, at: 200 * SyncLoopTests.second)
        #expect(Self.files(directory) == ["mine.toml"])
        #expect(offline.given.last??.sessions == [])
    }

    @Test func aSessionTheDeviceCannotRunIsSkippedNamingItAndItsFieldTheOthersStay() throws {
        let directory = try TemporaryDirectory(prefix: "pacer-plan")
        let cloud = ScriptedCloud()
        let plans = Plans()
        let zoneSix = PlannedSession(id: "0f8e2b1c-3333-4aaa-8bbb-000000000003", date: "2026-05-10", name: "Too hot",
                                     steps: [PlanStep(type: "run", time_s: 600), PlanStep(type: "run", time_s: 600, hr_zone: 6)])
        let halfSecond = PlannedSession(id: "0f8e2b1c-4444-4aaa-8bbb-000000000004", date: "2026-05-10", name: "Half a second",
                                        steps: [PlanStep(type: "run", distance_m: 400, pace_s_per_km: [190.5, 210])])
        let escaping = PlannedSession(id: "../../etc/passwd", date: "2026-05-10", name: "Escape", steps: Self.easy.steps)
        let badDate = PlannedSession(id: "0f8e2b1c-5555-4aaa-8bbb-000000000005", date: "2026-5-1/..", name: "Bad date", steps: Self.easy.steps)
        cloud.plan = PlanSection(version: "1", timezone: "Mars/Olympus", sessions: [zoneSix, Self.intervals, halfSecond, escaping, badDate])
        var loop = Self.loop(directory, cloud, plans)
        loop.perform(.fetch, at: 0)

        #expect(Self.files(directory) == ["2026-05-10-\(Self.intervalsID).toml"])
        let plan = try #require(plans.given.last ?? nil)
        #expect(plan.sessions.map { $0.workout != nil } == [false, true, false, false, false])
        #expect(plan.timezone == "UTC")
        #expect(plans.log.contains("sync: plan: session \"Too hot\" on 2026-05-10 (\(zoneSix.id)) is skipped: sessions[0].steps[1].hr_zone: a zone from 1 to 5"), "\(plans.log)")
        #expect(plans.log.contains { $0.contains("\"Half a second\"") && $0.contains("step[1].pace") && $0.contains("190.5") }, "\(plans.log)")
        #expect(plans.log.contains { $0.contains("\"Escape\"") && $0.contains("sessions[3].id: not a lowercase UUID") }, "\(plans.log)")
        #expect(plans.log.contains { $0.contains("\"Bad date\"") && $0.contains("sessions[4].date") }, "\(plans.log)")
        #expect(plans.log.contains { $0.contains("timezone \"Mars/Olympus\" is not known here") })
        #expect(!FileManager.default.fileExists(atPath: directory.file("etc")) && !FileManager.default.fileExists(atPath: directory.path + "/../etc/passwd.toml"))
    }

    @Test func todayIsThePlansLocalDateExactlyAtMidnight() {
        // Europe/Rome is UTC+1 in November: 22:59:59.999Z is still the 26th there, 23:00Z the 27th.
        let beforeMidnight = Int64(1_795_733_999_999)  // 2026-11-26T22:59:59.999Z
        #expect(PlanCalendar.localDate(epochMs: beforeMidnight, timezone: "Europe/Rome") == "2026-11-26")
        #expect(PlanCalendar.localDate(epochMs: beforeMidnight + 1, timezone: "Europe/Rome") == "2026-11-27")
        #expect(PlanCalendar.localDate(epochMs: beforeMidnight + 1, timezone: "UTC") == "2026-11-26")
        // Summer time (UTC+2) and a zone west of UTC; an unknown zone counts as UTC.
        #expect(PlanCalendar.localDate(epochMs: 1_782_856_800_000, timezone: "Europe/Rome") == "2026-07-01")  // 2026-06-30T22:00Z
        #expect(PlanCalendar.localDate(epochMs: 1_782_856_799_999, timezone: "Europe/Rome") == "2026-06-30")
        #expect(PlanCalendar.localDate(epochMs: 1_782_864_000_000, timezone: "America/Los_Angeles") == "2026-06-30")  // 2026-07-01T00:00Z
        #expect(PlanCalendar.localDate(epochMs: 1_782_864_000_000, timezone: "Nowhere/Special") == "2026-07-01")
        #expect(PlanCalendar.isDate("2026-11-26") && PlanCalendar.isDate("2028-02-29"))
        #expect(!PlanCalendar.isDate("2026-13-01") && !PlanCalendar.isDate("2026-02-29") && !PlanCalendar.isDate("2026-1-011") && !PlanCalendar.isDate("2026-11-2x"))
    }
}
