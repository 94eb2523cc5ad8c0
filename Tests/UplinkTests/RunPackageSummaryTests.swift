import Foundation
import PacerContract
import PacerCore
import Store
import Testing
@testable import Uplink

/// The uploaded summary names the workout a run followed and, for a planned session, its id
/// (the cloud marks it done); a free run names neither; a long file name is cut to the contract's.
@Suite(.timeLimit(.minutes(10))) struct RunPackageSummaryTests {
    static let t0 = Timestamp(iso8601: "2026-05-10T07:30:00Z")!

    static func summary(following followed: FollowedWorkout?) throws -> RunSummaryBody {
        let directory = NSTemporaryDirectory() + "pacer-package-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RunStore(path: directory + "/pacer.db")
        let id = try store.beginRun(uuid: UUID().uuidString.lowercased(), startTime: Self.t0, following: followed)
        let summary = RunSummary(distance: 2000, movingTime: 600, elapsedTime: 600, averagePacePerKm: 300, maxSpeed: 4,
                                 startTime: Self.t0, endTime: Self.t0.adding(seconds: 600))
        try store.finishRun(id, summary: summary, splits: [], laps: [])
        let run = try #require(try store.run(id))
        let package = try RunPackage.make(run, samples: [], heartRate: [], zones: [])
        return try JSONDecoder().decode(RunSummaryBody.self, from: Data(package.summary))
    }

    @Test func aPlannedRunsSummaryCarriesTheSessionAndTheWorkoutsName() throws {
        let planned = try Self.summary(following: FollowedWorkout(name: "6 by 400 metres", plannedSessionID: "0f8e2b1c-1111-4aaa-8bbb-000000000001"))
        #expect(planned.planned_session_id == "0f8e2b1c-1111-4aaa-8bbb-000000000001")
        #expect(planned.workout_name == "6 by 400 metres")
        let fromFile = try Self.summary(following: FollowedWorkout(name: String(repeating: "long name ", count: 20)))
        #expect(fromFile.planned_session_id == nil)
        #expect(fromFile.workout_name?.count == PlanSteps.maxNameLength)
        let free = try Self.summary(following: nil)
        #expect(free.planned_session_id == nil && free.workout_name == nil)
    }
}
