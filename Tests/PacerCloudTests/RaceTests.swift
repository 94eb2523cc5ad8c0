@testable import CloudModel
import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// Races (#34): made on the web, found, entered and observed; invitation races invisible
/// without their link; organisers' powers on their own races only; devices' positions into a
/// leaderboard that spectators read, live.
@Suite("pacer-cloud: races", .timeLimit(.minutes(10)))
struct RaceTests {
    static let boundary = "pacer-race-boundary"
    static let formType = "multipart/form-data; boundary=\(boundary)"

    /// The new-race form as a browser posts it (multipart, for its GPX file).
    static func raceForm(_ fields: [String: String], csrf: String?, gpx: String? = nil) -> [UInt8] {
        var body = ""
        var fields = fields
        if let csrf { fields["csrf"] = csrf }
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        if let gpx { body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"course.gpx\"\r\n\r\n\(gpx)\r\n" }
        return Array((body + "--\(boundary)--\r\n").utf8)
    }

    static func postRace(_ cloud: Cloud, _ browser: Browser, _ fields: [String: String], gpx: String? = nil) async throws -> TestResponse {
        let csrf = Browser.csrf(in: try await browser.get("/races/new").text)
        var headers: HTTPFields = [.contentType: formType]
        headers[.cookie] = browser.cookieHeader
        return try await cloud.client.execute(uri: "/races", method: .post, headers: headers, body: ByteBuffer(bytes: raceForm(fields, csrf: csrf, gpx: gpx)))
    }

    /// A start `days` days ahead, as the form's datetime-local field (UTC accounts).
    static func start(days: Int = 7) -> String {
        RunnerCalendar("UTC").localTimeField(SessionSettings.systemClock() + Int64(days) * 86_400_000)
    }

    static let twoKm = "45.4642, 9.1900\n45.4822, 9.1900"

    /// A race straight from the store: `access`, starting `startsMs`, a 2 km course northwards.
    static func race(_ cloud: Cloud, owner: Account, name: String = "Park 2k", access: RaceAccess = .open,
                     startsMs: Int64 = SessionSettings.systemClock() + 86_400_000) async throws -> Race {
        let path = [LatLon(lat: 45.4642, lon: 9.19), LatLon(lat: 45.4822, lon: 9.19)]
        let race = Race(id: UUID().uuidString.lowercased(), ownerID: owner.id, name: name, timezone: "UTC", startsMs: startsMs, closesMs: startsMs,
                        access: access, inviteCode: Tokens.random(), waypoints: path, path: path, lengthM: try RaceRules.measured(path).get(),
                        routePlan: .straight, createdMs: 1)
        #expect(try await cloud.store.races.addRace(race, limit: RaceLimits.maxOrganisedRaces))
        return race
    }

    @Test("an organiser makes an open race on the web; anyone sees its page; runners enrol with bibs 1, 2; search finds it by name and place",
          arguments: Backend.allCases)
    func openRace(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let organiser = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, organiser, email: "olga@example.org", device: "olga-pacer")
            let made = try await Self.postRace(cloud, organiser, ["name": "Naviglio 2k", "starts": Self.start(), "access": "open",
                                                                  "waypoints": Self.twoKm, "plan": "straight"])
            #expect(made.status == .seeOther, "\(made.text.prefix(400))")
            let location = try #require(made.headers[.location])
            let id = String(location.dropFirst("/races/".count).prefix(36))
            #expect(location == "/races/\(id)/manage")
            let manage = try await organiser.get(location)
            #expect(manage.status == .ok && manage.text.contains("Manage Naviglio 2k") && manage.text.contains("Nobody has enrolled yet"))

            // Signed out: the page, its course and no enrol button but a way to log in.
            let anonymous = try await cloud.request(.get, "/races/\(id)", token: nil)
            #expect(anonymous.status == .ok && anonymous.text.contains("Naviglio 2k") && anonymous.text.contains("2.00 km"))
            #expect(anonymous.text.contains("Log in</a> to participate") && !anonymous.text.contains("action=\"/races/\(id)/enrol\""))
            #expect(anonymous.headers[.contentSecurityPolicy]?.contains("connect-src 'self'") == true)

