import Foundation
import PacerContract
import PacerTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Race mode end to end (#34), nothing mocked: a real pacer-cloud with a race whose course is
/// the sim route's truth, its runner's account linked to pacerd and enrolled (and marked
/// present by the organiser, herself); `pacerctl race start`; real gpsd (gpsfake) playing the
/// route fast, its times moved to the race's start; the cloud stopped for a stretch of the race
/// and started again on the same port. The leaderboard (`/races/{id}/frame`) shows the runner's
/// progress, then the backlog of the outage, then gun and net time within a second of the truth.
@Suite(.serialized, .enabled(if: DaemonFixture.hasSharedData, "needs ../shared/data/sim beside the repository"), .timeLimit(.minutes(10)))
struct RaceModeDaemonTests {
    static let route = "city-10k-1"

    struct Truth: Decodable {
        struct Summary: Decodable { var start: String }
        struct Sample: Decodable {
            var t: Double
            var lat: Double
            var lon: Double
            var s: Double
            var speed: Double
        }
        var summary: Summary
        var samples: [Sample]

        /// When the runner set off and arrived (seconds from the truth's start), as RaceReplayTests reads them.
        var startAndFinish: (start: Double, finish: Double) {
            let set = samples.firstIndex { $0.s > 0 }!
            let end = samples.lastIndex { $0.s < samples[samples.count - 1].s }!
            return (samples[set].t - samples[set].s / samples[set].speed,
                    samples[end].t + (samples[samples.count - 1].s - samples[end].s) / samples[end].speed)
        }

        /// The truth's path, consecutive equal points dropped.
        var path: [(Double, Double)] {
            var points: [(Double, Double)] = []
            for sample in samples where points.last.map({ $0 != (sample.lat, sample.lon) }) ?? true { points.append((sample.lat, sample.lon)) }
            return points
        }

        /// The course as a GPX track.
        var gpx: String {
            let points = path
            let track = points.map { #"<trkpt lat="\#($0.0)" lon="\#($0.1)"></trkpt>"# }.joined(separator: "\n")
            return #"<?xml version="1.0" encoding="UTF-8"?><gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>course</name><trkseg>"#
                + track + "</trkseg></trk></gpx>\n"
        }
    }

    /// The receiver log with every time moved by `offset` whole seconds (RMC's date too), the
    /// checksums made again; other sentences as they are.
    static func shifted(_ text: String, by offset: Int) -> String {
        let utc = TimeZone(identifier: "UTC")!
        let stamp = DateFormatter()
        stamp.locale = Locale(identifier: "en_US_POSIX")
        stamp.timeZone = utc
        stamp.dateFormat = "ddMMyyHHmmss"
        var lines: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            guard line.hasPrefix("$"), let star = line.lastIndex(of: "*") else { lines.append(String(line)); continue }
            var fields = line[line.index(after: line.startIndex)..<star].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            func moved(_ time: String, date: String) -> (time: String, date: String) {
                let whole = String(time.prefix(6)), fraction = String(time.dropFirst(6))
                let instant = stamp.date(from: date + whole)!.addingTimeInterval(Double(offset))
                let text = stamp.string(from: instant)
                return (String(text.dropFirst(6)) + fraction, String(text.prefix(6)))
            }
            if fields[0].hasSuffix("RMC"), fields.count > 9 {
                (fields[1], fields[9]) = moved(fields[1], date: fields[9])
            } else if fields[0].hasSuffix("GGA"), fields.count > 1, !fields[1].isEmpty {
                fields[1] = moved(fields[1], date: "010100").time
            } else {
                lines.append(String(line))
                continue
            }
            lines.append(NMEALog.sentence(fields.joined(separator: ",")))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// The race's frame as a spectator reads it: the runner's row (the leader's: the only runner).
    static func row(_ cloud: CloudServer, race: String) -> [String: Any]? {
        guard let (status, body) = try? CloudServer.get(cloud.url + "/races/\(race)/frame", token: nil), status == 200,
              let frame = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        return (frame["leaders"] as? [[String: Any]])?.first
    }

    static func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    @Test func aRaceFromTheStartLineToTheLeaderboardThroughAnOutage() async throws {
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: DaemonFixture.sharedData + "/sim/\(Self.route).truth.json")))
        let cloud = try await offPool { try CloudServer() }
        let password = "a long enough password 42"
        let added = try await DaemonFixture.run("/bin/sh", ["-c", #"printf '%s\n' "$0" | "$1" user add ann@example.org --display-name Ann --confirmed --database "$2""#,
                                                            password, DaemonFixture.binary("pacer-cloud"), cloud.databaseURL])
        #expect(added.status == 0, "\(added.stderr)")
        let pages = CloudLinkTests.PageSession(cloud: cloud, jar: cloud.directory.file("cookies.txt"))
        let login = try await offPool { try pages.submit("/login", from: "/login", ["email": "ann@example.org", "password": password]) }
        #expect(login.status == 303, "\(login.body.prefix(300))")

        // The race starts at the first whole minute at least 90 s from now (the form takes
        // minutes, in the account's zone, UTC); the sim's first epoch is moved there.
        let startsS = (Int(Date().timeIntervalSince1970) + 90 + 59) / 60 * 60
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm"
        let starts = formatter.string(from: Date(timeIntervalSince1970: Double(startsS)))
        let truthStartS = Int(ISO8601DateFormatter().date(from: truth.summary.start)!.timeIntervalSince1970)
        let gpxPath = cloud.directory.file("course.gpx")
        try truth.gpx.write(toFile: gpxPath, atomically: true, encoding: .utf8)
        let created = try await offPool { () throws -> (Int, String) in
            let form = try pages.fetch("/races/new").body
            guard let range = form.range(of: #"name="csrf" value=""#) else { throw FixtureError("no csrf on /races/new") }
            let csrf = String(form[range.upperBound...].prefix { $0 != "\"" })
            let result = try DaemonFixture.runBlocking("/usr/bin/curl", [
                "-s", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", "-b", pages.jar, "-c", pages.jar,
                "-F", "csrf=\(csrf)", "-F", "name=City 10k", "-F", "starts=\(starts)", "-F", "plan=gpx", "-F", "access=open",
                "-F", "file=@\(gpxPath);filename=course.gpx", cloud.url + "/races",
            ])
            let parts = result.stdout.split(separator: " ")
            return (Int(parts.first ?? "") ?? 0, parts.count > 1 ? String(parts[1]) : "")
        }
        #expect(created.0 == 303, "the race is made: \(created)")
        let parts = created.1.split(separator: "/").map(String.init)
        let race = try #require(parts.firstIndex(of: "races").flatMap { $0 + 1 < parts.count ? parts[$0 + 1] : nil }, "\(created)")
        let enrolled = try await offPool { try pages.submit("/races/\(race)/enrol", from: "/races/\(race)") }
        #expect(enrolled.status == 303, "\(enrolled.body.prefix(300))")
        let present = try await offPool { try pages.submit("/races/\(race)/runners/1", from: "/races/\(race)/manage", ["status": "present"]) }
        #expect(present.status == 303, "\(present.body.prefix(300))")
        let code = try await offPool { try pages.newCode() }

        // The device: gpsd playing the route from the race's start, held until released.
        let log = cloud.directory.file("\(Self.route)-moved.nmea")
        let nmea = try String(contentsOfFile: DaemonFixture.sharedData + "/sim/\(Self.route).nmea", encoding: .utf8)
        try NMEALog.write(Self.shifted(nmea, by: startsS - truthStartS), to: log)
        let sentences = nmea.split(whereSeparator: \.isNewline).count
        let fake = try GPSFake(log: log, options: .init(cycle: 0, holdUntilReleased: true))
        try await fake.start()
        let daemon = try DaemonFixture(gpsPort: fake.port)
        defer {
            daemon.cleanUp()
            _ = cloud.stop()
        }
        try daemon.writeConfig("""
            [voice]
            output = "wav"
            wav_dir = "\(daemon.directory.file("speech"))"
            [upload]
            allow_http = true
            [race]
            position_every_s = 5
            """)
        try await daemon.start()
        try await daemon.waitForStatus { $0["gps"] as? String == "no_fix" }
        let linked = try await daemon.ctl("cloud", "link", cloud.url, code)
        #expect(linked.status == 0, "\(linked.stderr)")
        let synced = try await daemon.ctl("sync")
        #expect(synced.status == 0, "\(synced.stderr)")
        let listed = try await daemon.ctl("race")
        #expect(listed.stdout.contains("City 10k: bib 1, present, 9.9"), "\(listed.stdout)")

        let started = try await daemon.ctl("race", "start")
        #expect(started.status == 0, "\(started.stderr)")
        #expect(started.stdout.contains("race City 10k: not started"), "\(started.stdout)")

        // A third of the route: the leaderboard follows.
        #expect(fake.release(sentences: sentences / 3))
        let seen = await eventually(timeout: .seconds(60), every: .milliseconds(200)) {
            (Self.number(Self.row(cloud, race: race)?["progress_m"]) ?? 0) > 2000
        }
        #expect(seen, "the runner's progress on the leaderboard: \(String(describing: Self.row(cloud, race: race)))")

        // The cloud goes away for the next third; race mode goes on, positions wait on the device.
        _ = try await offPool { cloud.stop() }
        let before = Self.number(Self.row(cloud, race: race)?["progress_m"])
        #expect(before == nil, "the cloud is down")
        #expect(fake.release(sentences: sentences / 3))
        let waiting = try await daemon.waitForStatus(timeout: .seconds(60)) { status in
            let uploads = status["uploads"] as? [String: Any]
            return (Self.number(uploads?["race_positions"]) ?? 0) >= 150
        }
        #expect(((waiting["race"] as? [String: Any])?["progress_m"] as? NSNumber)?.doubleValue ?? 0 > 4000, "\(waiting)")

        // Back on the same port, the race going on (an epoch every 20 ms): the backlog is in the
        // cloud within 30 s of the link returning.
        try await offPool { try cloud.start() }
        let back = ContinuousClock.now
        let rest = Task.detached {
            for _ in 0..<(sentences / 9) {
                guard fake.release(sentences: 3) else { return }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let caughtUp = try await eventually(timeout: .seconds(30), every: .milliseconds(200)) {
            let uploads = try await daemon.status()["uploads"] as? [String: Any]
            return (Self.number(uploads?["race_positions"]) ?? .infinity) <= 2
                && (Self.number(Self.row(cloud, race: race)?["progress_m"]) ?? 0) > 6000
        }
        #expect(caughtUp, "the outage's backlog on the leaderboard: \(String(describing: Self.row(cloud, race: race)))")
        let caughtUpIn = ContinuousClock.now - back
        #expect(caughtUpIn < .seconds(30))

        // The rest: the finish with gun and net time, within a second of the truth.
        await rest.value
        fake.release()
        let finished = await eventually(timeout: .seconds(90), every: .milliseconds(200)) { Self.row(cloud, race: race)?["gun_ms"] != nil }
        #expect(finished, "\(String(describing: Self.row(cloud, race: race)))\n\(daemon.stderr.suffix(3000))")
        let row = try #require(Self.row(cloud, race: race))
        let (truthStart, truthFinish) = truth.startAndFinish
        let gun = try #require(Self.number(row["gun_ms"])) / 1000, net = try #require(Self.number(row["net_ms"])) / 1000
        #expect(abs(gun - truthFinish) <= 1, "gun time \(gun) s, truth \(truthFinish) s")
        #expect(abs(net - (truthFinish - truthStart)) <= 1, "net time \(net) s, truth \(truthFinish - truthStart) s")
        #expect(Self.number(row["bib"]) == 1 && Self.number(row["place"]) == 1, "\(row)")
        // No position lost: one every 5 s of the race (a fix skipped makes 6), outage or not;
        // only the route's own GPS outages (no fix, so no position) leave longer gaps.
        let stored = try await DaemonFixture.run("/usr/bin/sqlite3", [cloud.databaseURL.replacing("sqlite:", with: ""),
                                                                      "SELECT t_ms FROM race_position WHERE race_id = '\(race)' ORDER BY t_ms"])
        let times = stored.stdout.split(separator: "\n").compactMap { Int64($0) }
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        let gpsOutages = daemon.stderr.components(separatedBy: "GPS fix lost at").count - 1
        #expect(times.count >= Int(truthFinish / 5) - 3 * (gpsOutages + 1), "\(times.count) positions stored")
        #expect(gaps.filter { $0 > 7_000 }.count <= gpsOutages, "gaps: \(gaps.filter { $0 > 7_000 }), GPS outages: \(gpsOutages)")
        #expect((gaps.max() ?? .max) <= 25_000, "the largest gap between stored positions: \(gaps.max() ?? -1) ms")
        let journal = daemon.stderr
        #expect(journal.contains("race mode on: \"City 10k\" (bib 1"), "\(journal.suffix(2000))")
        #expect(journal.contains("City 10k: start line crossed at"))
        #expect(journal.contains("City 10k: finished at"))
        // What the runner heard (or what the arbiter dropped or replaced at this pace): the
        // reminder, the distances to go, the place the cloud answered, the result. The speaker
        // is behind the race at this pace: its lines come as it gets through them.
        _ = await eventually(timeout: .seconds(60), every: .milliseconds(200)) { CueLine.parse(daemon.stderr).contains { $0.kind == "race_finish" } }
        let cues = CueLine.parse(daemon.stderr)
        #expect(cues.contains { $0.kind == "notice" && $0.text.hasPrefix("The race City 10k starts in ") && $0.text.hasSuffix(", bib 1.") }, "\(cues)")
        #expect(cues.contains { $0.kind == "race_to_go" && $0.text == "1 kilometre to go." }, "\(cues)")
        #expect(cues.contains { $0.kind == "race_place" && $0.text == "You are 1st of 1." }, "\(cues)")
        let spokenGun = Int(gun.rounded()), spokenNet = Int(net.rounded())
        #expect(cues.contains { $0.kind == "race_finish" && $0.text == "Finished. Gun time \(spokenGun / 60) minutes \(spokenGun % 60) seconds, "
            + "net time \(spokenNet / 60) minutes \(spokenNet % 60) seconds." }, "\(cues.filter { $0.kind.hasPrefix("race") })")
        let status = try await daemon.status()
        let uploads = status["uploads"] as? [String: Any]
        #expect(Self.number(uploads?["race_positions_set_aside"]) == 0, "\(status)")
        print("race mode e2e: backlog on the leaderboard \(caughtUpIn) after the link returned; gun \(gun) s (truth \(truthFinish)), net \(net) s (truth \(truthFinish - truthStart))")
        #expect(try await daemon.ctl("run", "stop").status == 0)
        #expect(await daemon.stop() == .exited(0))
        await fake.stop()
    }

    /// SIGKILL mid-race: pacerd continues the run and race mode with it (its tracker brought up
    /// to date from the run's stored inputs), the positions taken before the kill still wait in
    /// the store, and the result is the truth's to the second. No cloud: the race comes from a
    /// sync written beside the store, its start the truth's.
    @Test func raceModeGoesOnAfterASigkill() async throws {
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: DaemonFixture.sharedData + "/sim/\(Self.route).truth.json")))
        let (fake, daemon) = try await DaemonFixture.onGPSFake(route: Self.route, cycle: 0.004)
        defer { daemon.cleanUp() }
        let path = truth.path.map { [$0.0, $0.1] }
        let race = DeviceRace(id: "9b2d1e7a-3c4f-4e5a-8b6c-7d8e9f0a1b2c", name: "City 10k", starts_at: truth.summary.start, bib: 7, status: "present",
                              length_m: 10_000, path: path, waypoints: [path[0], path[path.count - 1]])
        let sync = DeviceSync(sections: .init(notices: nil, profile: ProfileSection(version: "p", display_name: "Ann", timezone: "UTC", linked: true),
                                              races: RacesSection(version: "r", races: [race])))
        let cache: [String: Any] = ["fetched_at": "2026-05-10T06:00:00.000Z", "sync": try JSONSerialization.jsonObject(with: try JSONEncoder().encode(sync))]
        try JSONSerialization.data(withJSONObject: cache).write(to: URL(fileURLWithPath: daemon.directory.file("cloud-sync.json")))

        let started = try await daemon.ctl("race", "start")
        #expect(started.status == 0, "\(started.stderr)")
        fake.release()
        try await daemon.waitForStatus(timeout: .seconds(60)) { status in
            (((status["race"] as? [String: Any])?["progress_m"] as? NSNumber)?.doubleValue ?? 0) > 3000
        }
        _ = daemon.kill()
        try await daemon.start()
        let going = try await daemon.waitForStatus(timeout: .seconds(60)) { status in
            (((status["race"] as? [String: Any])?["progress_m"] as? NSNumber)?.doubleValue ?? 0) > 3000
        }
        #expect((going["race"] as? [String: Any])?["started_at"] is String, "the start crossing stands: \(going)")
        #expect(daemon.stderr.contains("race mode for \"City 10k\" goes on with the continued run"), "\(daemon.stderr)")
        let finished = try await daemon.waitForStatus(timeout: .seconds(120)) { status in (status["race"] as? [String: Any])?["finished_at"] is String }
        let result = try #require(finished["race"] as? [String: Any])
        let (truthStart, truthFinish) = truth.startAndFinish
        let gun = try #require(Self.number(result["gun_s"])), net = try #require(Self.number(result["net_s"]))
        #expect(abs(gun - truthFinish) <= 1, "gun time \(gun) s, truth \(truthFinish) s")
        #expect(abs(net - (truthFinish - truthStart)) <= 1, "net time \(net) s, truth \(truthFinish - truthStart) s")
        // No cloud: every position of the race waits in the store, those from before the kill too.
        let waiting = Self.number((finished["uploads"] as? [String: Any])?["race_positions"]) ?? 0
        #expect(waiting >= truthFinish / 5 - 40, "\(waiting) positions waiting")
        print("race mode after SIGKILL: gun \(gun) s (truth \(truthFinish)), net \(net) s (truth \(truthFinish - truthStart)), \(Int(waiting)) positions kept")
        #expect(try await daemon.ctl("run", "stop").status == 0)
        #expect(await daemon.stop() == .exited(0))
        await fake.stop()
    }
}
