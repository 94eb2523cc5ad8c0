import Foundation
import Gzip
import HTTPClient
import PacerContract
import PacerCore
import PacerTestSupport
import Store
import Synchronization
import Testing
import Uplink

/// The uplink thread against a real HTTPS server (tools/https-sink): finished runs go out in
/// order, chunk by chunk and summary last, each accepted exactly once, through 503s; a wrong
/// certificate is refused; privacy zones never leave the device.
@Suite(.serialized, .timeLimit(.minutes(10))) struct UplinkDeliveryTests {
    final class Fixture: @unchecked Sendable {
        let directory: TemporaryDirectory
        let store: RunStore
        var path: String { directory.file("pacer.db") }
        let rounds = Mutex<[UplinkRound]>([])
        let logs = Mutex<[String]>([])
        let uplink = Uplink()

        init(runs: Int, samplesPerRun: Int = 700) throws {
            directory = try TemporaryDirectory(prefix: "uplink-test")
            store = try RunStore(path: directory.file("pacer.db"))
            let origin = Coordinate(latitude: 45.47, longitude: 9.22)
            for n in 0..<runs {
                let start = UplinkPartsTests.t0.adding(seconds: Double(n) * 10_000)
                let id = try store.beginRun(uuid: UUID().uuidString.lowercased(), startTime: start)
                var batch = TrackBatch()
                for i in 0..<samplesPerRun {
                    let t = start.adding(seconds: Double(i))
                    batch.samples.append(TrackSample(time: t, coordinate: WGS84.offsetting(origin, east: Double(i) * 3, north: 0),
                                                     speed: 3, distance: Double(i) * 3, moving: true, movingTime: Double(i)))
                    batch.note(t)
                }
                try store.append(batch, runID: id, runStart: start)
                var summary = RunSummary(distance: Double(samplesPerRun) * 3, movingTime: Double(samplesPerRun), elapsedTime: Double(samplesPerRun),
                                         averagePacePerKm: 333, maxSpeed: 3)
                summary.endTime = start.adding(seconds: Double(samplesPerRun))
                try store.finishRun(id, summary: summary, splits: [], laps: [])
            }
        }

        func start(url: String, caFile: String?, zones: [PrivacyZone] = [], retry: RetrySchedule = RetrySchedule(firstSeconds: 0.05, capSeconds: 0.2)) throws {
            let settings = UplinkSettings(url: url, token: "secret", client: .init(caFile: caFile), privacyZones: zones,
                                          requestTimeoutSeconds: 5, retry: retry)
            try uplink.start(settings: settings, storePath: path, log: { _, message in self.logs.withLock { $0.append(message) } },
                             onRound: { round in self.rounds.withLock { $0.append(round) } })
        }

        func stop() async {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in uplink.put(.shutdown(done: { done.resume() })) }
        }

        var completed: [String] { rounds.withLock { $0.flatMap(\.runsCompleted) } }
    }

    @Test func runsGoOutInOrderEachAcceptedOnceThrough503s() async throws {
        let sink = try await offPool { try HTTPSSink(tls: true, rules: .init(statusSequence: [503, 503, 500, 503, 201, 503, 201, 503])) }
        defer { sink.stop() }
        let fixture = try Fixture(runs: 3)
        let uuids = try fixture.store.runs(limit: 10, offset: 0).sorted { $0.id < $1.id }.map(\.uuid)
        try fixture.start(url: sink.url, caFile: sink.caFile)
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.completed.count == 3 })
        await fixture.stop()
        #expect(fixture.completed == uuids, "oldest run first")

        let accepted = sink.requests().filter { ($0.status ?? 0) / 100 == 2 }
        // Each chunk and summary accepted exactly once, chunks in order, the summary after them.
        #expect(Set(accepted.map(\.path)).count == accepted.count, "\(accepted.map(\.path))")
        var expected: [String] = []
        for uuid in uuids { expected += ["/v1/runs/\(uuid)/chunks/0", "/v1/runs/\(uuid)/chunks/1", "/v1/runs/\(uuid)"] }
        #expect(accepted.map(\.path) == expected)
        #expect(accepted.allSatisfy { $0.method == "PUT" && $0.header("Authorization") == "Bearer secret" })
        let chunk = try #require(accepted.first)
        #expect(chunk.header("Content-Encoding") == "gzip")
        let lines = String(decoding: try Gzip.decompress(chunk.body), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 600)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(accepted[2].body)) as? [String: Any])
        #expect(summary["chunks"] as? Int == 2)
        #expect(summary["state"] as? String == "finished")
        #expect(try fixture.store.outboxCounts() == OutboxCounts())
        #expect(try fixture.store.runsWaitingForUpload() == 0)
    }

    /// The interrupted run pacerd may still continue is held back until the daemon decides
    /// (tools/soak: packaged at once, a run continued after a SIGKILL reached the server cut off
    /// at the crash, and the rest of it never did).
    @Test func aHeldRunIsNotSentUntilReleased() async throws {
        let sink = try await offPool { try HTTPSSink(tls: true) }
        defer { sink.stop() }
        let fixture = try Fixture(runs: 2)
        let runs = try fixture.store.runs(limit: 10, offset: 0).sorted { $0.id < $1.id }
        let (first, held, heldID) = (runs[0].uuid, runs[1].uuid, runs[1].id)
        let settings = UplinkSettings(url: sink.url, token: nil, client: .init(caFile: sink.caFile), requestTimeoutSeconds: 5,
                                      retry: RetrySchedule(firstSeconds: 0.05, capSeconds: 0.2))
        try fixture.uplink.start(settings: settings, storePath: fixture.path, log: { _, _ in }, holding: heldID,
                                 onRound: { round in fixture.rounds.withLock { $0.append(round) } })
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.completed == [first] })
        try await Task.sleep(for: .milliseconds(500))
        #expect(fixture.completed == [first])
        #expect(!sink.requests().contains { $0.path.contains(held) })
        #expect(try fixture.store.run(heldID)?.uploadState == .pending, "not even packaged")
        fixture.uplink.put(.releaseHeldRun(reason: "test"))
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.completed == [first, held] })
        await fixture.stop()
    }

    /// A reset mid-body, an answer slower than the request timeout, 500s: each attempt fails,
    /// the next succeeds, and the server ends up with every piece exactly once, in order.
    @Test func resetsTimeoutsAnd500sLoseNothing() async throws {
        let sink = try await offPool {
            try HTTPSSink(tls: true, rules: .init(faults: ["reset", "slow", "500", "reset", "500", "slow"], faultDelay: .seconds(3)))
        }
        defer { sink.stop() }
        let fixture = try Fixture(runs: 2)
        let uuids = try fixture.store.runs(limit: 10, offset: 0).sorted { $0.id < $1.id }.map(\.uuid)
        // A 1 s request timeout against the 3 s "slow" answers.
        let settings = UplinkSettings(url: sink.url, token: nil, client: .init(caFile: sink.caFile), requestTimeoutSeconds: 1,
                                      retry: RetrySchedule(firstSeconds: 0.05, capSeconds: 0.2))
        try fixture.uplink.start(settings: settings, storePath: fixture.path, log: { _, _ in },
                                 onRound: { round in fixture.rounds.withLock { $0.append(round) } })
        #expect(await eventually(timeout: .seconds(30), every: .milliseconds(50)) { fixture.completed.count == 2 })
        await fixture.stop()
        let failures = fixture.rounds.withLock { $0.compactMap(\.failure) }
        #expect(failures.count == 6, "\(failures)")
        #expect(failures.contains { $0.contains("timed out") }, "\(failures)")
        #expect(failures.contains { $0.contains("HTTP 500") })
        var expected: [String] = []
        for uuid in uuids { expected += ["/v1/runs/\(uuid)/chunks/0", "/v1/runs/\(uuid)/chunks/1", "/v1/runs/\(uuid)"] }
        // The slow answers were 201s the client had stopped waiting for: those pieces went again
        // (at least once), which the server's idempotency absorbs. The first 2xx of each piece:
        var firstAccepted: [String] = []
        for request in sink.requests() where (request.status ?? 0) / 100 == 2 && !firstAccepted.contains(request.path) {
            firstAccepted.append(request.path)
        }
        #expect(firstAccepted == expected)
        #expect(try fixture.store.outboxCounts() == OutboxCounts())
    }

    /// A live position queued while a backlog waits goes out before it; only the newest is kept,
    /// and never one from inside a privacy zone.
    @Test func theLivePositionGoesBeforeTheBacklog() async throws {
        let sink = try await offPool { try HTTPSSink(tls: true, rules: .init(statusSequence: [503])) }
        defer { sink.stop() }
        let fixture = try Fixture(runs: 1)
        let home = PrivacyZone(center: Coordinate(latitude: 10, longitude: 10), radiusMeters: 100)
        // A long first backoff: the positions are queued while the backlog waits.
        let settings = UplinkSettings(url: sink.url, token: nil, client: .init(caFile: sink.caFile), privacyZones: [home],
                                      requestTimeoutSeconds: 5, retry: RetrySchedule(firstSeconds: 60, capSeconds: 60))
        try fixture.uplink.start(settings: settings, storePath: fixture.path, log: { _, _ in },
                                 onRound: { round in fixture.rounds.withLock { $0.append(round) } })
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.rounds.withLock { $0.contains { $0.failure != nil } } })
        let at = UplinkPartsTests.t0
        // From inside the zone: never queued.
        fixture.uplink.put(.position(LivePosition(time: at, latitude: 10, longitude: 10, accuracyMeters: 5, speed: 0, heartRate: nil, runUUID: nil),
                                     latitude: 10, longitude: 10))
        fixture.uplink.put(.position(LivePosition(time: at, latitude: 45.5, longitude: 9.2, accuracyMeters: 5, speed: 3, heartRate: 150, runUUID: "r"),
                                     latitude: 45.5, longitude: 9.2))
        fixture.uplink.put(.wake(reason: "test"))
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.completed.count == 1 })
        await fixture.stop()
        let accepted = sink.requests().filter { ($0.status ?? 0) / 100 == 2 }
        #expect(accepted.first?.path == "/v1/position", "\(accepted.map(\.path))")
        #expect(accepted.filter { $0.path == "/v1/position" }.count == 1)
        let first = try #require(accepted.first)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any])
        #expect(body["lat"] as? Double == 45.5)
        #expect(body["heart_rate"] as? Int == 150)
    }

    @Test func aWrongCertificateIsRefusedAndNothingIsLost() async throws {
        let sink = try await offPool { try HTTPSSink(tls: true) }
        defer { sink.stop() }
        let other = try TemporaryDirectory(prefix: "other-ca")
        let wrong = try await offPool { try HTTPSSink.Certificates.make(in: other, name: "other") }
        let fixture = try Fixture(runs: 1)
        try fixture.start(url: sink.url, caFile: wrong.caFile)
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.rounds.withLock { $0.contains { $0.failure != nil } } })
        await fixture.stop()
        let failure = try #require(fixture.rounds.withLock { $0.compactMap(\.failure).first })
        #expect(failure.lowercased().contains("certificate") || failure.contains("TLS"), "\(failure)")
        #expect(fixture.logs.withLock { $0.contains { $0.contains("failed") } })
        #expect(sink.requests().isEmpty)
        let counts = try fixture.store.outboxCounts()
        #expect(counts.runs == 1 && counts.items == 3, "still waiting: \(counts)")
    }

    @Test func privacyZonesNeverLeaveTheDevice() async throws {
        let sink = try await offPool { try HTTPSSink(tls: true) }
        defer { sink.stop() }
        let fixture = try Fixture(runs: 1)
        let home = PrivacyZone(center: Coordinate(latitude: 45.47, longitude: 9.22), radiusMeters: 200)
        try fixture.start(url: sink.url, caFile: sink.caFile, zones: [home])
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.completed.count == 1 })
        await fixture.stop()
        var points = 0
        for request in sink.requests() where request.path.contains("/chunks/") {
            for line in String(decoding: try Gzip.decompress(request.body), as: UTF8.self).split(separator: "\n") {
                let f = line.split(separator: ",", omittingEmptySubsequences: false)
                #expect(!home.contains(Coordinate(latitude: Double(f[1])!, longitude: Double(f[2])!)), "\(line)")
                points += 1
            }
        }
        #expect(points == 700 - 67, "points within 200 m (3 m apart: 0...66) left out")
    }

    /// Issue 19: a chunk the server refuses for good (413) is set aside, logged once with the
    /// server's words, and the uplink goes on: the run's later chunks, its summary and the next
    /// run still reach the server. After a restart it is still aside, and never sent again.
    @Test func aChunkRefusedForGoodIsSetAsideAndTheRestGoesOn() async throws {
        let fixture = try Fixture(runs: 2, samplesPerRun: 2_500)  // 5 chunks each
        let runs = try fixture.store.runs(limit: 10, offset: 0).sorted { $0.id < $1.id }
        let (refusedRun, refusedUUID, other) = (runs[0].id, runs[0].uuid, runs[1].uuid)
        let refusedPath = "/v1/runs/\(refusedUUID)/chunks/3"
        let said = #"{"error": {"code": "too_large", "message": "more than 20,000 lines"}}"#
        let sink = try await offPool {
            try HTTPSSink(tls: true, rules: .init(body: said, pathStatus: [(suffix: refusedPath, status: 413)]))
        }
        defer { sink.stop() }
        try fixture.start(url: sink.url, caFile: sink.caFile)
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.completed.count == 2 })
        await fixture.stop()
        #expect(fixture.completed == [refusedUUID, other])

        var expected: [String] = []
        for uuid in [refusedUUID, other] {
            expected += (0..<5).map { "/v1/runs/\(uuid)/chunks/\($0)" }.filter { $0 != refusedPath } + ["/v1/runs/\(uuid)"]
        }
        #expect(sink.requests().filter { ($0.status ?? 0) / 100 == 2 }.map(\.path) == expected)
        #expect(sink.requests().filter { $0.path == refusedPath }.count == 1, "asked once, not retried")
        #expect(fixture.rounds.withLock { $0.allSatisfy { $0.failure == nil } }, "a refusal is no failure: no backoff")
        #expect(fixture.rounds.withLock { $0.flatMap(\.setAside) }.count == 1)

        let refused = try fixture.store.refusedUploads(limit: 10)
        #expect(refused.total == 1)
        let item = try #require(refused.items.first)
        #expect(item.what == .chunk(3) && item.runID == refusedRun)
        #expect(item.description.hasPrefix("run \(refusedRun) chunk 3: HTTP 413: "), "\(item.description)")
        #expect(item.description.contains("more than 20,000 lines"))
        let logged = fixture.logs.withLock { $0.filter { $0.contains("refused by the server") } }
        #expect(logged.count == 1, "\(logged)")
        #expect(logged.first?.contains("HTTP 413") == true && logged.first?.contains("more than 20,000 lines") == true)
        // Nothing waits: the refused chunk is not counted as waiting, and the run is in the cloud.
        #expect(try fixture.store.outboxCounts() == OutboxCounts())
        #expect(try fixture.store.runsWaitingForUpload() == 0)

        // A restart (a new uplink on the same store), woken twice: the refused chunk stays aside.
        let restarted = Uplink()
        let rounds = Mutex(0)
        try restarted.start(settings: UplinkSettings(url: sink.url, token: "secret", client: .init(caFile: sink.caFile), requestTimeoutSeconds: 5,
                                                     retry: RetrySchedule(firstSeconds: 0.05, capSeconds: 0.2)),
                            storePath: fixture.path, log: { _, message in fixture.logs.withLock { $0.append(message) } },
                            onRound: { _ in rounds.withLock { $0 += 1 } })
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(20)) { rounds.withLock { $0 } >= 1 })
        restarted.put(.wake(reason: "test"))
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(20)) { rounds.withLock { $0 } >= 2 })
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in restarted.put(.shutdown(done: { done.resume() })) }
        #expect(sink.requests().filter { $0.path == refusedPath }.count == 1)
        #expect(sink.requests().count == expected.count + 1, "nothing sent again")
        #expect(try fixture.store.refusedUploads(limit: 10).total == 1, "still listed for pacerctl status")
        #expect(fixture.logs.withLock { $0.filter { $0.contains("refused by the server") } }.count == 1, "logged once")
    }

    /// A 429 is retried, the same item again and no sooner than its Retry-After (capped by the
    /// schedule's cap); a wake does not cut that wait short.
    @Test func aTooManyRequestsIsRetriedAfterItsRetryAfter() async throws {
        let sink = try await offPool {
            try HTTPSSink(tls: true, rules: .init(statusSequence: [429], headers: [("Retry-After", "1")]))
        }
        defer { sink.stop() }
        let fixture = try Fixture(runs: 1)
        try fixture.start(url: sink.url, caFile: sink.caFile, retry: RetrySchedule(firstSeconds: 0.05, capSeconds: 5))
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(10)) { fixture.rounds.withLock { !$0.isEmpty } })
        fixture.uplink.put(.wake(reason: "test"))
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.completed.count == 1 })
        await fixture.stop()
        let first = try #require(fixture.rounds.withLock { $0.first })
        #expect(first.failure?.hasPrefix("HTTP 429") == true, "\(String(describing: first.failure))")
        #expect(first.retryAfterSeconds == 1, "the server's wait, not the 0.05 s backoff")
        #expect(first.serverAskedToWait)
        let requests = sink.requests()
        #expect(requests.count == 4, "\(requests.map(\.path))")
        #expect(requests[0].status == 429 && requests[1].status == 201)
        #expect(requests[0].path == requests[1].path && requests[0].path.hasSuffix("/chunks/0"), "the same item again, first")
        #expect(requests[1].time - requests[0].time >= 0.95, "not before the Retry-After, wake or not")
        #expect(try fixture.store.refusedUploads(limit: 10).total == 0)
    }

    /// A 401 (the token) is retried, never set aside: the backlog drains once the server takes it.
    @Test func anUnauthorizedIsRetried() async throws {
        let sink = try await offPool { try HTTPSSink(tls: true, rules: .init(statusSequence: [401, 401, 408])) }
        defer { sink.stop() }
        let fixture = try Fixture(runs: 1)
        try fixture.start(url: sink.url, caFile: sink.caFile)
        #expect(await eventually(timeout: .seconds(20), every: .milliseconds(50)) { fixture.completed.count == 1 })
        await fixture.stop()
        let requests = sink.requests()
        #expect(requests.map(\.status) == [401, 401, 408, 201, 201, 201])
        #expect(Set(requests.prefix(4).map(\.path)).count == 1, "the same chunk each time")
        #expect(fixture.rounds.withLock { $0.compactMap(\.failure) }.count == 3)
        #expect(try fixture.store.refusedUploads(limit: 10).total == 0)
        #expect(try fixture.store.outboxCounts() == OutboxCounts())
    }
}
