import CloudModel
import CloudStore
import Foundation
import Crypto
import Hummingbird
import PacerContract
import Threads

/// The device's sync channel (openapi.yaml `/v1/device/sync`, `/v1/device/sync/ack`,
/// `/v1/device/state`): what the cloud has for the device, its acknowledgements, its heartbeat.
struct DeviceSyncController: Sendable {
    let sync: SyncRepository
    let accounts: AccountRepository
    let plans: PlanRepository
    let races: RaceRepository
    let health: HealthRepository
    let alerts: AlertRepository
    let monitoring: MonitoringRepository
    let heartbeats: Heartbeats
    /// Tells dashboards the runner's device sent a heartbeat.
    let hub: any EventHub
    /// Milliseconds since 1970: what "today" of the plan section is.
    let wallClock: @Sendable () -> Int64

    func addRoutes(to device: PolicedRoutes<CloudRequestContext>) {
        device.on(.get, "device/sync", DeviceAccess()) { request, context in try await getDeviceSync(request, context: context) }
        device.on(.post, "device/sync/ack", DeviceAccess()) { request, context in try await postSyncAck(request, context: context) }
        device.on(.put, "device/state", DeviceAccess()) { request, context in try await putDeviceState(request, context: context) }
    }

    /// Every section, each versioned by a digest of its content. A new section is one builder
    /// below and one line here (and its optional field in `DeviceSync.Sections`).
    private func syncSections(for device: Device) async throws -> DeviceSync.Sections {
        // The owner's account, read once for the profile and the plan (a device may have none).
        let account: Account? = if let accountID = device.accountID { try await accounts.account(id: accountID) } else { nil }
        return DeviceSync.Sections(
            notices: try Self.versioned(try await noticesSection(device)),
            profile: try Self.versioned(profileSection(account)),
            plan: try await planSection(account),
            races: try await racesSection(account))
    }

    private func getDeviceSync(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let sync = DeviceSync(sections: try await syncSections(for: device))
        let etag = Self.etag(sync.sections)
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "private, no-cache"]
        if let match = request.headers[.ifNoneMatch], Self.matches(match, etag) {
            return Response(status: .notModified, headers: headers)
        }
        var response = try JSONInput.encode(sync)
        headers[.contentType] = "application/json"
        response.headers = headers
        return response
    }

    private func postSyncAck(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let ack = try JSONInput.decode(NoticeAck.self, from: try await JSONInput.jsonBody(of: request, context: context))
        guard (1...NoticeAck.maxIDs).contains(ack.notice_ids.count) else {
            throw JSONInput.invalid("notice_ids", "must hold 1 to \(NoticeAck.maxIDs) notice ids")
        }
        for (index, id) in ack.notice_ids.enumerated() where !WireLimits.isLowercaseUUID(id) {
            throw JSONInput.invalid("notice_ids[\(index)]", "\(WireLimits.quoted(id)) is not a notice id (a lowercase UUID)")
        }
        let ids = Array(Set(ack.notice_ids)).sorted()
        let unknown = try await sync.acknowledgeNotices(device: device.id, ids: ids, nowMs: WallClock.milliseconds())
        guard unknown.isEmpty else {
            throw APIError(.notFound, "not_found",
                           "no notice of this device has the id \(unknown.prefix(5).map { "'\($0)'" }.joined(separator: ", "))"
                               + (unknown.count > 5 ? " (and \(unknown.count - 5) more)" : "") + "; nothing was acknowledged")
        }
        return try JSONInput.encode(AckReply(acknowledged: ids.count))
    }

    private func putDeviceState(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let state = try JSONInput.decode(DeviceState.self, from: try await JSONInput.jsonBody(of: request, context: context))
        try state.validate()
        let previous = try await heartbeats.stored(device.id)
        let nowMs = WallClock.milliseconds()
        try await health.putDeviceState(device: device.id, receivedMs: nowMs, json: try JSONInput.canonical(state), daily: state.hr_daily ?? [])
        try await applyPrivacyAndRunEnd(device.id, state, previous: previous, nowMs: nowMs)
        if let runner = device.accountID { await hub.publish(HubEvent(kind: .state, account: runner, subject: device.id)) }
        return try JSONInput.encode(PositionReply(stored: true))
    }

    /// What a heartbeat changes beyond itself. The run ended (idle): its live trail is forgotten.
    /// In a private place: the trail of the run breaks there (on entering), and the last live
    /// position is forgotten unless an alert is open (an alert always shows where the person is),
    /// so no monitor is served where the runner was just before entering, however old.
    private func applyPrivacyAndRunEnd(_ deviceID: String, _ state: DeviceState, previous: DeviceState?, nowMs: Int64) async throws {
        if state.state == "idle", previous?.state != "idle" { try await monitoring.clearTrail(device: deviceID) }
        guard state.in_private_place == true else { return }
        let stored = try await alerts.position(device: deviceID)
        if previous?.in_private_place != true, state.state != "idle",
           let runID = stored.flatMap({ try? JSONDecoder().decode(LivePosition.self, from: Data($0.utf8)) })?.run_id {
            try await monitoring.addTrailBreak(device: deviceID, runID: runID, timeMs: nowMs)
        }
        if stored != nil, try await alerts.alerts(device: deviceID, state: .open).isEmpty { try await monitoring.forgetPosition(device: deviceID) }
    }

    // MARK: Sections

    private func noticesSection(_ device: Device) async throws -> NoticesSection {
        let pending = try await sync.pendingNotices(device: device.id, limit: NoticesSection.maxItems)
        return NoticesSection(version: "", items: pending.map {
            Notice(id: $0.id, text: $0.text, created_at: WireTime.text(milliseconds: $0.createdMs))
        })
    }

    private func profileSection(_ account: Account?) -> ProfileSection {
        guard let account else {
            return ProfileSection(version: "", display_name: ProfileSection.defaultDisplayName, timezone: ProfileSection.defaultTimezone,
                                  linked: false)
        }
        return ProfileSection(version: "", display_name: account.displayName, timezone: account.timezone, linked: true,
                              units: account.units.rawValue)
    }

    /// The account's occurrences from today to `PlanSection.days - 1` days ahead (today in the
    /// account's zone), not done yet, earliest first; nil for a device no account owns. Its
    /// version covers today's date too, so it changes when the day does.
    private func planSection(_ account: Account?) async throws -> PlanSection? {
        guard let account else { return nil }
        let today = PlanFollowing.today(account, nowMs: wallClock())
        let occurrences = try await plans.planOccurrences(accountID: account.id, from: today, through: today + PlanSection.days - 1)
        let sessions = occurrences.lazy.filter { $0.done == nil }.prefix(PlanSection.maxSessions).map { occurrence in
            PlannedSession(id: occurrence.id, date: occurrence.date, name: Self.spokenName(occurrence.session.name),
                           steps: occurrence.session.steps)
        }
        return try Self.versioned(PlanSection(version: PlanDates.text(today), timezone: account.timezone, sessions: Array(sessions)))
    }

    /// The account's races from 12 hours ago on (one that started may still be run), soonest
    /// first, with their courses; nil for a device no account owns.
    private func racesSection(_ account: Account?) async throws -> RacesSection? {
        guard let account else { return nil }
        let enrolments = try await races.enrolments(accountID: account.id, fromMs: wallClock() - 12 * 3_600_000, limit: RacesSection.maxRaces)
        let items = enrolments.map { race, entry in
            DeviceRace(id: race.id, name: Self.spokenName(race.name), starts_at: WireTime.text(milliseconds: race.startsMs), bib: entry.bib,
                       status: entry.status.rawValue, length_m: (race.lengthM * 10).rounded() / 10,
                       path: race.path.map { [$0.lat, $0.lon] }, waypoints: race.waypoints.map { [$0.lat, $0.lon] })
        }
        return try Self.versioned(RacesSection(version: "", races: items))
    }

    /// A session's name as the device says it: cleaned for speech, at most `PlanSteps.maxNameLength`.
    static func spokenName(_ name: String) -> String {
        let cleaned = String(NoticeText.clean(name).prefix(PlanSteps.maxNameLength))
        return cleaned.isEmpty ? "Planned session" : cleaned
    }

    // MARK: Versions

    /// The section with its version: the first 64 bits of the SHA-256 of its canonical JSON
    /// (with the version it comes with: empty, or what else it depends on, as the plan's today),
    /// so every instance on one database gives the same version for the same content without
    /// keeping counters.
    static func versioned<Section: VersionedSection>(_ section: Section) throws -> Section {
        var section = section
        section.version = String(Tokens.digest(Array(try JSONInput.canonical(section).utf8)).prefix(16))
        return section
    }

    /// A strong ETag over every section's name and version.
    static func etag(_ sections: DeviceSync.Sections) -> String {
        let text = sections.versions.map { "\($0.name)=\($0.version)" }.joined(separator: ";")
        return "\"" + String(Tokens.digest(Array(text.utf8)).prefix(32)) + "\""
    }

    /// `If-None-Match`: `*`, or a list of entity tags (weak ones compared weakly, as RFC 9110 says for it).
    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { (part: Substring) -> Bool in
            let tag = String(part).trimmingSpaces
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}

