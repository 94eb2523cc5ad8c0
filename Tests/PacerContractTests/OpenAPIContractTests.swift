import Foundation
import PacerContract
import PacerCore
import PacerTestSupport
import Testing

/// The contract's types against Sources/PacerCloud/openapi.yaml, both ways, through
/// tools/check-contract (PyYAML and jsonschema, which tools/setup installs): every property of
/// each schema is a field of its Swift type and every field a property, the fields always sent
/// are the schema's required ones, and the JSON (and chunk text, and times) the Swift types write
/// validates against the schemas.
@Suite(.timeLimit(.minutes(10))) struct OpenAPIContractTests {
    static let spec = DaemonFixture.repositoryRoot + "/Sources/PacerCloud/openapi.yaml"
    static let checker = DaemonFixture.repositoryRoot + "/tools/check-contract"
    static let t0 = Timestamp(milliseconds: 1_778_398_200_000)

    static let fullAlert = AlertBody(
        alert_id: "0f8e4c1a-93b2-4d6e-8a7f-1c2d3e4f5a6b", sequence: 2, type: "follow_up", test: true, kind: "hr_high",
        time: t0.iso8601, raised_at: t0.adding(seconds: -60).iso8601, first_out_of_range: t0.adding(seconds: -90).iso8601,
        device: "pacer-01", run_id: "5b0c7e2e-1d4f-4a8b-9c3d-2e1f0a9b8c7d",
        heart_rate: .init(bpm: 196, trend: "rising", trend_bpm_per_min: 4.5, min_30s: 180, max_30s: 197, threshold_bpm: 190),
        position: .init(lat: -33.8688197, lon: 151.2092955, time: t0.adding(seconds: -3).iso8601, age_s: 3.2, accuracy_m: 4.5),
        battery_percent: 71, sms: "SOS TEST: heart rate 196 bpm", wearer: "Anna Rossi")
    static let minimalAlert = AlertBody(
        alert_id: "0f8e4c1a-93b2-4d6e-8a7f-1c2d3e4f5a6b", sequence: 0, type: "alert", test: false, kind: "manual", time: t0.iso8601,
        raised_at: nil, first_out_of_range: nil, device: nil, run_id: nil, heart_rate: nil, position: nil, battery_percent: nil, sms: nil)

    /// The full alert with its nested objects' optional fields nil.
    static let alertWithMinimalParts: AlertBody = {
        var alert = fullAlert
        alert.heart_rate = .init(bpm: nil, trend: nil, trend_bpm_per_min: nil, min_30s: nil, max_30s: nil, threshold_bpm: nil)
        alert.position = .init(lat: 90, lon: -180, time: nil, age_s: nil, accuracy_m: nil)
        return alert
    }()

    static let fullLink = DeviceLinkRequest(code: "ABCD-EFGH", name: "ann-pi")
    static let minimalLink = DeviceLinkRequest(code: "abcdefgh", name: nil)
    static let grant = DeviceLinkGrant(token: "dG9rZW4tb2YtYS1kZXZpY2UtMzItYnl0ZXMtbG9uZw", device: "ann-pi", account: "Ann")
    static let fullPosition = LivePosition(time: t0, latitude: 45.5035034, longitude: -9.17949, accuracyMeters: 3.5, speed: 3.1,
                                           heartRate: 142, runUUID: "5b0c7e2e-1d4f-4a8b-9c3d-2e1f0a9b8c7d")
    static let minimalPosition = LivePosition(time: t0, latitude: 0, longitude: 0, accuracyMeters: nil, speed: nil, heartRate: nil,
                                              runUUID: nil)

    static let fullSummary = RunSummaryBody(
        start_time: t0.iso8601, end_time: t0.adding(seconds: 3600).iso8601, distance_m: 10_012.5, moving_time_s: 3540,
        elapsed_time_s: 3600, avg_pace_s_per_km: 353.6, max_speed_mps: 4.2, hr_avg: 151.3, hr_max: 178, chunks: 6, state: "finished",
        planned_session_id: "7c9e6679-7425-40de-944b-e07fc1f90ae7", workout_name: "6 x 400 m on the track")
    static let minimalSummary = RunSummaryBody(
        start_time: t0.iso8601, end_time: t0.iso8601, distance_m: 0, moving_time_s: 0, elapsed_time_s: 0, avg_pace_s_per_km: nil,
        max_speed_mps: nil, hr_avg: nil, hr_max: nil, chunks: 0, state: "interrupted")

    static let fullSync = DeviceSync(sections: .init(
        notices: NoticesSection(version: "0123456789abcdef", items: [
            Notice(id: "5b0c7e2e-1d4f-4a8b-9c3d-2e1f0a9b8c7d", text: "Rain at five: take a jacket", created_at: t0.iso8601),
        ]),
        profile: ProfileSection(version: "fedcba9876543210", display_name: "Ann", timezone: "Europe/Rome", linked: true, units: "mi"),
        plan: PlanSection(version: "00ff00ff00ff00ff", timezone: "Europe/Rome", sessions: [
            PlannedSession(id: "7c9e6679-7425-40de-944b-e07fc1f90ae7", date: "2026-05-10", name: "6 by 400 metres", steps: [
                PlanStep(type: "warmup", distance_m: 800, pace_s_per_km: [300, 360]),
                PlanStep(type: "repeat", times: 6, steps: [PlanStep(type: "run", distance_m: 400, pace_s_per_km: [190, 210]),
                                                           PlanStep(type: "recover", time_s: 90)]),
                PlanStep(type: "cooldown", lap: true, hr_zone: 2),
            ]),
        ]),
        races: RacesSection(version: "0a0b0c0d0e0f0a0b", races: [Self.race])))
    static let race = DeviceRace(id: "9b2d1e7a-3c4f-4e5a-8b6c-7d8e9f0a1b2c", name: "Naviglio 10k", starts_at: t0.iso8601, bib: 12, status: "present",
                                 length_m: 2_001.5, path: [[45.4642, 9.19], [45.4732, 9.19], [45.4822, 9.19]],
                                 waypoints: [[45.4642, 9.19], [45.4822, 9.19]])
    static let fullRacePositions = RacePositions(
        positions: [RacePositionItem(time: t0.iso8601, lat: 45.4642, lon: 9.19, progress_m: 0), RacePositionItem(time: t0.adding(seconds: 5).iso8601,
                                                                                                     lat: 45.4646, lon: 9.19, progress_m: 44.5)],
        started_at: t0.adding(seconds: 1).iso8601, finished_at: t0.adding(seconds: 600).iso8601)
    /// Every optional field of a step set (no step of a workout has all of them at once).
    static let fullPlanStep = PlanStep(type: "repeat", distance_m: 400, time_s: 90, lap: true, pace_s_per_km: [190, 210], hr_zone: 2,
                                       hr_bpm: [150, 165], times: 6, steps: [PlanStep(type: "run", distance_m: 400)])
    static let minimalSync = DeviceSync(sections: .init(notices: nil, profile: nil))

    static let fullState = DeviceState(
        time: t0.iso8601, state: "recording", battery_percent: 81, strap_battery_percent: 40, sos_monitoring: true,
        heart_rate: .init(bpm: 142, time: t0.adding(seconds: -2).iso8601), max_hr_bpm: 185,
        hr_daily: [.init(date: "2026-05-09", count: 1200, min_bpm: 48, resting_bpm: 52)], in_private_place: true)
    static let minimalState = DeviceState(time: t0.iso8601, state: "idle", battery_percent: nil, strap_battery_percent: nil,
                                          sos_monitoring: false, heart_rate: nil, max_hr_bpm: nil, hr_daily: nil)

    /// A run the device's encoder writes: both hemispheres, heart rate present and absent.
    static func chunks() -> [String] {
        let samples = (0..<25).map { (i: Int) -> TrackSample in
            let step = Double(i)
            let longitude: Double = i < 12 ? -0.1 - step * 1e-5 : 151.2
            let coordinate = Coordinate(latitude: -33.8688 + step * 1e-5, longitude: longitude)
            // Altitude on some samples (the eighth field), from below sea level up, none on the others.
            let altitude: Double? = i % 3 == 0 ? nil : -20.5 + step * 97.3
            return TrackSample(time: t0.adding(seconds: step), coordinate: coordinate, speed: step * 0.17, distance: step * 3.07, moving: i > 0,
                               movingTime: step, altitude: altitude)
        }
        let heartRate = [HeartRateSample(time: t0.adding(seconds: 10), bpm: 150, contact: true)]
        return TrackChunkFormat.chunks(samples: samples, heartRate: heartRate, hiding: [], samplesPerChunk: 10)
    }

    static let fullAnswers = AlertAnswersReply(answers: [
        AlertAnswerItem(id: 7, alert_id: "0f8e4c1a-93b2-4d6e-8a7f-1c2d3e4f5a6b", from: "Anna", kind: "on_my_way", text: nil, time: t0.iso8601),
        AlertAnswerItem(id: 9, alert_id: "0f8e4c1a-93b2-4d6e-8a7f-1c2d3e4f5a6b", from: "Anna", kind: "text", text: "Stay where you are",
                        time: t0.adding(seconds: 5).iso8601),
        AlertAnswerItem(id: 12, alert_id: "", from: "Carl", kind: "where_are_you", text: nil, time: t0.adding(seconds: 9).iso8601),
    ], last_id: 12)

    static func json(_ value: some Encodable) throws -> Any {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try JSONSerialization.jsonObject(with: try encoder.encode(value))
    }

    static func withField(_ value: some Encodable, _ key: String, _ replacement: Any) throws -> Any {
        var object = try json(value) as! [String: Any]
        object[key] = replacement
        return object
    }

    @Test("every field maps to a schema property and back; what the Swift types write validates against openapi.yaml")
    func typesMatchTheSpec() throws {
        let objects: [String: Any] = [
            "AlertMessage": ["full": try Self.json(Self.fullAlert), "minimal": try Self.json(Self.minimalAlert),
                             "minimal_nested": try Self.json(Self.alertWithMinimalParts)],
            "Position": ["full": try Self.json(Self.fullPosition), "minimal": try Self.json(Self.minimalPosition)],
            "RunSummary": ["full": try Self.json(Self.fullSummary), "minimal": try Self.json(Self.minimalSummary)],
            "DeviceLink": ["full": try Self.json(Self.fullLink), "minimal": try Self.json(Self.minimalLink)],
            "DeviceLinkGrant": ["full": try Self.json(Self.grant), "minimal": try Self.json(Self.grant)],
            "DeviceSync": ["full": try Self.json(Self.fullSync), "minimal": try Self.json(Self.minimalSync)],
            "NoticesSection": ["full": try Self.json(Self.fullSync.sections.notices!), "minimal": try Self.json(Self.fullSync.sections.notices!)],
            "ProfileSection": ["full": try Self.json(Self.fullSync.sections.profile!),
                               "minimal": try Self.json(ProfileSection(version: "fedcba9876543210", display_name: "Runner", timezone: "UTC", linked: false))],
            "PlanSection": ["full": try Self.json(Self.fullSync.sections.plan!), "minimal": try Self.json(Self.fullSync.sections.plan!)],
            "PlannedSession": ["full": try Self.json(Self.fullSync.sections.plan!.sessions[0]),
                               "minimal": try Self.json(Self.fullSync.sections.plan!.sessions[0])],
            "PlanStep": ["full": try Self.json(Self.fullPlanStep), "minimal": try Self.json(PlanStep(type: "run"))],
            "RacesSection": ["full": try Self.json(Self.fullSync.sections.races!), "minimal": try Self.json(RacesSection(version: "0a0b0c0d0e0f0a0b", races: []))],
            "DeviceRace": ["full": try Self.json(Self.race), "minimal": try Self.json(Self.race)],
            "RacePositions": ["full": try Self.json(Self.fullRacePositions), "minimal": try Self.json(RacePositions(positions: []))],
            "RacePositionItem": ["full": try Self.json(Self.fullRacePositions.positions[1]), "minimal": try Self.json(Self.fullRacePositions.positions[0])],
            "RacePositionsReply": ["full": try Self.json(RacePositionsReply(stored: 2, place: 3, of: 40)), "minimal": try Self.json(RacePositionsReply(stored: 0))],
            "NoticeAck": ["full": try Self.json(NoticeAck(notice_ids: ["5b0c7e2e-1d4f-4a8b-9c3d-2e1f0a9b8c7d"])),
                          "minimal": try Self.json(NoticeAck(notice_ids: ["5b0c7e2e-1d4f-4a8b-9c3d-2e1f0a9b8c7d"]))],
            "DeviceState": ["full": try Self.json(Self.fullState), "minimal": try Self.json(Self.minimalState)],
            "AlertAnswers": ["full": try Self.json(Self.fullAnswers), "minimal": try Self.json(AlertAnswersReply(answers: [], last_id: 0))],
        ]
        let times: [String] = [Self.t0, Timestamp(milliseconds: WireTime.earliestMs), Timestamp(milliseconds: WireTime.latestMs - 1)]
            .map(\.iso8601) + [WireTime.text(milliseconds: 1_778_398_200_123)]
        let strings: [String: Any] = ["TrackChunk": Self.chunks(), "Time": times]
        // Each must fail: a checker that accepts these checks nothing.
        let invalid: [[String: Any]] = [
            ["schema": "AlertMessage", "why": "a kind with a capital and a space", "value": try Self.withField(Self.fullAlert, "kind", "Hr high")],
            ["schema": "AlertMessage", "why": "alert_id null", "value": try Self.withField(Self.minimalAlert, "alert_id", NSNull())],
            ["schema": "AlertMessage", "why": "a wearer's name of 65 characters",
             "value": try Self.withField(Self.fullAlert, "wearer", String(repeating: "a", count: WearerName.maxLength + 1))],
            ["schema": "Position", "why": "latitude 91", "value": try Self.withField(Self.fullPosition, "lat", 91)],
            ["schema": "Position", "why": "a time without a zone", "value": try Self.withField(Self.fullPosition, "time", "2026-05-10T07:30:00")],
            ["schema": "DeviceLink", "why": "a name with a slash", "value": try Self.withField(Self.fullLink, "name", "../etc")],
            ["schema": "DeviceLinkGrant", "why": "no token", "value": ["device": "ann-pi", "account": "Ann"]],
            ["schema": "AlertAnswers", "why": "a kind nobody knows", "value": ["answers": [["id": 1, "alert_id": "0f8e4c1a-93b2-4d6e-8a7f-1c2d3e4f5a6b",
                                                                                      "from": "A", "kind": "help", "time": Self.t0.iso8601]], "last_id": 1]],
            ["schema": "RunSummary", "why": "state paused", "value": try Self.withField(Self.fullSummary, "state", "paused")],
            ["schema": "DeviceState", "why": "state running", "value": try Self.withField(Self.fullState, "state", "running")],
            ["schema": "DeviceState", "why": "a heart rate of 400", "value": try Self.withField(Self.minimalState, "heart_rate", ["bpm": 400, "time": Self.t0.iso8601])],
            ["schema": "PlanStep", "why": "a pace range of three", "value": ["type": "run", "distance_m": 400, "pace_s_per_km": [190, 200, 210]]],
            ["schema": "PlanStep", "why": "lap false", "value": ["type": "run", "lap": false]],
            ["schema": "PlannedSession", "why": "a date that is no date", "value": ["id": "7c9e6679-7425-40de-944b-e07fc1f90ae7", "date": "10/05/2026",
                                                                                 "name": "x", "steps": [["type": "run", "lap": true]]]],
            ["schema": "RunSummary", "why": "a planned session id that is no uuid",
             "value": try Self.withField(Self.fullSummary, "planned_session_id", "today")],
            ["schema": "NoticeAck", "why": "no ids", "value": ["notice_ids": [String]()]],
            ["schema": "RacePositions", "why": "721 positions", "value": ["positions": Array(repeating: try Self.json(Self.fullRacePositions.positions[0]), count: 721)]],
            ["schema": "RacePositionItem", "why": "progress beyond 60 km", "value": try Self.withField(Self.fullRacePositions.positions[0], "progress_m", 60_001)],
            ["schema": "DeviceRace", "why": "a status nobody knows", "value": try Self.withField(Self.race, "status", "running")],
            ["schema": "TrackChunk", "why": "nine fields", "value": "1778398200000,45.5035034,9.1794900,0.00,0.0,0,,1,2\n"],
            ["schema": "TrackChunk", "why": "an altitude with two decimals", "value": "1778398200000,45.5035034,9.1794900,0.00,0.0,0,,1.25\n"],
        ]
        // The numbers the server pages and caps alerts by (issue 31), as the spec must say them.
        let limits: [String: Any] = ["alerts_page_default": WireLimits.alertsPageDefault, "alerts_page_max": WireLimits.alertsPageMax,
                                     "alert_message_max_bytes": WireLimits.alertMessageMaxBytes, "bounds": Self.bounds]
        let cases: [String: Any] = ["objects": objects, "strings": strings, "invalid": invalid, "limits": limits]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pacer-contract-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        try JSONSerialization.data(withJSONObject: cases, options: [.sortedKeys]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let result = try DaemonFixture.runBlocking("/usr/bin/env", ["python3", Self.checker, Self.spec, file.path])
        #expect(result.status == 0, "tools/check-contract: \(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("0 problem(s)"), "\(result.stderr)")
    }

    /// Each range of WireLimits and the schema fields it bounds (path inside the schema, "[]" an
    /// array's items): the checker holds the spec's minimum and maximum to these numbers.
    static var bounds: [[String: Any]] {
        func bound<T: Comparable & Sendable>(_ range: ClosedRange<T>, _ fields: [(String, [String])]) -> [[String: Any]] {
            fields.map { ["schema": $0.0, "path": $0.1, "minimum": range.lowerBound, "maximum": range.upperBound] }
        }
        return bound(WireLimits.accuracyM, [("Position", ["accuracy_m"]), ("AlertMessage", ["position", "accuracy_m"])])
            + bound(WireLimits.speedMps, [("Position", ["speed_mps"]), ("RunSummary", ["max_speed_mps"])])
            + bound(WireLimits.heartRate, [("Position", ["heart_rate"]), ("RunSummary", ["hr_max"]), ("AlertMessage", ["heart_rate", "bpm"]),
                                           ("AlertMessage", ["heart_rate", "min_30s"]), ("AlertMessage", ["heart_rate", "max_30s"]),
                                           ("AlertMessage", ["heart_rate", "threshold_bpm"]), ("DeviceState", ["heart_rate", "bpm"]),
                                           ("DeviceState", ["hr_daily", "[]", "min_bpm"]), ("DeviceState", ["hr_daily", "[]", "resting_bpm"])])
            + bound(0...Double(WireLimits.heartRate.upperBound), [("RunSummary", ["hr_avg"])])
            + bound(WireLimits.batteryPercent, [("AlertMessage", ["battery_percent"]), ("DeviceState", ["battery_percent"]),
                                                ("DeviceState", ["strap_battery_percent"])])
            + bound(WireLimits.sequence, [("AlertMessage", ["sequence"])])
            + bound(WireLimits.distanceM, [("RunSummary", ["distance_m"])])
            + bound(WireLimits.durationS, [("RunSummary", ["moving_time_s"]), ("RunSummary", ["elapsed_time_s"])])
            + bound(WireLimits.paceSPerKm, [("RunSummary", ["avg_pace_s_per_km"])])
            + bound(WireLimits.trendBpmPerMin, [("AlertMessage", ["heart_rate", "trend_bpm_per_min"])])
            + bound(WireLimits.ageS, [("AlertMessage", ["position", "age_s"])])
            + bound(RaceWire.progressM, [("RacePositionItem", ["progress_m"])])
    }

    @Test("a WireLimits range the spec says otherwise, or a field it bounds that the spec lacks, fails the check")
    func aChangedBoundFails() throws {
        var bounds = Self.bounds
        bounds[0]["maximum"] = 99_999.0
        bounds.append(["schema": "Position", "path": ["altitude_m"], "minimum": 0, "maximum": 10])
        let limits: [String: Any] = ["alerts_page_default": WireLimits.alertsPageDefault, "alerts_page_max": WireLimits.alertsPageMax,
                                     "alert_message_max_bytes": WireLimits.alertMessageMaxBytes, "bounds": bounds]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pacer-contract-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        try JSONSerialization.data(withJSONObject: ["limits": limits], options: [.sortedKeys]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try DaemonFixture.runBlocking("/usr/bin/env", ["python3", Self.checker, Self.spec, file.path])
        #expect(result.status == 1)
        #expect(result.stdout.contains("Position.accuracy_m: the spec's maximum is 100000, WireLimits' is 99999"), "\(result.stdout)")
        #expect(result.stdout.contains("Position.altitude_m: no such field in the spec"), "\(result.stdout)")
    }

    @Test("the JSON of each type decodes back to the same value")
    func jsonRoundTrips() throws {
        func roundTrip<T: Codable & Equatable>(_ value: T) throws {
            let data = try JSONEncoder().encode(value)
            #expect(try JSONDecoder().decode(T.self, from: data) == value)
        }
        try roundTrip(Self.fullAlert)
        try roundTrip(Self.minimalAlert)
        try roundTrip(Self.alertWithMinimalParts)
        try roundTrip(Self.fullPosition)
        try roundTrip(Self.fullLink)
        try roundTrip(Self.minimalLink)
        try roundTrip(Self.grant)
        try roundTrip(Self.minimalPosition)
        try roundTrip(Self.fullSummary)
        try roundTrip(Self.minimalSummary)
        try roundTrip(Self.fullSync)
        try roundTrip(Self.minimalSync)
        try roundTrip(Self.fullState)
        try roundTrip(Self.minimalState)
        try roundTrip(Self.fullAnswers)
    }
}
