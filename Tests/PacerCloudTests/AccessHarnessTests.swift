import CloudModel
import CloudStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PacerCloud
import PacerTestSupport
import Testing

/// The access harness: every route the router has must have a case here, in which another
/// account, another device's token, an expired session and no credentials each try it on the
/// owner's things and are refused, or else be declared public by its own policy. A route
/// added without its case fails `everyRouteIsCovered`. Later routes add their cases here.
@Suite("pacer-cloud: access harness (every route, four callers)", .timeLimit(.minutes(10)))
struct AccessHarnessTests {
    /// What the owner has, and the callers that are not the owner.
    struct Fixture: Sendable {
        var ownerEmail: String
        var ownerToken: String
        var ownerRun: String
        var ownerAlert: String
        var ownerSession: String
        var ownerDeviceID: String
        var ownerNotice: String
        var ownerMonitorID: String
        var inviteToken: String
        var ownerGoal: String
        var ownerPlanSession: String
        var ownerShoe: String
        /// An invitation race the owner organises and runs in (bib 1).
        var ownerRace: String
        /// Today (`YYYY-MM-DD`, the owner's zone) and tomorrow, done already: dates of the owner's session.
        var today: String
        var tomorrow: String
    }

    /// A caller trying a route; `session` is a cookie id and its CSRF token.
    struct Caller: Sendable, CustomStringConvertible {
        var description: String
        var bearer: String?
        var session: (id: String, csrf: String)?
    }

    /// A request on the owner's things. `scoped`: the route answers about the caller only, so a
    /// 2xx is no breach as long as it shows nothing of the owner's and leaves the owner's
    /// things as they were (checked after every case).
    struct Case: Sendable {
        var method: HTTPRequest.Method
        var uri: @Sendable (Fixture) -> String
        var body: @Sendable (Fixture) -> [UInt8]? = { _ in nil }
        var contentType: String? = nil
        var scoped = false
    }

    enum Rule: Sendable {
        case publicRoute
        case guarded(Case)
    }

    static func form(_ fields: [String: String]) -> [UInt8] { Array(Browser.encode(fields).utf8) }
    static let formType = "application/x-www-form-urlencoded"

