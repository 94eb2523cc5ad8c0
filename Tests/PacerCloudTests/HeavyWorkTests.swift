import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Synchronization
import Testing

/// Bounded CPU per request, off the request path (issue #31): the map's simplification is
/// bounded for any track, even the zigzag that made Douglas–Peucker quadratic; imports and run
/// views run on a queue of their own, so `/health` answers while three such imports run; a run
/// that claims 1e8 m has a page of at most 500 splits.
@Suite("pacer-cloud: heavy work bounded and off the request path", .timeLimit(.minutes(10)))
struct HeavyWorkTests {
    /// The worst case of the recursive Douglas–Peucker: a zigzag whose amplitude grows along
    /// the track, so that the farthest point from any stretch's chord is the one next to its
    /// end; each split peeled one point, about n²/2 distance checks.
    static func zigzag(count: Int) -> [(lat: Double, lon: Double)] {
        (0..<count).map { i in
            let amplitude = 0.0005 * Double(i + 1) / Double(count)
            return (45.5 + (i % 2 == 0 ? amplitude : -amplitude), 9.2 + Double(i) * 1e-6)
        }
    }

    static func samples(_ points: [(lat: Double, lon: Double)]) -> [ChunkSample] {
        points.enumerated().map { i, point in
            ChunkSample(timeMs: Track.start + Int64(i) * 1_000, lat: point.lat, lon: point.lon, speedMps: 3, distanceM: Double(i) * 3,
                        moving: true, heartRate: nil)
        }
    }

    /// The zigzag as a GPX file, one point every `stepSeconds`.
    /// At 10 s apart the widest swing (111 m) is under the importer's 12 m/s,
    /// so that no point is dropped as a glitch.
    static func zigzagGPX(count: Int, startMs: Int64 = Track.start, stepSeconds: Int64 = 1) -> [UInt8] {
        var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
            + #"<gpx version="1.1" creator="zigzag" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"# + "\n"
        text.reserveCapacity(count * 100)
        for (i, point) in zigzag(count: count).enumerated() {
            let time = WireTime.text(milliseconds: startMs + Int64(i) * stepSeconds * 1_000)
            text += #"<trkpt lat="\#(String(format: "%.7f", point.lat))" lon="\#(String(format: "%.7f", point.lon))"><time>\#(time)</time></trkpt>"# + "\n"
        }
        text += "</trkseg></trk></gpx>\n"
        return Array(text.utf8)
    }

    // MARK: simplification

    @Test("the map's simplification of a 200,000-point zigzag stays within n + 2,000 × 10,000 distance checks (the recursion made 2 × 10^10)")
    func zigzagSimplification() {
        let count = TrackChunkFormat.maxSamplesPerRun
        let samples = Self.samples(Self.zigzag(count: count))
        // The track is the worst case: from the whole track and the next stretches down, the
        // farthest point is the one before the end, so the recursion peels one point a split.
        let origin = samples[0]
        let metresPerDegreeLon = 111_320 * cos(origin.lat * .pi / 180)
        let xy = samples.map { (x: ($0.lon - origin.lon) * metresPerDegreeLon, y: ($0.lat - origin.lat) * 110_540) }
        for last in [count - 1, count - 2, count - 3, count / 2] {
            let farthest = (1..<last).max { RunView.segmentDistance(xy[$0], xy[0], xy[last]) < RunView.segmentDistance(xy[$1], xy[0], xy[last]) }
            #expect(farthest == last - 1, "the farthest point of 0…\(last) is \(farthest ?? -1)")
        }

        var checks = 0
        let started = ContinuousClock.now
        let kept = RunView.simplify(samples, keep: RunView.maxTrackPoints, checks: &checks)
        let elapsed = ContinuousClock.now - started
        #expect(checks <= count + RunView.maxTrackPoints * RunView.maxSimplifyInput, "\(checks) distance checks")
        #expect(kept.count == RunView.maxTrackPoints)
        #expect(kept.first == 0 && kept.last == count - 1 && kept == kept.sorted())
        // A generous bound (a debug build, a busy machine): the recursion took minutes.
        #expect(elapsed < .seconds(60), "simplify took \(elapsed)")
    }