/// A sync section: Codable with a version the server fills in.
protocol VersionedSection: Encodable {
    var version: String { get set }
}

extension NoticesSection: VersionedSection {}
extension ProfileSection: VersionedSection {}
extension PlanSection: VersionedSection {}
extension RacesSection: VersionedSection {}

struct AckReply: Encodable {
    var acknowledged: Int
}

/// What the server checks of a heartbeat; each refusal names the field.
extension DeviceState {
    func validate() throws(APIError) {
        _ = try DeviceInput.time(time, "time")
        guard DeviceState.states.contains(state) else {
            throw JSONInput.invalid("state", "must be one of \(DeviceState.states.joined(separator: ", ")), not \(WireLimits.quoted(state))")
        }
        try DeviceInput.integer(battery_percent, "battery_percent", WireLimits.batteryPercent)
        try DeviceInput.integer(strap_battery_percent, "strap_battery_percent", WireLimits.batteryPercent)
        if let heart_rate {
            try DeviceInput.integer(heart_rate.bpm, "heart_rate.bpm", WireLimits.heartRate)
            _ = try DeviceInput.time(heart_rate.time, "heart_rate.time")
        }
        try DeviceInput.integer(max_hr_bpm, "max_hr_bpm", DeviceState.maxHeartRateRange)
        if let hr_daily {
            guard hr_daily.count <= DeviceState.maxDailyEntries else {
                throw JSONInput.invalid("hr_daily", "holds more than \(DeviceState.maxDailyEntries) days")
            }
            for (index, day) in hr_daily.enumerated() {
                let field = "hr_daily[\(index)]"
                guard DeviceState.isDate(day.date) else {
                    throw JSONInput.invalid(field + ".date", "\(WireLimits.quoted(day.date)) is not a date like 2026-05-10")
                }
                try DeviceInput.integer(day.count, field + ".count", 0...1_000_000)
                try DeviceInput.integer(day.min_bpm, field + ".min_bpm", WireLimits.heartRate)
                try DeviceInput.integer(day.resting_bpm, field + ".resting_bpm", WireLimits.heartRate)
            }
        }
    }
}