    /// One per route, by Hummingbird's spelling of it ("GET /v1/runs/{run_id}").
    static let cases: [String: Rule] = [
        "GET /health": .publicRoute,
        "GET /": .publicRoute,
        "GET /a/{secret}": .publicRoute,
        "GET /s/{secret}": .publicRoute,
        "GET /signup": .publicRoute,
        "POST /signup": .publicRoute,
        "GET /confirm": .publicRoute,
        "POST /confirm": .publicRoute,
        "GET /login": .publicRoute,
        "POST /login": .publicRoute,
        "GET /reset": .publicRoute,
        "POST /reset": .publicRoute,
        "GET /reset/password": .publicRoute,
        "POST /reset/password": .publicRoute,
        "POST /v1/link": .publicRoute,
        "DELETE /v1/link": .guarded(Case(method: .delete, uri: { _ in "/v1/link" }, scoped: true)),
        "GET /devices": .guarded(Case(method: .get, uri: { _ in "/devices" }, scoped: true)),
        "POST /devices/link": .guarded(Case(method: .post, uri: { _ in "/devices/link" }, body: { _ in form([:]) }, contentType: formType,
                                            scoped: true)),
        "GET /devices/{device}/unlink": .guarded(Case(method: .get, uri: { "/devices/\($0.ownerDeviceID)/unlink" })),
        "POST /devices/{device}/unlink": .guarded(Case(
            method: .post, uri: { "/devices/\($0.ownerDeviceID)/unlink" }, body: { _ in form([:]) }, contentType: formType)),
        "GET /assets/{package}/{file}": .publicRoute,
        "PUT /v1/runs/{run_id}/chunks/{seq}": .guarded(Case(
            method: .put, uri: { "/v1/runs/\($0.ownerRun)/chunks/0" }, body: { _ in Track.chunk(Track.samples(2, from: 50)) },
            contentType: "application/x-pacer-track", scoped: true)),
        "PUT /v1/runs/{run_id}": .guarded(Case(
            method: .put, uri: { "/v1/runs/\($0.ownerRun)" },
            body: { _ in Array((try? JSONSerialization.data(withJSONObject: Track.summary(chunks: 1, distance: 1.0))) ?? Data()) },
            contentType: "application/json", scoped: true)),
        "GET /v1/runs": .guarded(Case(method: .get, uri: { _ in "/v1/runs" }, scoped: true)),
        "GET /v1/runs/{run_id}": .guarded(Case(method: .get, uri: { "/v1/runs/\($0.ownerRun)" })),
        "GET /v1/runs/{run_id}/gpx": .guarded(Case(method: .get, uri: { "/v1/runs/\($0.ownerRun)/gpx" })),
        "DELETE /v1/runs/{run_id}": .guarded(Case(method: .delete, uri: { "/v1/runs/\($0.ownerRun)" })),
        "PUT /v1/position": .guarded(Case(
            method: .put, uri: { _ in "/v1/position" },
            body: { _ in Array(#"{"time":"2026-05-10T09:00:00.000Z","lat":1.5,"lon":2.5}"#.utf8) }, contentType: "application/json", scoped: true)),
        "GET /v1/position": .guarded(Case(method: .get, uri: { _ in "/v1/position" })),
        "POST /v1/alerts": .guarded(Case(
            method: .post, uri: { _ in "/v1/alerts" },
            body: { Array((try? JSONSerialization.data(withJSONObject: AlertTests.message($0.ownerAlert, 1, type: "cancelled"))) ?? Data()) },
            contentType: "application/json", scoped: true)),
        "GET /v1/alerts": .guarded(Case(method: .get, uri: { _ in "/v1/alerts" }, scoped: true)),
        // The owner's notice, acknowledged by others: refused (404 for another device), and still pending.
        "GET /v1/device/sync": .guarded(Case(method: .get, uri: { _ in "/v1/device/sync" }, scoped: true)),
        "POST /v1/device/sync/ack": .guarded(Case(
            method: .post, uri: { _ in "/v1/device/sync/ack" }, body: { Array(#"{"notice_ids":["\#($0.ownerNotice)"]}"#.utf8) },
            contentType: "application/json")),
        "PUT /v1/device/state": .guarded(Case(
            method: .put, uri: { _ in "/v1/device/state" },
            body: { _ in Array(#"{"time":"2026-05-10T09:00:00.000Z","state":"paused","sos_monitoring":false}"#.utf8) },
            contentType: "application/json", scoped: true)),
        "GET /monitoring/accept": .publicRoute,
        "GET /monitoring": .guarded(Case(method: .get, uri: { _ in "/monitoring" }, scoped: true)),
        "POST /monitoring/invite": .guarded(Case(
            method: .post, uri: { _ in "/monitoring/invite" }, body: { _ in form(["email": "someone@example.org"]) }, contentType: formType,
            scoped: true)),
        "POST /monitoring/accept": .guarded(Case(
            method: .post, uri: { _ in "/monitoring/accept" }, body: { form(["token": $0.inviteToken]) }, contentType: formType)),
        "POST /monitoring/end": .guarded(Case(
            method: .post, uri: { _ in "/monitoring/end" }, body: { form(["monitor": $0.ownerMonitorID]) }, contentType: formType)),
        "GET /watch": .guarded(Case(method: .get, uri: { _ in "/watch" }, scoped: true)),
        "GET /watch/events": .guarded(Case(method: .get, uri: { _ in "/watch/events" }, scoped: true)),
        "POST /watch/alerts/{device}/{alert}/answer": .guarded(Case(
            method: .post, uri: { "/watch/alerts/\($0.ownerDeviceID)/\($0.ownerAlert)/answer" }, body: { _ in form(["kind": "on_my_way"]) },
            contentType: formType)),
        "POST /watch/devices/{device}/where": .guarded(Case(
            method: .post, uri: { "/watch/devices/\($0.ownerDeviceID)/where" }, body: { _ in form(["kind": "where_are_you"]) }, contentType: formType)),
        "GET /v1/device/answers": .guarded(Case(method: .get, uri: { _ in "/v1/device/answers?after=0" }, scoped: true)),
        "POST /logout": .guarded(Case(method: .post, uri: { _ in "/logout" }, body: { _ in form([:]) }, contentType: formType, scoped: true)),
        "GET /account": .guarded(Case(method: .get, uri: { _ in "/account" }, scoped: true)),
        "GET /account/delete": .guarded(Case(method: .get, uri: { _ in "/account/delete" }, scoped: true)),
        "POST /account/delete": .guarded(Case(
            method: .post, uri: { _ in "/account/delete" }, body: { _ in form(["password": AccountTests.password]) }, contentType: formType,
            scoped: true)),
        "GET /runs/{run_id}/export.gpx": .guarded(Case(method: .get, uri: { "/runs/\($0.ownerRun)/export.gpx" })),
        "GET /runs/{run_id}/export.tcx": .guarded(Case(method: .get, uri: { "/runs/\($0.ownerRun)/export.tcx" })),
        "GET /runs/{run_id}/export.fit": .guarded(Case(method: .get, uri: { "/runs/\($0.ownerRun)/export.fit" })),
        "GET /import": .guarded(Case(method: .get, uri: { _ in "/import" }, scoped: true)),
        // Another account imports into its own runs (scoped); the harness adds the caller's CSRF part.
        "POST /import": .guarded(Case(
            method: .post, uri: { _ in "/import" }, body: { _ in importBody(csrf: nil) }, contentType: importType, scoped: true)),
        "POST /account/settings": .guarded(Case(
            method: .post, uri: { _ in "/account/settings" }, body: { _ in form(["timezone": "Pacific/Auckland", "max_hr": "150"]) },
            contentType: formType, scoped: true)),
        // The list and the statistics show the caller's own runs: none of the owner's.
        "GET /runs": .guarded(Case(method: .get, uri: { _ in "/runs" }, scoped: true)),
        "GET /stats": .guarded(Case(method: .get, uri: { _ in "/stats" }, scoped: true)),
        // The calendar shows the caller's own runs: none of the owner's.
        "GET /calendar": .guarded(Case(method: .get, uri: { _ in "/calendar?month=2026-05" }, scoped: true)),
        // The export holds the caller's own account only: none of the owner's runs.
        "GET /account/export": .guarded(Case(method: .get, uri: { _ in "/account/export" }, scoped: true)),
        // Shoes: the caller's own list, and a pair of its own added; the owner's pair is 404 to others.
        "GET /shoes": .guarded(Case(method: .get, uri: { _ in "/shoes" }, scoped: true)),
        "POST /shoes": .guarded(Case(
            method: .post, uri: { _ in "/shoes" }, body: { _ in form(["name": "Borrowed", "start_km": "1"]) }, contentType: formType, scoped: true)),
        "POST /shoes/{shoe_id}": .guarded(Case(
            method: .post, uri: { "/shoes/\($0.ownerShoe)" }, body: { _ in form(["name": "taken", "start_km": "9999", "retired": "1"]) },
            contentType: formType)),
        "POST /shoes/{shoe_id}/delete": .guarded(Case(
            method: .post, uri: { "/shoes/\($0.ownerShoe)/delete" }, body: { _ in form([:]) }, contentType: formType)),
        // The heart-rate page shows the caller's own devices' heart rate only.
        "GET /heart": .guarded(Case(method: .get, uri: { _ in "/heart" }, scoped: true)),
        "GET /runs/{run_id}": .guarded(Case(method: .get, uri: { "/runs/\($0.ownerRun)" })),
        // Managing a run: another account (a monitor too) neither sees its settings nor changes,
        // shares or deletes it (the owner's run page would show any change).
        "GET /runs/{run_id}/edit": .guarded(Case(method: .get, uri: { "/runs/\($0.ownerRun)/edit" })),
        "POST /runs/{run_id}/edit": .guarded(Case(
            method: .post, uri: { "/runs/\($0.ownerRun)/edit" }, body: { _ in form(["title": "taken", "sport": "ride", "visibility": "link"]) },
            contentType: formType)),
        "GET /runs/{run_id}/delete": .guarded(Case(method: .get, uri: { "/runs/\($0.ownerRun)/delete" })),
        "POST /runs/{run_id}/delete": .guarded(Case(
            method: .post, uri: { "/runs/\($0.ownerRun)/delete" }, body: { _ in form([:]) }, contentType: formType)),
        "POST /runs/{run_id}/share": .guarded(Case(
            method: .post, uri: { "/runs/\($0.ownerRun)/share" }, body: { _ in form([:]) }, contentType: formType)),
        "POST /runs/{run_id}/share/end": .guarded(Case(
            method: .post, uri: { "/runs/\($0.ownerRun)/share/end" }, body: { _ in form([:]) }, contentType: formType)),
        "POST /goals": .guarded(Case(
            method: .post, uri: { _ in "/goals" }, body: { _ in form(["distance_km": "5", "period": "week"]) }, contentType: formType,
            scoped: true)),
        "POST /goals/{goal_id}": .guarded(Case(
            method: .post, uri: { "/goals/\($0.ownerGoal)" }, body: { _ in form(["distance_km": "1", "period": "month"]) },
            contentType: formType)),
        "POST /goals/{goal_id}/delete": .guarded(Case(
            method: .post, uri: { "/goals/\($0.ownerGoal)/delete" }, body: { _ in form([:]) }, contentType: formType)),
        // The plan pages show and change the caller's own plan; the owner's session is 404 to others.
        "GET /plan": .guarded(Case(method: .get, uri: { _ in "/plan" }, scoped: true)),
        "GET /plan/new": .guarded(Case(method: .get, uri: { _ in "/plan/new" }, scoped: true)),
        "POST /plan/sessions": .guarded(Case(
            method: .post, uri: { _ in "/plan/sessions" }, body: { planForm($0.today) }, contentType: formType, scoped: true)),
        "GET /plan/sessions/{session_id}": .guarded(Case(method: .get, uri: { "/plan/sessions/\($0.ownerPlanSession)" })),
        "POST /plan/sessions/{session_id}": .guarded(Case(
            method: .post, uri: { "/plan/sessions/\($0.ownerPlanSession)" }, body: { planForm($0.today) }, contentType: formType)),
        "POST /plan/sessions/{session_id}/delete": .guarded(Case(
            method: .post, uri: { "/plan/sessions/\($0.ownerPlanSession)/delete" }, body: { _ in form([:]) }, contentType: formType)),
        "POST /plan/sessions/{session_id}/done": .guarded(Case(
            method: .post, uri: { "/plan/sessions/\($0.ownerPlanSession)/done" }, body: { form(["date": $0.today]) }, contentType: formType)),
        "POST /plan/sessions/{session_id}/undone": .guarded(Case(
            method: .post, uri: { "/plan/sessions/\($0.ownerPlanSession)/undone" }, body: { form(["date": $0.tomorrow]) },
            contentType: formType)),
        // Races: the list and the form show the caller's own; a race made is the caller's own.
        "GET /races": .guarded(Case(method: .get, uri: { _ in "/races?q=ann" }, scoped: true)),
        "GET /races/new": .guarded(Case(method: .get, uri: { _ in "/races/new" }, scoped: true)),
        "POST /races": .guarded(Case(method: .post, uri: { _ in "/races" }, body: { raceBody(csrf: nil, day: $0.tomorrow) }, contentType: raceType,
                                     scoped: true)),
        // A race's page, frame and stream are public for an open race; the owner's invitation race is
        // 404 to all of these callers without its code (RaceTests.invitationRace checks it page by page).
        "GET /races/{race}": .publicRoute,
        "GET /races/{race}/frame": .publicRoute,
        "GET /races/{race}/live": .publicRoute,
        "POST /races/{race}/enrol": .guarded(Case(method: .post, uri: { "/races/\($0.ownerRace)/enrol" }, body: { _ in form([:]) },
                                                 contentType: formType)),
        "POST /races/{race}/withdraw": .guarded(Case(method: .post, uri: { "/races/\($0.ownerRace)/withdraw" }, body: { _ in form([:]) },
                                                    contentType: formType)),
        "POST /races/{race}/observe": .guarded(Case(method: .post, uri: { "/races/\($0.ownerRace)/observe" }, body: { _ in form([:]) },
                                                   contentType: formType)),
        "GET /races/{race}/manage": .guarded(Case(method: .get, uri: { "/races/\($0.ownerRace)/manage" })),
        "POST /races/{race}/runners/{bib}": .guarded(Case(
            method: .post, uri: { "/races/\($0.ownerRace)/runners/1" }, body: { _ in form(["status": "disqualified", "corrected": "0:01"]) },
            contentType: formType)),
        "POST /races/{race}/organisers": .guarded(Case(
            method: .post, uri: { "/races/\($0.ownerRace)/organisers" }, body: { _ in form(["email": "bob@example.org"]) }, contentType: formType)),
        "POST /races/{race}/postpone": .guarded(Case(
            method: .post, uri: { "/races/\($0.ownerRace)/postpone" }, body: { _ in form(["starts": "2099-01-01T09:00"]) }, contentType: formType)),
        "POST /races/{race}/delete": .guarded(Case(method: .post, uri: { "/races/\($0.ownerRace)/delete" }, body: { _ in form([:]) },
                                                  contentType: formType)),
        // Another device's runner is not in the race: 404, nothing stored.
        "POST /v1/races/{race_id}/positions": .guarded(Case(
            method: .post, uri: { "/v1/races/\($0.ownerRace)/positions" },
            body: { _ in Array(#"{"positions":[{"time":"2026-05-10T09:00:00.000Z","lat":45.5,"lon":9.2,"progress_m":10}]}"#.utf8) },
            contentType: "application/json")),
    ]

    static let raceBoundary = "pacer-harness-race"
    static let raceType = "multipart/form-data; boundary=\(raceBoundary)"
    /// The new-race form, a 2 km straight course starting on `day` (YYYY-MM-DD) at 23:00, with `csrf` when given.
    static func raceBody(csrf: String?, day: String) -> [UInt8] {
        var fields = ["name": "Another's race", "starts": day + "T23:00", "access": "open", "waypoints": "45.46, 9.19\n45.48, 9.19", "plan": "straight"]
        if let csrf { fields["csrf"] = csrf }
        var body = ""
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            body += "--\(raceBoundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        return Array((body + "--\(raceBoundary)--\r\n").utf8)
    }

    /// A valid session form: a 5 km run on `date`.
    static func planForm(_ date: String) -> [UInt8] {
        form(["name": "Tempo", "date": date, "step1_type": "run", "step1_end": "distance", "step1_amount": "5 km", "step1_target": "none"])
    }

    static let importBoundary = "pacer-harness-boundary"
    static let importType = "multipart/form-data; boundary=\(importBoundary)"
    /// A two-point GPX run as the import form posts it, with `csrf` when given.
    static func importBody(csrf: String?) -> [UInt8] {
        let gpx = #"<gpx><trk><trkseg><trkpt lat="45.5" lon="9.1"><time>2026-05-10T07:30:00Z</time></trkpt>"#
            + #"<trkpt lat="45.5001" lon="9.1"><time>2026-05-10T07:30:01Z</time></trkpt></trkseg></trk></gpx>"#
        var body = ""
        if let csrf { body += "--\(importBoundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(csrf)\r\n" }
        body += "--\(importBoundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"run.gpx\"\r\n\r\n\(gpx)\r\n"
        return Array((body + "--\(importBoundary)--\r\n").utf8)
    }

    /// The routes of `router` without a case, or whose case disagrees with the policy they were
    /// registered with (a case says public, the route is guarded, or the other way round).
    static func uncovered(_ router: Router<CloudRequestContext>, registry: AccessRegistry) -> [String] {
        let rules = registry.all
        return router.routes.map { AccessRegistry.key(method: $0.method, path: "\($0.path)") }.sorted().compactMap { key in
            guard let rule = rules[key] else { return "\(key): added without an access policy" }
            switch cases[key] {
            case nil: return "\(key): no access case (policy \(rule))"
            case .publicRoute where !rule.hasPrefix("public: "): return "\(key): its case says public, its policy is \(rule)"
            case .guarded where rule.hasPrefix("public: "): return "\(key): its case is guarded, its policy says \(rule)"
            default: return nil
            }
        }
    }

    static func routes(_ store: CloudStore) -> CloudRoutes {
        CloudRoutes(store: store, configuration: WebConfig.make(), linkBase: "http://127.0.0.1:8080")
    }

    @Test("every registered route has its access case, and each case's kind matches the route's policy")
    func everyRouteIsCovered() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-access")
        let routes = Self.routes(try await CloudStore.open(.sqlite(path: directory.file("cloud.db"))))
        let router = routes.router()
        #expect(router.routes.count == Self.cases.count)
        #expect(Self.uncovered(router, registry: routes.accessRegistry) == [])
        // Public routes state why, in their policy.
        for (key, rule) in routes.accessRegistry.all where rule.hasPrefix("public: ") {
            #expect(rule.count > "public: ".count + 10, "\(key): \(rule)")
        }
    }

    @Test("a route added without its case is caught")
    func missingCaseFails() async throws {
        let directory = try TemporaryDirectory(prefix: "pacer-cloud-access")
        let routes = Self.routes(try await CloudStore.open(.sqlite(path: directory.file("cloud.db"))))
        let router = routes.router()
        router.get("account/everything") { _, _ in "everything" }
        #expect(Self.uncovered(router, registry: routes.accessRegistry) == ["GET /account/everything: added without an access policy"])
    }

    @Test("another account, another device's token, an expired session and no credentials are refused on every guarded route",
          arguments: Backend.allCases)
    func everyCallerIsRefused(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make()) { cloud in
            let owner = try await Accounts.create(store: cloud.store, email: "ann@example.org", password: AccountTests.password,
                                                  displayName: "Ann", confirmed: true, cost: AccountTests.cost)
            let other = try await Accounts.create(store: cloud.store, email: "bob@example.org", password: "bob's own long password",
                                                  displayName: "Bob", confirmed: true, cost: AccountTests.cost)
            let ownerToken = try await cloud.addDevice("ann-pacer")
            #expect(try await cloud.store.devices.assignDevice(name: "ann-pacer", accountID: owner.id))
            let ownerDevice = try #require(try await cloud.store.devices.devices().first { $0.name == "ann-pacer" })
            let run = Track.runID(), alert = Track.runID()
            #expect(try await cloud.putChunk(run, 0, Track.chunk(Track.samples(5)), token: ownerToken).status == .created)
            #expect(try await cloud.json(.put, "/v1/runs/\(run)", token: ownerToken, Track.summary(chunks: 1)).status == .created)
            #expect(try await cloud.json(.put, "/v1/position", token: ownerToken,
                                         ["time": "2026-05-10T07:31:00.000Z", "lat": 45.5, "lon": 9.2]).status == .ok)
            #expect(try await cloud.json(.post, "/v1/alerts", token: ownerToken, AlertTests.message(alert, 0)).status == .created)
            #expect(try await cloud.json(.put, "/v1/device/state", token: ownerToken,
                                         ["time": "2026-05-10T07:31:00.000Z", "state": "recording", "sos_monitoring": true,
                                          "in_private_place": true]).status == .ok)
            let notice = try #require(try await Notices.send(store: cloud.store, to: "ann-pacer", text: "for Ann only").first)
            let now = SessionSettings.systemClock()
            func session(_ account: Account, ageMs: Int64) async throws -> (id: String, csrf: String) {
                let id = Tokens.random(), csrf = Tokens.random()
                try await cloud.store.accounts.addSession(StoredSession(idHash: Tokens.hash(id), accountID: account.id, csrf: csrf,
                                                               createdMs: now - ageMs, seenMs: now - ageMs))
                return (id, csrf)
            }
            let goal = Goal(id: Track.runID(), accountID: owner.id, period: .week, distanceM: 20_000)
            let shoe = Shoe(id: Track.runID(), accountID: owner.id, name: "Ann's trainers", startM: 100_000, remindM: 700_000, retired: false, createdMs: 1)
            #expect(try await cloud.store.shoes.addShoe(shoe, limit: Shoe.maxPerAccount))
            #expect(try await cloud.store.plans.addGoal(goal))
            let racePath = [LatLon(lat: 45.46, lon: 9.19), LatLon(lat: 45.48, lon: 9.19)]
            let race = Race(id: Track.runID(), ownerID: owner.id, name: "Ann's invitation race", timezone: "UTC", startsMs: now + 3_600_000,
                            closesMs: now + 3_600_000, access: .invitation, inviteCode: Tokens.random(), waypoints: racePath, path: racePath,
                            lengthM: RaceRules.length(of: racePath), routePlan: .straight, createdMs: now)
            #expect(try await cloud.store.races.addRace(race, limit: RaceLimits.maxOrganisedRaces))
            #expect(try await cloud.store.races.enrol(raceID: race.id, accountID: owner.id, nowMs: now, limit: 10) == .enrolled(bib: 1))
            // Every day for a week from today; tomorrow's done already.
            let today = PlanDates.day(atMs: now, timezone: owner.timezone)
            let planned = PlanSession(id: Track.runID(), accountID: owner.id, name: "Ann's intervals", stepsJSON: #"[{"distance_m":400,"type":"run"}]"#,
                                      startDate: PlanDates.text(today), weekdays: 0b111_1111, weeks: 1)
            #expect(try await cloud.store.plans.addPlanSession(planned, limit: PlanSession.maxPerAccount))
            #expect(try await cloud.store.plans.markPlanDone(PlanDone(sessionID: planned.id, date: PlanDates.text(today + 1), accountID: owner.id, doneMs: now)))
            // Mona watches over Ann; Ann has invited one more person.
            let mona = try await Accounts.create(store: cloud.store, email: "mona@example.org", password: "mona's own long password",
                                                 displayName: "Mona", confirmed: true, cost: AccountTests.cost)
            let monaInvite = Tokens.random(), inviteToken = Tokens.random()
            for (token, email) in [(monaInvite, mona.email), (inviteToken, "nina@example.org")] {
                try await cloud.store.monitoring.addMonitorInvite(
                    MonitorInvite(hash: Tokens.hash(token), runnerID: owner.id, email: email, createdMs: now, expiresMs: now + 3_600_000),
                    mail: OutboxMail(to: email, payload: #"{"from":"pacer@example.org","subject":"Invitation","text":"-","to":"\#(email)"}"#))
            }
            #expect(try await cloud.store.monitoring.acceptMonitorInvite(hash: Tokens.hash(monaInvite), monitorID: mona.id, nowMs: now) == owner.id)
            let fixture = Fixture(ownerEmail: owner.email, ownerToken: ownerToken, ownerRun: run, ownerAlert: alert,
                                  ownerSession: try await session(owner, ageMs: 0).id, ownerDeviceID: ownerDevice.id,
                                  ownerNotice: notice.id, ownerMonitorID: mona.id, inviteToken: inviteToken,
                                  ownerGoal: goal.id, ownerPlanSession: planned.id, ownerShoe: shoe.id, ownerRace: race.id, today: PlanDates.text(today),
                                  tomorrow: PlanDates.text(today + 1))

            /// What the owner sees of their things; the same before and after every attack.
            func ownerView() async throws -> [String] {
                var view: [String] = []
                for path in ["/v1/runs/\(run)", "/v1/position", "/v1/alerts", "/v1/runs", "/v1/device/sync"] {
                    view.append(try await cloud.request(.get, path, token: ownerToken).text)
                }
                for path in ["/account", "/runs", "/runs/\(run)", "/stats"] {
                    let page = try await cloud.request(.get, path, token: nil, headers: [.cookie: "pacer_session=\(fixture.ownerSession)"])
                    view.append("\(page.status) " + page.text)
                }
                view.append(try await cloud.store.plans.goals(accountID: owner.id).map { "\($0.id) \($0.period) \($0.distanceM)" }.joined())
                view.append(String(describing: try await cloud.store.accounts.account(id: owner.id)))
                let ownerDevice = try #require(try await cloud.store.devices.devices().first { $0.name == "ann-pacer" })
                view.append(try await cloud.store.sync.deviceState(device: ownerDevice.id)?.json ?? "no state")
                let monitoring = [
                    try await cloud.store.monitoring.monitors(runnerID: owner.id).map(\.email).joined(separator: ","),
                    String(try await cloud.store.monitoring.monitorInvites(runnerID: owner.id, nowMs: now).count),
                    String(try await cloud.store.monitoring.alertAnswers(device: ownerDevice.id, after: 0, limit: 100).count),
                ]
                view.append(monitoring.joined(separator: " "))
                view.append(String(try await cloud.store.accounts.accounts().count))
                let plan = try await cloud.store.plans.planOccurrences(accountID: owner.id, from: today - 7, through: today + 14)
                view.append(plan.map { "\($0.id) \($0.session.name) \($0.session.stepsJSON) done: \($0.done?.doneMs ?? 0)" }.joined(separator: ", "))
                let planPage = try await cloud.request(.get, "/plan", token: nil, headers: [.cookie: "pacer_session=\(fixture.ownerSession)"])
                view.append("\(planPage.status) " + planPage.text)
                // The owner's race: its manage page, its runners, organisers, observers and positions.
                let manage = try await cloud.request(.get, "/races/\(race.id)/manage", token: nil, headers: [.cookie: "pacer_session=\(fixture.ownerSession)"])
                view.append("\(manage.status) " + manage.text)
                view.append(String(describing: try await cloud.store.races.race(id: race.id)))
                view.append(String(describing: try await cloud.store.races.entries(raceID: race.id)))
                view.append(try await cloud.store.races.concerned(raceID: race.id).map(\.email).joined(separator: ","))
                view.append(String(describing: try await cloud.store.races.positions(raceID: race.id, accountID: owner.id, limit: 10).map(\.tMs)))
                // The owner's shoes, before the devices (the last line is the device's).
                view.append(String(describing: try await cloud.store.shoes.shoes(accountID: owner.id)))
                view += try await cloud.store.devices.devices().filter { $0.accountID == owner.id }.map { "\($0.name) revoked: \($0.revoked)" }
                return view
            }
            let before = try await ownerView()
            #expect(before[13] == "3" && before[5].contains("ann@example.org") && before[4].contains("for Ann only")
                    && before[12] == "mona@example.org 1 0" && before.last == "ann-pacer revoked: false")
            // The owner sees their run in the list, its page, and their goal.
            #expect(before[6].hasPrefix("200 ") && before[6].contains("/runs/\(run)"))
            #expect(before[7].hasPrefix("200 ") && before[7].contains("run-data"))
            #expect(before[8].hasPrefix("200 ") && before[8].contains("/goals/\(goal.id)"))
            // The owner's plan: 7 dates, tomorrow done, on the plan page and (6 not done) in the device's sync.
            #expect(before[14].components(separatedBy: "Ann's intervals").count - 1 == 7 && before[14].contains("done: \(now)"))
            #expect(before[15].hasPrefix("200 ") && before[15].contains("/plan/sessions/\(planned.id)/undone"))
            #expect(before[4].components(separatedBy: "Ann's intervals").count - 1 == 6)
            #expect(before[before.count - 2].contains("trainers") && before[before.count - 2].contains("700000"), "the owner's shoes are in the view")
            #expect(before[16].hasPrefix("200 ") && before[16].contains("invitation race</h1>") && before[18].contains("bib: 1"),
                    "the owner's race is in the view")

            for (index, (key, rule)) in Self.cases.sorted(by: { $0.key < $1.key }).enumerated() {
                guard case .guarded(let item) = rule else { continue }
                // Another account's device, new per case: one case (DELETE /v1/link) revokes its token.
                let otherName = "bob-pacer-\(index)"
                let otherToken = try await cloud.addDevice(otherName)
                #expect(try await cloud.store.devices.assignDevice(name: otherName, accountID: other.id))
                // Fresh sessions per case: a log-out by one case must not disarm the next.
                let callers = [
                    Caller(description: "no credentials"),
                    Caller(description: "another device's token", bearer: otherToken),
                    Caller(description: "an expired session", session: try await session(owner, ageMs: 13 * 3_600_000)),
                    Caller(description: "another account", session: try await session(other, ageMs: 0)),
                ]
                for caller in callers {
                    var headers: HTTPFields = [:]
                    if let type = item.contentType { headers[.contentType] = type }
                    if let bearer = caller.bearer { headers[.authorization] = "Bearer \(bearer)" }
                    var body = item.body(fixture)
                    if let session = caller.session {
                        headers[.cookie] = "pacer_session=\(session.id)"
                        // The caller's own valid CSRF token: the policy, not the CSRF check, must refuse.
                        if item.contentType == Self.formType {
                            body = Array((String(decoding: body ?? [], as: UTF8.self) + "&csrf=\(session.csrf)").utf8)
                        } else if item.contentType == Self.importType {
                            body = Self.importBody(csrf: session.csrf)
                        } else if item.contentType == Self.raceType {
                            body = Self.raceBody(csrf: session.csrf, day: fixture.tomorrow)
                        }
                    }
                    let response = try await cloud.client.execute(uri: item.uri(fixture), method: item.method, headers: headers,
                                                                  body: body.map { ByteBuffer(bytes: $0) })
                    let status = response.status.code
                    let refused = [401, 403, 404].contains(status)
                    // The ids in the path are the caller's own choice (a device names its runs): a scoped
                    // answer may echo them; it may not show the owner's address or device.
                    let harmless = item.scoped && status < 400 && !response.text.contains(fixture.ownerEmail)
                        && !response.text.contains("ann-pacer") && !response.text.contains("for Ann only")
                        && !response.text.contains("private place") && !response.text.contains("trail")
                    #expect(refused || harmless, "\(key) by \(caller): \(status) \(response.text.prefix(300))")
                    #expect(status < 500, "\(key) by \(caller): \(status)")
                    let changed = zip(before, try await ownerView()).filter { $0 != $1 }.map { "\($0.prefix(300)) -> \($1.prefix(300))" }
                    #expect(changed.isEmpty, "\(key) by \(caller) changed what the owner sees: \(changed)")
                }
            }
        }
    }
}