    @Test("a track longer than the simplification's input is thinned first, and keeps its corners")
    func longTrackKeepsItsCorners() {
        // 60,000 samples (16 h at 1 Hz) along three straight legs with a little noise.
        var samples: [ChunkSample] = []
        for i in 0..<60_000 {
            let (lat, lon): (Double, Double) = i < 24_000 ? (45.5 + Double(i) * 1e-5, 9.2)
                : i < 42_000 ? (45.74, 9.2 + Double(i - 24_000) * 1e-5) : (45.74 - Double(i - 42_000) * 1e-5, 9.38)
            let noise = Double((i * 7_919) % 11) * 1e-7
            samples.append(ChunkSample(timeMs: Int64(i) * 1_000, lat: lat + noise, lon: lon, speedMps: 3, distanceM: Double(i) * 1.1,
                                       moving: true, heartRate: nil))
        }
        var checks = 0
        let kept = RunView.simplify(samples, keep: RunView.maxTrackPoints, checks: &checks)
        #expect(kept.count == RunView.maxTrackPoints)
        #expect(kept.first == 0 && kept.last == 59_999 && kept == kept.sorted())
        #expect(kept.contains(24_000) && kept.contains(42_000))
        #expect(checks <= samples.count + RunView.maxTrackPoints * RunView.maxSimplifyInput)
    }

    // MARK: the queue

    final class Counts: Sendable {
        let state = Mutex((now: 0, most: 0))
    }

    @Test("the work queue runs at most its threads' jobs at once, queues up to its waiting list and refuses the rest with Busy")
    func queueBounds() async throws {
        let queue = WorkQueue(threads: 1, maxWaiting: 1)
        let gate = DispatchSemaphore(value: 0)
        let concurrent = Counts()
        let job: @Sendable () -> Int = {
            concurrent.state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            gate.wait()
            concurrent.state.withLock { $0.now -= 1 }
            return 1
        }
        async let first = queue.run(job)
        #expect(await eventually { queue.load.running == 1 })
        async let second = queue.run(job)
        #expect(await eventually { queue.load.waiting == 1 })
        // Full: refused at once, without waiting for the others.
        await #expect(throws: WorkQueue.Busy.self) { try await queue.run { 0 } }
        gate.signal()
        gate.signal()
        #expect(try await first + second == 2)
        #expect(concurrent.state.withLock { $0.most } == 1)
        // Room again once they are done.
        #expect(try await queue.run { 3 } == 3)
    }

    // MARK: splits

    @Test("a run that claims 1e8 m has a page of at most 500 splits (2 × 5e7 m steps made 100,000 rows, 8 MB)")
    func hugeDistanceSplits() async throws {
        try await Cloud.with(.sqlite) { cloud in
            let browser = Browser(cloud)
            let (token, _) = try await RunnerPageTests.runner(cloud, browser)
            let samples = [0.0, 5e7, 1e8].enumerated().map { i, distance in
                ChunkSample(timeMs: Track.start + Int64(i) * 3_600_000, lat: 45.5, lon: 9.2 + Double(i) * 1e-3, speedMps: 3, distanceM: distance,
                            moving: true, heartRate: nil)
            }
            let id = try await RunnerPageTests.upload(cloud, token: token, samples)
            let page = try await browser.get("/runs/\(id)")
            #expect(page.status == .ok)
            let rows = page.text.components(separatedBy: "<tr><td>").count - 1
            // The splits (500 of 200 km) and the five zones.
            #expect(rows <= RunView.maxSplits + 1 + 5, "\(rows) rows")
            #expect(page.text.contains("<td>200</td>") && page.text.contains("<td>100000</td>"))
            #expect(page.text.contains("Splits of 200 km"))
            #expect(page.text.utf8.count < 200_000, "the page is \(page.text.utf8.count) bytes")
            let marks = try #require(try RunnerPageTests.dataBlock(page.text)["marks"] as? [[Double]])
            #expect(marks.count <= RunView.maxSplits && marks.last?[2] == 100_000)
        }
        // A run under 500 km keeps 1 km splits.
        let view = RunView(samples: RunnerPageTests.run(meters: 3_500))
        #expect(view.splitKm == 1 && view.splits.map(\.km) == [1, 2, 3, 4])
    }

    // MARK: the live server

    /// What the import test's tasks record (a class: a Mutex is not copied into a task).
    final class Tally: Sendable {
        let done = Atomic<Int>(0)
        let probes = Mutex<[(status: Int, seconds: Double)]>([])
        let imports = Mutex<[(status: Int, seconds: Double, body: String)]>([])
    }

    /// A browser session on a live server through curl and a cookie jar.
    struct Session {
        let cloud: CloudServer
        let jar: String

        /// `timeout` bounds the wait for curl: longer than any `--max-time` in `more`.
        func fetch(_ path: String, arguments more: [String] = [], timeout: Duration = .seconds(180)) throws -> (status: Int, body: String) {
            let result = try DaemonFixture.runBlocking("/usr/bin/curl", ["-s", "-o", "-", "-w", "\n%{http_code}", "-b", jar, "-c", jar]
                                                       + more + [cloud.url + path], timeout: timeout)
            var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            let status = Int(lines.popLast() ?? "") ?? 0
            return (status, lines.joined(separator: "\n"))
        }

