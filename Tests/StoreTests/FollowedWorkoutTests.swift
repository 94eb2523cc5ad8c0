import Foundation
import SQLite
import PacerCore
import Testing
@testable import Store

/// The workout a run followed: kept with the run's row, read back by every reader, and the
/// planned sessions already run found by id; a store from before the column gets it empty.
@Suite(.timeLimit(.minutes(10))) struct FollowedWorkoutTests {
    static let sessionID = "0f8e2b1c-1111-4aaa-8bbb-000000000001"

    @Test func aRunRemembersItsWorkoutAndPlannedSession() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        let planned = try store.beginRun(uuid: "planned", startTime: runStart, following: FollowedWorkout(name: "6 by 400 metres", plannedSessionID: Self.sessionID))
        let fromFile = try store.beginRun(uuid: "file", startTime: runStart.adding(seconds: 3600), following: FollowedWorkout(name: "Fartlek"))
        let free = try store.beginRun(uuid: "free", startTime: runStart.adding(seconds: 7200))
        let reader = try tmp.open(readOnly: true)
        #expect(try reader.run(planned)?.followed == FollowedWorkout(name: "6 by 400 metres", plannedSessionID: Self.sessionID))
        #expect(try reader.run(fromFile)?.followed == FollowedWorkout(name: "Fartlek"))
        #expect(try reader.run(free)?.followed == nil)
        #expect(try reader.runs().count { $0.followed != nil } == 2)
        #expect(try reader.plannedSessionsFollowed(among: [Self.sessionID, "0f8e2b1c-2222-4aaa-8bbb-000000000002"]) == [Self.sessionID])
        #expect(try reader.plannedSessionsFollowed(among: []) == [])
        // A deleted run no longer counts: its session may be run again.
        try store.deleteRun(planned)
        #expect(try reader.plannedSessionsFollowed(among: [Self.sessionID]) == [])
    }

    @Test func aStoreFromBeforeTheColumnIsMigratedItsRunsFollowingNothing() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        do {
            let queue = try DatabaseQueue(path: tmp.path)
            try Schema.migrator.migrate(queue, upTo: "v3-outbox-refused")
            try queue.write { db in try db.execute(sql: "INSERT INTO run (uuid, state, start_ms) VALUES ('old', 'finished', 0)") }
        }
        let store = try tmp.open()
        #expect(try store.runs().map(\.followed) == [nil])
        let id = try store.beginRun(uuid: "new", startTime: runStart, following: FollowedWorkout(name: "Easy"))
        #expect(try store.run(id)?.followed?.name == "Easy")
    }
}
