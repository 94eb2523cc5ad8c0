import Foundation
import HTTPClient
import PacerContract
import PacerCore
import PacerTestSupport
import Store
import Synchronization
import Testing
import Uplink

/// Race mode's positions through the uplink thread against a real HTTP server (tools/https-sink):
/// the newest alone first, then the backlog oldest first in batches of at most 720, each
/// deleted once acknowledged; a race that answers 404 has its positions set aside, never
/// retried; a 503 loses nothing; the place in the reply reaches race mode.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RacePositionDeliveryTests {
    static let race = "6f1c4b6e-0000-4000-8000-000000000034"
    static let gone = "6f1c4b6e-0000-4000-8000-0000000000ff"
    static let t0 = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!

    final class Fixture: @unchecked Sendable {
        let directory: TemporaryDirectory
        let store: RunStore
        var path: String { directory.file("pacer.db") }
        let answers = Mutex<[(String, RaceAnswer)]>([])
        let logs = Mutex<[String]>([])
        let uplink = Uplink()

        init() throws {
            directory = try TemporaryDirectory(prefix: "race-uplink-test")
            store = try RunStore(path: directory.file("pacer.db"))
        }

        static func position(_ i: Int, race: String = RacePositionDeliveryTests.race) -> RacePositionRecord {
            RacePositionRecord(raceID: race, time: RacePositionDeliveryTests.t0.adding(seconds: Double(i) * 5), latitude: 45.47, longitude: 9.22 + Double(i) * 1e-5,
                               progress: Double(i) * 15, startedAt: RacePositionDeliveryTests.t0.adding(seconds: 1.5))
        }

        func start(url: String) throws {
            let settings = UplinkSettings(url: url, token: "secret", client: .init(), requestTimeoutSeconds: 5,
                                          retry: RetrySchedule(firstSeconds: 0.05, capSeconds: 0.2))
            try uplink.start(settings: settings, storePath: path, log: { _, message in self.logs.withLock { $0.append(message) } },
                             onRace: { race, answer in self.answers.withLock { $0.append((race, answer)) } })
        }

        func stop() async {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in uplink.put(.shutdown(done: { done.resume() })) }
        }

        var waiting: Int { (try? store.racePositionCounts().waiting) ?? -1 }
    }

    static func sent(_ request: HTTPSSink.Request) throws -> RacePositions {
        try JSONDecoder().decode(RacePositions.self, from: Data(request.body))
    }

    @Test func theNewestFirstThenTheBacklogInBatchesAndARefusedRaceSetAside() async throws {
        let reply = #"{"stored":1,"place":3,"of":10}"#
        let sink = try await offPool { try HTTPSSink(tls: false, rules: .init(status: 200, body: reply, pathStatus: [(suffix: "\(Self.gone)/positions", status: 404)])) }
        defer { sink.stop() }
        let fixture = try Fixture()
        // The refused race's two positions are the oldest; the race's own backlog is 1000.
        try fixture.store.queueRacePosition(Fixture.position(-10, race: Self.gone))
        try fixture.store.queueRacePosition(Fixture.position(-9, race: Self.gone))
        for i in 0..<1000 { try fixture.store.queueRacePosition(Fixture.position(i)) }
        try fixture.start(url: sink.url)
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.waiting == 0 })
        let requests = sink.requests()
        #expect(requests.map(\.path) == ["/v1/races/\(Self.race)/positions", "/v1/races/\(Self.gone)/positions",
                                         "/v1/races/\(Self.race)/positions", "/v1/races/\(Self.race)/positions"])
        #expect(requests.allSatisfy { $0.method == "POST" && $0.header("Authorization") == "Bearer secret" })
        let bodies = try requests.map(Self.sent)
        #expect(bodies[0].positions.map(\.time) == [Fixture.position(999).time.iso8601], "the newest alone, ahead of the backlog")
        #expect(bodies[0].started_at == Self.t0.adding(seconds: 1.5).iso8601)
        #expect(bodies[2].positions.count == 720)
        #expect(bodies[2].positions.first?.time == Fixture.position(0).time.iso8601, "then the backlog, oldest first")
        #expect(bodies[3].positions.count == 279)
        #expect(Set((bodies[0].positions + bodies[2].positions + bodies[3].positions).map(\.time)).count == 1000, "each once")
        #expect(try fixture.store.racePositionCounts().setAside == 2)
        // Queued later for the refused race: set aside without asking again.
        fixture.uplink.put(.racePosition(Fixture.position(1001, race: Self.gone)))
        fixture.uplink.put(.racePosition(Fixture.position(1002)))
        #expect(await eventually(timeout: .seconds(10), every: .milliseconds(50)) { sink.requests().count == 5 })
        try await Task.sleep(for: .milliseconds(300))
        await fixture.stop()
        #expect(sink.requests().count == 5)
        #expect(try fixture.store.racePositionCounts().waiting == 0)
        #expect(try fixture.store.racePositionCounts().setAside == 3)
        let answers = fixture.answers.withLock { $0 }
        #expect(answers.contains { answer in
            if answer.0 == Self.gone, case .refused(let why) = answer.1 { why.hasPrefix("HTTP 404") } else { false }
        }, "\(answers)")
        #expect(answers.filter { $0.0 == Self.race }.allSatisfy { $0.1 == .accepted(RacePositionsReply(stored: 1, place: 3, of: 10)) })
        #expect(fixture.logs.withLock { $0 }.filter { $0.contains("refuses this device's positions") }.count == 1)
    }

    @Test func aDeadLinkLosesNothing() async throws {
        let sink = try await offPool { try HTTPSSink(tls: false, rules: .init(status: 200, statusSequence: [503, 503, 500], body: #"{"stored":1}"#)) }
        defer { sink.stop() }
        let fixture = try Fixture()
        for i in 0..<30 { try fixture.store.queueRacePosition(Fixture.position(i)) }
        try fixture.start(url: sink.url)
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.waiting == 0 })
        await fixture.stop()
        let accepted = try sink.requests().filter { $0.status == 200 }.flatMap { try Self.sent($0).positions.map(\.time) }
        #expect(accepted.sorted() == (0..<30).map { Fixture.position($0).time.iso8601 })
    }
}