        func csrf(_ page: String) throws -> String {
            let body = try fetch(page).body
            guard let range = body.range(of: #"name="csrf" value=""#) else { throw FixtureError("no csrf on \(page): \(body.prefix(300))") }
            return String(body[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    @Test("/health answers within 1 s, every time, while three 200,000-point zigzag GPX imports run through the live server; each import finishes")
    func healthDuringZigzagImports() async throws {
        let cloud = try await offPool { try CloudServer() }
        defer { cloud.stop() }
        let password = "a long enough password 42"
        let added = try await DaemonFixture.run("/bin/sh", ["-c", #"printf '%s\n' "$0" | "$1" user add ann@example.org --confirmed --database "$2""#,
                                                            password, DaemonFixture.binary("pacer-cloud"), cloud.databaseURL])
        #expect(added.status == 0, "\(added.stderr)")
        let session = Session(cloud: cloud, jar: cloud.directory.file("cookies.txt"))
        let login = try await offPool {
            try session.fetch("/login", arguments: ["--data-urlencode", "csrf=\(try session.csrf("/login"))", "--data-urlencode", "email=ann@example.org",
                                                    "--data-urlencode", "password=\(password)"])
        }
        #expect(login.status == 303, "\(login.body.prefix(300))")
        let csrf = try await offPool { try session.csrf("/import") }
        // Three files, each a run of its own: a day apart (the same activity in two files is one run).
        var files: [String] = []
        for copy in 0..<3 {
            var gpx = Self.zigzagGPX(count: TrackChunkFormat.maxSamplesPerRun, startMs: Track.start + Int64(copy) * 86_400_000,
                                      stepSeconds: 10)
            gpx += Array("<!-- copy \(copy) -->\n".utf8)
            let path = cloud.directory.file("zigzag-\(copy).gpx")
            try Data(gpx).write(to: URL(fileURLWithPath: path))
            files.append(path)
        }

        let tally = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for file in files {
                group.addTask {
                    // Counted even when the fetch throws, so that the prober stops and the error
                    // surfaces (the prober polled for the rest of the time limit once).
                    defer { tally.done.add(1, ordering: .relaxed) }
                    let started = ContinuousClock.now
                    let answer = try await offPool {
                        try session.fetch("/import", arguments: ["-F", "csrf=\(csrf)", "-F", "file=@\(file);type=application/gpx+xml", "--max-time", "300"],
                                          timeout: .seconds(320))
                    }
                    let seconds = (ContinuousClock.now - started) / .seconds(1)
                    tally.imports.withLock { $0.append((answer.status, seconds, answer.body)) }
                }
            }
            group.addTask {
                // /health as a prober asks it, until the three imports have answered.
                while tally.done.load(ordering: .relaxed) < 3 {
                    let result = try await offPool {
                        try DaemonFixture.runBlocking("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "--max-time", "10",
                                                                         cloud.url + "/health"])
                    }
                    let parts = result.stdout.split(separator: " ")
                    tally.probes.withLock { $0.append((Int(parts.first ?? "") ?? 0, Double(parts.last ?? "") ?? .infinity)) }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            try await group.waitForAll()
        }
        let answered = tally.imports.withLock { $0 }
        #expect(answered.count == 3)
        for answer in answered {
            #expect(answer.status == 201, "import: \(answer.status) \(answer.body.prefix(300))")
            #expect(answer.body.contains("200000 points"))
        }
        let seen = tally.probes.withLock { $0 }
        #expect(seen.count >= 3, "only \(seen.count) probes")
        #expect(seen.allSatisfy { $0.status == 200 }, "statuses: \(Set(seen.map(\.status)))")
        let slowest = seen.map(\.seconds).max() ?? .infinity
        #expect(slowest < 1, "the slowest /health took \(slowest) s of \(seen.count)")
        print("zigzag imports: \(answered.map { String(format: "%.1f s", $0.seconds) }), /health: \(seen.count) probes, slowest \(slowest) s")

        // Each run's page: its view computed (by the queue) with a bounded map.
        for answer in answered {
            guard let range = answer.body.range(of: #"href="/runs/"#) else { continue }
            let id = String(answer.body[range.upperBound...].prefix(36))
            var page = (status: 0, body: "")
            // The figures' jobs may still fill the queue: a 503 says when to come back.
            for _ in 0..<60 {
                page = try await offPool { try session.fetch("/runs/\(id)") }
                if page.status != 503 { break }
                try await Task.sleep(for: .seconds(1))
            }
            #expect(page.status == 200, "run page: \(page.status) \(page.body.prefix(300))")
            let data = try RunnerPageTests.dataBlock(page.body)
            #expect(((data["track"] as? [Double])?.count ?? 0) == 2 * RunView.maxTrackPoints)
        }
    }
}