            for (index, email) in ["ann@example.org", "bob@example.org"].enumerated() {
                let runner = Browser(cloud)
                _ = try await RunnerPageTests.runner(cloud, runner, email: email, device: "pacer-\(index)")
                let page = try await runner.get("/races/\(id)")
                #expect(page.text.contains("Participate"))
                #expect(try await runner.post("/races/\(id)/enrol", [:], formPage: "/races/\(id)").status == .seeOther)
                #expect(try await runner.get("/races/\(id)").text.contains("You run with bib <b>\(index + 1)</b>"))
                // Again: the same bib.
                #expect(try await runner.post("/races/\(id)/enrol", [:], formPage: "/races/\(id)").status == .seeOther)
                #expect(try await runner.get("/races").text.contains("you run it, bib \(index + 1)"))
            }
            #expect(try await cloud.store.races.entries(raceID: id).map(\.bib) == [1, 2])

            let byName = try await organiser.get("/races?q=naviglio").text
            #expect(byName.contains("/races/\(id)"))
            let near = try await organiser.get("/races?near=45.47,%209.19&within_km=5").text
            #expect(near.contains("/races/\(id)") && near.contains("away"))
            let far = try await organiser.get("/races?near=48.85,%202.35&within_km=5").text
            let found = far.components(separatedBy: "Find a race").last ?? ""
            #expect(!found.contains("/races/\(id)") && found.contains("No open race matches"))
            let bad = try await organiser.get("/races?near=north")
            #expect(bad.status == .badRequest && bad.text.contains("Near: a place as"))
        }
    }

    @Test("more than 10 stages, a course over 50 km, a calculated route on SQLite, a past start, a bad GPX: 400 naming the field, nothing stored",
          arguments: Backend.allCases)
    func refusals(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let organiser = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, organiser)
            let elevenStages = (0..<13).map { "45.\(4600 + $0 * 10), 9.19" }.joined(separator: "\n")
            let cases: [([String: String], String?, String)] = [
                (["name": "Too many", "starts": Self.start(), "waypoints": elevenStages, "plan": "straight"], nil, "at most 10 stages"),
                (["name": "Too long", "starts": Self.start(), "waypoints": "45.0, 9.0\n45.5, 9.0", "plan": "straight"], nil, "at most 50 km"),
                (["name": "Past", "starts": "2020-01-01T09:00", "waypoints": Self.twoKm, "plan": "straight"], nil, "Start: the start must be in the future"),
                (["name": "No time", "starts": "tomorrow", "waypoints": Self.twoKm, "plan": "straight"], nil, "Start: a date and time"),
                (["name": "", "starts": Self.start(), "waypoints": Self.twoKm, "plan": "straight"], nil, "Name: 1 to 80"),
                (["name": "One point", "starts": Self.start(), "waypoints": "45.4642, 9.19", "plan": "straight"], nil, "give the start and the arrival"),
                (["name": "Bad point", "starts": Self.start(), "waypoints": "45.4642, 9.19\n91, 9.19", "plan": "straight"], nil, "line 2"),
                (["name": "NaN", "starts": Self.start(), "waypoints": "nan, 9.19\n45.4, 9.19", "plan": "straight"], nil, "line 1"),
                (["name": "Bad GPX", "starts": Self.start(), "waypoints": Self.twoKm, "plan": "gpx"], "<kml></kml>", "File: GPX line 1"),
                (["name": "Empty GPX", "starts": Self.start(), "waypoints": Self.twoKm, "plan": "gpx"], nil, "File: choose the GPX file"),
                (["name": "Closes late", "starts": Self.start(days: 2), "closes": Self.start(days: 3), "waypoints": Self.twoKm, "plan": "straight"], nil,
                 "Registration closes: registration must close by the start"),
            ] + (backend == .sqlite ? [(["name": "Streets", "starts": Self.start(), "waypoints": Self.twoKm, "plan": "calculated"], nil,
                                        "calculated routes need the PostgreSQL store")] : [])
            for (fields, gpx, expected) in cases {
                let response = try await Self.postRace(cloud, organiser, fields, gpx: gpx)
                #expect(response.status == .badRequest, "\(fields["name"] ?? ""): \(response.status)")
                #expect(response.text.contains(expected), "\(fields["name"] ?? ""): \(response.text.prefix(2000))")
                // What was typed is kept.
                if let name = fields["name"], !name.isEmpty { #expect(response.text.contains("value=\"\(name)\"")) }
            }
            #expect(try await cloud.store.races.findRaces(name: nil, near: nil, radiusM: 1, fromMs: 0, limit: 10).isEmpty)
            #expect(try await cloud.store.races.racesOf(accountID: try #require(try await cloud.store.accounts.account(email: "ann@example.org")).account.id,
                                                       limit: 10).isEmpty)

            // A GPX course: its track, thinned, measured.
            var points = ""
            for i in 0...300 { points += "<trkpt lat=\"\(45.4642 + Double(i) * 0.00003)\" lon=\"9.19\"/>" }
            let gpx = "<?xml version=\"1.0\"?><gpx version=\"1.1\"><trk><trkseg>\(points)</trkseg></trk></gpx>"
            let made = try await Self.postRace(cloud, organiser, ["name": "From a file", "starts": Self.start(), "waypoints": "", "plan": "gpx"], gpx: gpx)
            #expect(made.status == .seeOther, "\(made.text.prefix(600))")
            let race = try #require(try await cloud.store.races.findRaces(name: "file", near: nil, radiusM: 1, fromMs: 0, limit: 1).first)
            #expect(abs(race.lengthM - 1_000) < 5 && race.path.count < 120 && race.routePlan == .gpx, "\(race.lengthM) m, \(race.path.count) points")
        }
    }

    @Test("on PostgreSQL with streets loaded, a course over the streets through the waypoints; a waypoint far from any street is a 400 naming it",
          .enabled(if: streetsInstalled, "needs osmium-tool, osm2pgrouting, postgresql-15-postgis-3 and postgresql-15-pgrouting: tools/setup installs them"))
    func calculatedCourse() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-race-streets")
        let grid = try await Grid.make(in: directory, name: "grid", ["--motorway-row", "2"])
        let url = try await Cloud.freshPostgresDatabase()
        _ = try await StreetLoader.load(DatabaseURL(url), file: grid.file)
        try await Cloud.with(.postgres, configuration: WebConfig.make(), postgresURL: url) { cloud in
            let organiser = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, organiser)
            #expect(try await organiser.get("/races/new").text.contains("value=\"calculated\">"), "the street course can be chosen")
            func line(_ point: LatLon) -> String { "\(point.lat), \(point.lon)" }
            // Along the motorway row is refused to runners: round it, 5 blocks instead of 3.
            let made = try await Self.postRace(cloud, organiser, ["name": "Streets 500", "starts": Self.start(), "plan": "calculated",
                                                                  "waypoints": line(grid.at(2, 1)) + "\n" + line(grid.at(2, 4))])
            #expect(made.status == .seeOther, "\(made.text.prefix(800))")
            let race = try #require(try await cloud.store.races.findRaces(name: "Streets", near: nil, radiusM: 1, fromMs: 0, limit: 1).first)
            #expect(race.routePlan == .calculated && abs(race.lengthM - 5 * grid.spacing) < 1, "\(race.lengthM) m")
            #expect(race.path.count > 2 && race.waypoints.count == 2)
            let far = LatLon(lat: grid.rowsLat[0] + 0.05, lon: grid.columnsLon[0])
            let refused = try await Self.postRace(cloud, organiser, ["name": "Too far", "starts": Self.start(), "plan": "calculated",
                                                                     "waypoints": line(grid.at(0, 0)) + "\n" + line(far)])
            #expect(refused.status == .badRequest && refused.text.contains("Start, stages and arrival: ") && refused.text.contains("the arrival"),
                    "\(refused.text.components(separatedBy: "<h1>").last?.prefix(1200) ?? "")")
        }
    }

    @Test("an invitation race: 404 on every page and the stream without its code, absent from search; with the link it shows and takes runners",
          arguments: Backend.allCases)
    func invitationRace(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let organiser = Browser(cloud)
            let (_, owner) = try await RunnerPageTests.runner(cloud, organiser, email: "olga@example.org", device: "olga-pacer")
            let race = try await Self.race(cloud, owner: owner, name: "Secret 2k", access: .invitation)
            let stranger = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, stranger)
            for path in ["/races/\(race.id)", "/races/\(race.id)/frame", "/races/\(race.id)/live", "/races/\(race.id)?code=wrong",
                         "/races/\(race.id)?code=\(race.inviteCode.prefix(20))"] {
                let signedOut = try await cloud.request(.get, path, token: nil)
                #expect(signedOut.status == .notFound, "\(path) signed out: \(signedOut.status)")
                #expect(try await stranger.get(path).status == .notFound, "\(path) by a stranger")
                #expect(!signedOut.text.contains("Secret"))
            }
            // The same 404 as an id no race has.
            let unknown = UUID().uuidString.lowercased()
            let noRace = try await cloud.request(.get, "/races/\(unknown)", token: nil)
            let hidden = try await cloud.request(.get, "/races/\(race.id)", token: nil)
            #expect(noRace.status == .notFound && noRace.text.replacingOccurrences(of: unknown, with: "ID") == hidden.text.replacingOccurrences(of: race.id, with: "ID"))
            #expect(!(try await stranger.get("/races?q=secret").text.contains(race.id)))
            #expect(try await stranger.post("/races/\(race.id)/enrol", [:], formPage: "/races/new").status == .notFound)
            #expect(try await stranger.post("/races/\(race.id)/observe", [:], formPage: "/races/new").status == .notFound)

            // The manage page shows the link; with it, the race shows and takes the runner.
            let link = try #require(try await organiser.get("/races/\(race.id)/manage").text.firstMatch(of: /\/races\/[0-9a-f-]{36}\?code=([A-Za-z0-9_-]+)/))
            #expect(String(link.1) == race.inviteCode)
            let page = try await stranger.get("/races/\(race.id)?code=\(race.inviteCode)")
            #expect(page.status == .ok && page.text.contains("Secret 2k") && page.text.contains("name=\"code\" value=\"\(race.inviteCode)\""))
            #expect(try await cloud.request(.get, "/races/\(race.id)/frame?code=\(race.inviteCode)", token: nil).status == .ok)
            #expect(try await stranger.post("/races/\(race.id)/enrol", ["code": race.inviteCode], formPage: "/races/\(race.id)?code=\(race.inviteCode)")
                .status == .seeOther)
            // Enrolled: the page shows without the code now.
            #expect(try await stranger.get("/races/\(race.id)").text.contains("You run with bib <b>1</b>"))
        }
    }

    @Test("an organiser of race A cannot see or touch race B; marks, corrections, co-organisers, postponing and deleting work on their own",
          arguments: Backend.allCases)
    func organisers(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let olga = Browser(cloud), pete = Browser(cloud), ann = Browser(cloud)
            let (_, olgaAccount) = try await RunnerPageTests.runner(cloud, olga, email: "olga@example.org", device: "olga-pacer")
            let (_, peteAccount) = try await RunnerPageTests.runner(cloud, pete, email: "pete@example.org", device: "pete-pacer")
            let (annToken, annAccount) = try await RunnerPageTests.runner(cloud, ann, email: "ann@example.org", device: "ann-pacer")
            let a = try await Self.race(cloud, owner: olgaAccount, name: "Race A")
            let b = try await Self.race(cloud, owner: peteAccount, name: "Race B")
            #expect(try await cloud.store.races.enrol(raceID: b.id, accountID: annAccount.id, nowMs: 1, limit: 10) == .enrolled(bib: 1))
            // Olga on B: 404 everywhere, B unchanged.
            #expect(try await olga.get("/races/\(b.id)/manage").status == .notFound)
            for (path, fields) in [("/races/\(b.id)/runners/1", ["status": "disqualified"]), ("/races/\(b.id)/postpone", ["starts": Self.start(days: 9)]),
                                   ("/races/\(b.id)/organisers", ["email": "olga@example.org"]), ("/races/\(b.id)/delete", [:])] {
                #expect(try await olga.post(path, fields, formPage: "/races/\(a.id)/manage").status == .notFound, "\(path)")
            }
            #expect(try await cloud.store.races.race(id: b.id) == b)
            #expect(try await cloud.store.races.entry(raceID: b.id, accountID: annAccount.id)?.status == .enrolled)
            #expect(try await !cloud.store.races.isOrganiser(olgaAccount.id, of: b.id))

            // Pete on B: marks Ann present, then corrects her time; bad fields name themselves.
            #expect(try await pete.post("/races/\(b.id)/runners/1", ["status": "present"], formPage: "/races/\(b.id)/manage").status == .seeOther)
            #expect(try await pete.post("/races/\(b.id)/runners/1", ["status": "present", "corrected": "1:02:03"], formPage: "/races/\(b.id)/manage")
                .status == .seeOther)
            #expect(try await cloud.store.races.entry(raceID: b.id, accountID: annAccount.id)?.correctedGunMs == 3_723_000)
            let badTime = try await pete.post("/races/\(b.id)/runners/1", ["status": "present", "corrected": "soon"], formPage: "/races/\(b.id)/manage")
            #expect(badTime.status == .badRequest && badTime.text.contains("Corrected gun time: a time like"))
            #expect(try await pete.post("/races/\(b.id)/runners/7", ["status": "present"], formPage: "/races/\(b.id)/manage").status == .notFound)
            // Olga made co-organiser by Pete: told by e-mail, and now she manages B.
            #expect(try await pete.post("/races/\(b.id)/organisers", ["email": "olga@example.org"], formPage: "/races/\(b.id)/manage").status == .ok)
            #expect(try await cloud.store.outbox.outbox().contains { $0.target == "olga@example.org" && $0.payload.contains("co-organiser of the race") })
            #expect(try await olga.get("/races/\(b.id)/manage").status == .ok)
            let unknown = try await pete.post("/races/\(b.id)/organisers", ["email": "nobody@example.org"], formPage: "/races/\(b.id)/manage")
            #expect(unknown.status == .badRequest && unknown.text.contains("no Pacer account has this address"))

            // Sue observes B (through its page; it is open): she is told of what follows too.
            let sue = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, sue, email: "sue@example.org", device: "sue-pacer")
            #expect(try await sue.post("/races/\(b.id)/observe", [:], formPage: "/races/\(b.id)").status == .seeOther)
            #expect(try await sue.get("/races/\(b.id)").text.contains("Stop observing"))
            // Postponed: everyone told by e-mail; Ann's device speaks it at its next sync.
            let mailsBefore = try await cloud.store.outbox.outbox().count
            #expect(try await olga.post("/races/\(b.id)/postpone", ["starts": Self.start(days: 14)], formPage: "/races/\(b.id)/manage").status == .ok)
            let moved = try #require(try await cloud.store.races.race(id: b.id))
            #expect(moved.startsMs > b.startsMs && moved.postponedFromMs == b.startsMs)
            let mails = try await cloud.store.outbox.outbox().dropFirst(mailsBefore)
            #expect(Set(mails.map(\.target)) == ["ann@example.org", "olga@example.org", "pete@example.org", "sue@example.org"])
            let sync = try await cloud.request(.get, "/v1/device/sync", token: annToken).object
            let notices = ((sync["sections"] as? [String: Any])?["notices"] as? [String: Any])?["items"] as? [[String: Any]] ?? []
            #expect(notices.contains { ($0["text"] as? String)?.hasPrefix("The race Race B is postponed to") == true }, "\(notices)")
            let races = ((sync["sections"] as? [String: Any])?["races"] as? [String: Any])?["races"] as? [[String: Any]] ?? []
            #expect(races.count == 1 && races.first?["bib"] as? Int == 1 && (races.first?["path"] as? [[Double]])?.count == 2)
            #expect(races.first?["starts_at"] as? String == WireTime.text(milliseconds: moved.startsMs))

            // Deleted: told, then gone with its entries.
            #expect(try await pete.post("/races/\(b.id)/delete", [:], formPage: "/races/\(b.id)/manage").status == .seeOther)
            #expect(try await cloud.store.races.race(id: b.id) == nil)
            #expect(try await cloud.store.races.entries(raceID: b.id).isEmpty)
            let after = try await cloud.request(.get, "/v1/device/sync", token: annToken).object
            let spoken = ((after["sections"] as? [String: Any])?["notices"] as? [String: Any])?["items"] as? [[String: Any]] ?? []
            #expect(spoken.contains { ($0["text"] as? String) == "The race Race B is cancelled." })
            #expect((((after["sections"] as? [String: Any])?["races"] as? [String: Any])?["races"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("deleting an account deletes the races it owns whole, and its entries, roles and positions in others'", arguments: Backend.allCases)
    func accountDeletion(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let olga = Browser(cloud), ann = Browser(cloud)
            let (_, olgaAccount) = try await RunnerPageTests.runner(cloud, olga, email: "olga@example.org", device: "olga-pacer")
            let (annToken, annAccount) = try await RunnerPageTests.runner(cloud, ann, email: "ann@example.org", device: "ann-pacer")
            let owned = try await Self.race(cloud, owner: annAccount, name: "Ann's own")
            let other = try await Self.race(cloud, owner: olgaAccount, name: "Olga's", startsMs: SessionSettings.systemClock())
            for race in [owned, other] { _ = try await cloud.store.races.enrol(raceID: race.id, accountID: annAccount.id, nowMs: 1, limit: 10) }
            _ = try await cloud.store.races.enrol(raceID: owned.id, accountID: olgaAccount.id, nowMs: 1, limit: 10)
            try await cloud.store.races.observe(raceID: other.id, accountID: annAccount.id, true)
            #expect(try await cloud.store.races.addOrganiser(raceID: other.id, accountID: annAccount.id, limit: 5) == true)
            #expect(try await Self.positions(cloud, other, token: annToken, [(10, 30)]).object["stored"] as? Int == 1)
            #expect(try await ann.post("/account/delete", ["password": AccountTests.password], formPage: "/account/delete").status == .ok)
            #expect(try await cloud.store.accounts.account(id: annAccount.id) == nil)
            #expect(try await cloud.store.races.race(id: owned.id) == nil)
            #expect(try await cloud.store.races.entries(raceID: owned.id).isEmpty)
            #expect(try await cloud.store.races.race(id: other.id) != nil)
            #expect(try await cloud.store.races.entries(raceID: other.id).isEmpty)
            #expect(try await cloud.store.races.concerned(raceID: other.id).map(\.email) == ["olga@example.org"])
            #expect(try await cloud.store.races.positions(raceID: other.id, accountID: annAccount.id, limit: 10).isEmpty)
        }
    }

    static func positions(_ cloud: Cloud, _ race: Race, token: String, _ items: [(offsetS: Int, progress: Double)], started: Int? = nil,
                          finished: Int? = nil) async throws -> TestResponse {
        var body: [String: Any] = ["positions": items.map { item -> [String: Any] in
            // Along the course northwards: latitude from the progress.
            ["time": WireTime.text(milliseconds: race.startsMs + Int64(item.offsetS) * 1_000), "lat": 45.4642 + item.progress / 111_120,
             "lon": 9.19, "progress_m": item.progress]
        }]
        if let started { body["started_at"] = WireTime.text(milliseconds: race.startsMs + Int64(started) * 1_000) }
        if let finished { body["finished_at"] = WireTime.text(milliseconds: race.startsMs + Int64(finished) * 1_000) }
        return try await cloud.json(.post, "/v1/races/\(race.id)/positions", token: token, body)
    }

    /// Waits up to 10 s for a frame that shows what `shows` looks for (frames come every
    /// period); the last frame read.
    static func frame(_ cloud: Cloud, _ race: Race, shows: ([String: Any]) -> Bool) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let frame = try await cloud.request(.get, "/races/\(race.id)/frame", token: nil).object
            if shows(frame) || ContinuousClock.now > deadline { return frame }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func leaders(_ frame: [String: Any]) -> [[String: Any]] { frame["leaders"] as? [[String: Any]] ?? [] }
    static func bibs(_ frame: [String: Any]) -> [Int] { (frame["leaders"] as? [[String: Any]] ?? []).compactMap { $0["bib"] as? Int } }

    @Test("positions rank the runners; an overtaking reorders; a backlog never moves a marker back; gun and net times; DQ stays put; spectators cannot post",
          arguments: Backend.allCases)
    func leaderboard(backend: Backend) async throws {
        var configuration = WebConfig.make()
        configuration.races.framePeriod = .milliseconds(50)
        // Statuses read anew within 100 ms: the disqualification below is seen at the next post.
        configuration.races.lookupTTL = .milliseconds(100)
        try await Cloud.with(backend, configuration: configuration) { cloud in
            let olga = Browser(cloud)
            let (_, owner) = try await RunnerPageTests.runner(cloud, olga, email: "olga@example.org", device: "olga-pacer")
            // Started ten minutes ago: its positions are within the race's hours.
            let race = try await Self.race(cloud, owner: owner, startsMs: SessionSettings.systemClock() - 600_000)
            var tokens: [String] = []
            for name in ["ann", "bob"] {
                let token = try await cloud.addDevice("\(name)-pacer")
                let account = try await Accounts.create(store: cloud.store, email: "\(name)@example.org", password: AccountTests.password,
                                                        displayName: name.capitalized, timezone: "UTC", confirmed: true, cost: AccountTests.cost)
                #expect(try await cloud.store.devices.assignDevice(name: "\(name)-pacer", accountID: account.id))
                _ = try await cloud.store.races.enrol(raceID: race.id, accountID: account.id, nowMs: 1, limit: 10)
                tokens.append(token)
            }
            // Enrolled but not present: nobody on the board yet.
            #expect(try await Self.positions(cloud, race, token: tokens[0], [(10, 30)]).status == .ok)
            var frame = try await Self.frame(cloud, race) { _ in true }
            #expect(Self.bibs(frame).isEmpty)
            for bib in [1, 2] {
                #expect(try await olga.post("/races/\(race.id)/runners/\(bib)", ["status": "present"], formPage: "/races/\(race.id)/manage").status == .seeOther)
            }
            #expect(try await Self.positions(cloud, race, token: tokens[0], [(20, 60), (25, 80)], started: 2).status == .ok)
            #expect(try await Self.positions(cloud, race, token: tokens[1], [(20, 40), (25, 50)], started: 4).status == .ok)
            frame = try await Self.frame(cloud, race) { Self.bibs($0) == [1, 2] && Self.leaders($0).last?["progress_m"] as? Double == 50 }
            #expect(Self.bibs(frame) == [1, 2], "\(frame)")
            // Bob overtakes.
            let reply = try await Self.positions(cloud, race, token: tokens[1], [(30, 95)])
            #expect(reply.status == .ok && reply.object["stored"] as? Int == 1)
            frame = try await Self.frame(cloud, race) { Self.bibs($0) == [2, 1] }
            #expect(Self.bibs(frame) == [2, 1], "\(frame)")
            let leaders = frame["leaders"] as? [[String: Any]] ?? []
            #expect(leaders.first?["gap_m"] as? Double == 0 && leaders.last?["gap_m"] as? Double == 15)
            // The place comes back to the device.
            #expect(try await Self.positions(cloud, race, token: tokens[1], [(31, 97)]).object["place"] as? Int == 1)
            // A backlog of older positions: stored, the marker stays at the newest.
            let backlog = try await Self.positions(cloud, race, token: tokens[0], [(21, 65), (22, 70), (23, 75)])
            #expect(backlog.object["stored"] as? Int == 3)
            // A resend stores nothing new.
            #expect(try await Self.positions(cloud, race, token: tokens[0], [(21, 65)]).object["stored"] as? Int == 0)
            #expect(try await cloud.store.races.entry(raceID: race.id, accountID: try #require(try await cloud.store.accounts.account(email: "ann@example.org")).account.id)?
                .progressM == 80)
            // Ann finishes: gun time from the official start, net from her own crossing.
            #expect(try await Self.positions(cloud, race, token: tokens[0], [(500, 2_000)], finished: 500).status == .ok)
            frame = try await Self.frame(cloud, race) { ($0["finished"] as? Int) == 1 }
            let first = (frame["leaders"] as? [[String: Any]] ?? []).first
            #expect(first?["bib"] as? Int == 1 && first?["gun_ms"] as? Int == 500_000 && first?["net_ms"] as? Int == 498_000, "\(frame)")
            #expect(frame["finished"] as? Int == 1)
            // Bob disqualified: last, greyed, and his marker stays.
            #expect(try await olga.post("/races/\(race.id)/runners/2", ["status": "disqualified"], formPage: "/races/\(race.id)/manage").status == .seeOther)
            // A post before the instance's copy of the statuses is renewed: taken into the history, the marker unmoved.
            #expect(try await Self.positions(cloud, race, token: tokens[1], [(39, 140)]).status == .ok)
            try await Task.sleep(for: .milliseconds(150))
            #expect(try await Self.positions(cloud, race, token: tokens[1], [(40, 150)]).object["stored"] as? Int == 0)
            frame = try await Self.frame(cloud, race) { Self.leaders($0).last?["status"] as? String == "disqualified" }
            let last = (frame["leaders"] as? [[String: Any]] ?? []).last
            #expect(last?["bib"] as? Int == 2 && last?["status"] as? String == "disqualified" && last?["place"] == nil && last?["progress_m"] as? Double == 97)
            #expect((frame["markers"] as? [[String: Any]])?.count == 2)
            // A spectator's device (its runner not enrolled) and no token: refused, nothing stored.
            let spectator = try await cloud.addDevice("sue-pacer")
            let sue = try await Accounts.create(store: cloud.store, email: "sue@example.org", password: AccountTests.password, displayName: "Sue",
                                                confirmed: true, cost: AccountTests.cost)
            #expect(try await cloud.store.devices.assignDevice(name: "sue-pacer", accountID: sue.id))
            #expect(try await Self.positions(cloud, race, token: spectator, [(50, 10)]).status == .notFound)
            #expect(try await cloud.json(.post, "/v1/races/\(race.id)/positions", token: nil, ["positions": []]).status == .unauthorized)
            #expect(try await cloud.store.races.positions(raceID: race.id, accountID: sue.id, limit: 10).isEmpty)
        }
    }

    @Test("bad position bodies are 400 naming the field: too many, out of the race's hours, NaN, beyond the course, finish before start",
          arguments: Backend.allCases)
    func badPositions(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let olga = Browser(cloud)
            let (token, owner) = try await RunnerPageTests.runner(cloud, olga, email: "olga@example.org", device: "olga-pacer")
            let race = try await Self.race(cloud, owner: owner, startsMs: SessionSettings.systemClock())
            _ = try await cloud.store.races.enrol(raceID: race.id, accountID: owner.id, nowMs: 1, limit: 10)
            let time = WireTime.text(milliseconds: race.startsMs + 60_000)
            let cases: [([String: Any], String)] = [
                (["positions": Array(repeating: ["time": time, "lat": 45.5, "lon": 9.19, "progress_m": 1.0], count: 721)], "positions"),
                (["positions": [["time": WireTime.text(milliseconds: race.startsMs - 7_200_000), "lat": 45.5, "lon": 9.19, "progress_m": 1.0]]],
                 "positions[0].time"),
                (["positions": [["time": "yesterday", "lat": 45.5, "lon": 9.19, "progress_m": 1.0]]], "positions[0].time"),
                (["positions": [["time": time, "lat": 95.0, "lon": 9.19, "progress_m": 1.0]]], "positions[0].lat"),
                (["positions": [["time": time, "lat": 45.5, "lon": 9.19, "progress_m": 70_000.0]]], "positions[0].progress_m"),
                (["positions": [["time": time, "lat": 45.5, "lon": 9.19]]], "progress_m"),
                (["positions": [], "started_at": time, "finished_at": WireTime.text(milliseconds: race.startsMs)], "finished_at"),
            ]
            for (body, field) in cases {
                let response = try await cloud.json(.post, "/v1/races/\(race.id)/positions", token: token, body)
                #expect(response.status == .badRequest && response.errorMessage.contains(field), "\(field): \(response.status) \(response.text.prefix(300))")
            }
            #expect(try await cloud.store.races.positions(raceID: race.id, accountID: owner.id, limit: 10).isEmpty)
            // An id that is no race: 404.
            #expect(try await cloud.json(.post, "/v1/races/\(UUID().uuidString.lowercased())/positions", token: token, ["positions": []]).status == .notFound)
        }
    }

    @Test("spectators' live stream sends each new frame and the followed runners' rows", arguments: Backend.allCases)
    func liveStream(backend: Backend) async throws {
        var configuration = WebConfig.make()
        configuration.races.framePeriod = .milliseconds(50)
        try await Cloud.with(backend, configuration: configuration, testing: .live) { cloud in
            let olga = Browser(cloud)
            let (token, owner) = try await RunnerPageTests.runner(cloud, olga, email: "olga@example.org", device: "olga-pacer")
            let race = try await Self.race(cloud, owner: owner, startsMs: SessionSettings.systemClock() - 60_000)
            _ = try await cloud.store.races.enrol(raceID: race.id, accountID: owner.id, nowMs: 1, limit: 10)
            #expect(try await cloud.store.races.mark(raceID: race.id, bib: 1, status: .present, correctedGunMs: nil))
            let port = try #require(cloud.client.port)
            let reader = try EventStreamReader(port: port, path: "/races/\(race.id)/live?follow=1", cookie: "")
            _ = try await offPool { reader.read(until: .now + .seconds(20)) { $0.contains(": connected") } }
            #expect(try await Self.positions(cloud, race, token: token, [(30, 120)]).status == .ok)
            // The board that shows it comes too, held back at most `boardEvery` after the one sent at connection.
            @Sendable func boardShows(_ text: String) -> Bool {
                text.components(separatedBy: "event: frame\ndata: ").dropFirst().contains { $0.prefix { $0 != "\n" }.contains("\"progress_m\":120") }
            }
            let text = try await offPool { reader.read(until: .now + .seconds(20)) { $0.contains("event: follow") && boardShows($0) } }
            #expect(text.contains("event: follow") && boardShows(text), "\(text.suffix(800))")
        }
    }
}
