import Foundation
import PacerCore
import SQLite
import Testing
@testable import Store

/// Race positions wait in the store until the cloud took them: the newest first, the backlog
/// oldest first by race, set aside for good when the cloud refuses the race; a store from before
/// the table gets it by migration, its runs untouched.
@Suite(.timeLimit(.minutes(10))) struct RacePositionStoreTests {
    static let race = "6f1c4b6e-0000-4000-8000-000000000034"
    static let other = "6f1c4b6e-0000-4000-8000-000000000035"

    static func position(_ i: Int, race: String = race, started: Bool = true) -> RacePositionRecord {
        RacePositionRecord(raceID: race, time: runStart.adding(seconds: Double(i) * 5), latitude: 45.47 + Double(i) * 1e-4, longitude: 9.22,
                           progress: Double(i) * 15, startedAt: started ? runStart.adding(seconds: 2.5) : nil)
    }

    @Test func newestFirstThenTheBacklogOldestFirstInBatches() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        for i in 0..<10 { try store.queueRacePosition(Self.position(i)) }
        #expect(try store.racePositionCounts().waiting == 10)
        #expect(try store.racePositionCounts().setAside == 0)
        let newest = try #require(try store.newestRacePosition())
        #expect(newest.time == Self.position(9).time)
        #expect(newest.startedAt == runStart.adding(seconds: 2.5))
        #expect(newest.progress == 135)
        try store.acknowledgeRacePositions([newest.id])
        let batch = try store.oldestRacePositions(limit: 4)
        #expect(batch.map(\.time) == (0..<4).map { Self.position($0).time })
        #expect(batch.allSatisfy { $0.raceID == Self.race && $0.finishedAt == nil })
        try store.acknowledgeRacePositions(batch.map(\.id))
        #expect(try store.oldestRacePositions(limit: 720).count == 5)
        #expect(try store.racePositionCounts().waiting == 5)
        #expect(try store.racePositionCounts().setAside == 0)
    }

    @Test func aRefusedRaceIsSetAsideAndTheOtherGoesOn() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        let store = try tmp.open()
        try store.queueRacePosition(Self.position(0, race: Self.other))
        for i in 1..<4 { try store.queueRacePosition(Self.position(i)) }
        #expect(try store.oldestRacePositions(limit: 720).map(\.raceID) == [Self.other])
        try store.setAsideRacePositions(raceID: Self.other, error: "HTTP 404", at: runStart)
        #expect(try store.oldestRacePositions(limit: 720).count == 3)
        #expect(try store.racePositionCounts().waiting == 3)
        #expect(try store.racePositionCounts().setAside == 1)
        // Reopened (a restart), what waits is still there.
        let reopened = try tmp.open()
        #expect(try reopened.newestRacePosition()?.time == Self.position(3).time)
    }

    @Test func aStoreFromBeforeRaceModeIsMigrated() throws {
        let tmp = TemporaryStore()
        defer { tmp.cleanUp() }
        do {
            let queue = try DatabaseQueue(path: tmp.path)
            try Schema.migrator.migrate(queue, upTo: "v5-track-altitude")
            try queue.write { db in try db.execute(sql: "INSERT INTO run (uuid, state, start_ms) VALUES ('old', 'finished', 0)") }
        }
        let store = try tmp.open()
        #expect(try store.runs().map(\.uuid) == ["old"])
        try store.queueRacePosition(Self.position(1, started: false))
        #expect(try store.newestRacePosition()?.startedAt == nil)
    }
}
