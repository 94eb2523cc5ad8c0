import CloudModel
import CloudStore
import Foundation
import PacerContract
import PacerCore

/// What the device-state heartbeat (`PUT /v1/device/state`) tells: each field nil until a
/// device sends one, and shown as "unknown", never guessed.
struct DeviceStateView: Sendable, Equatable {
    var state: String?
    var heartRateBPM: Int?
    var heartRateAgeSeconds: Int64?
    var batteryPercent: Int?
    var strapBatteryPercent: Int?
    var sosMonitoring: Bool?
    var offlineSinceMs: Int64?
    /// The device said it is in one of its privacy zones: no position is shown but an alert's.
    var inPrivatePlace = false

    static let unknown = DeviceStateView()
    /// A device sends a heartbeat a minute while it runs; three missed, and it counts as offline.
    static let offlineAfterMs: Int64 = 180_000

    init() {}

    init(heartbeat: DeviceState, receivedMs: Int64, nowMs: Int64) {
        state = heartbeat.state
        batteryPercent = heartbeat.battery_percent
        strapBatteryPercent = heartbeat.strap_battery_percent
        sosMonitoring = heartbeat.sos_monitoring
        inPrivatePlace = heartbeat.in_private_place == true
        if let reading = heartbeat.heart_rate, let measuredMs = AlertBody.placedTime(reading.time) {
            (heartRateBPM, heartRateAgeSeconds) = (reading.bpm, max(0, nowMs - measuredMs) / 1000)
        }
        if nowMs - receivedMs > Self.offlineAfterMs { offlineSinceMs = receivedMs }
    }
}

/// Where the device is, for the map: the last position, its accuracy, and the trail of the run
/// it belongs to as lines of [lat, lon] (broken where the runner entered a private place, so
/// no line crosses one).
struct MapView: Encodable, Sendable {
    var lat: Double
    var lon: Double
    var accuracy_m: Double?
    var trail: [[[Double]]]
}

/// One device of a watched runner, as the dashboard shows it: the card's HTML (the same
/// template renders the page and every live update) and what the map needs.
struct DeviceCard: Encodable, Sendable {
    var id: String
    var runner: String
    var html: String
    var map: MapView?
    var alert_open: Bool
}

/// Builds the dashboard's cards from the store. Everything from devices or people is
/// HTML-escaped by Mustache's `{{ }}`.
struct Dashboard {
    /// What the cards are read from.
    struct Repositories: Sendable {
        let monitoring: MonitoringRepository
        let devices: DeviceRepository
        let alerts: AlertRepository
        let sync: SyncRepository
    }

    let store: Repositories
    let nowMs: Int64
    let csrf: String
    /// The monitor's time zone: "offline since 07:31" is their clock's time.
    let timezone: String
    /// Closed alerts shown under the open ones (a false alarm stays visible for a while).
    static let closedAlertsShown = 3
    static let trailPoints = 2000

    /// A card for every device of every runner the monitor watches, runners in consent order.
    func cards(monitorID: String) async throws -> [DeviceCard] {
        let runners = try await store.monitoring.watchedRunners(monitorID: monitorID)
        var cards: [DeviceCard] = []
        for runner in runners {
            for device in try await store.devices.devices(accountID: runner.id) where !device.revoked {
                cards.append(try await card(runner: runner, device: device))
            }
        }
        return cards
    }

    func card(runner: Account, device: Device) async throws -> DeviceCard {
        var position = try await store.alerts.position(device: device.id).flatMap { try? JSONDecoder().decode(LivePosition.self, from: Data($0.utf8)) }
        // Only what the card shows is read (issue 31): the newest open alerts, the newest closed ones.
        let open = try await store.alerts.alerts(device: device.id, state: .open, before: nil, limit: AlertLimits.cardOpenAlerts)
        var closed: [StoredAlert] = []
        for state in [AlertState.resolved, .cancelled] {
            closed += try await store.alerts.alerts(device: device.id, state: state, before: nil, limit: Self.closedAlertsShown)
        }
        closed.sort { ($0.createdMs, $1.alertID) > ($1.createdMs, $0.alertID) }
        let shown = open + closed.prefix(Self.closedAlertsShown)
        var alertValues: [[String: Any]] = []
        var alertPosition: LivePosition?
        for alert in shown {
            let (value, newest) = try await alertValue(alert, device: device)
            alertValues.append(value)
            if alert.state == .open, let newest, Self.newer(newest, than: alertPosition) { alertPosition = newest }
        }

        var state = DeviceStateView.unknown
        if let stored = try await store.sync.deviceState(device: device.id),
           let heartbeat = try? JSONDecoder().decode(DeviceState.self, from: Data(stored.json.utf8)) {
            state = DeviceStateView(heartbeat: heartbeat, receivedMs: stored.receivedMs, nowMs: nowMs)
        }
        // The live position's heart rate, when it is newer than the heartbeat's.
        if let bpm = position?.heart_rate, let positionMs = position.flatMap({ AlertBody.placedTime($0.time) }) {
            let age = max(0, nowMs - positionMs) / 1000
            if state.heartRateAgeSeconds.map({ age < $0 }) ?? true { (state.heartRateBPM, state.heartRateAgeSeconds) = (bpm, age) }
        }
        // In a private place nothing tells where the runner is, unless an alert is open: an alert
        // always shows where the person is, the alert's own position when it is the newer.
        let inPrivate = state.inPrivatePlace && open.isEmpty
        if inPrivate { position = nil }
        if let alertPosition, Self.newer(alertPosition, than: position) { position = alertPosition }
        let positionMs = position.flatMap { AlertBody.placedTime($0.time) }
        var values: [String: Any] = [
            "id": device.id, "runner": runner.displayName, "device": device.name, "alerts": alertValues, "csrf": csrf,
            "state": stateText(state, position: position, positionMs: positionMs, openAlert: !open.isEmpty), "private": inPrivate,
        ]
        values["facts"] = facts(state)
        var map: MapView?
        if let position {
            var shownPosition: [String: Any] = ["lat": String(format: "%.6f", position.lat), "lon": String(format: "%.6f", position.lon)]
            if let accuracy = position.accuracy_m.flatMap(AlertPage.wholeMetres) { shownPosition["accuracy"] = String(accuracy) }
            shownPosition["age"] = positionMs.map { AlertWords.time(ms: $0, nowMs: nowMs, zone: timezone) } ?? "at the device's time \(position.time)"
            values["position"] = shownPosition
            // The current run's trail: none once the device says the run ended (idle).
            var trail: [[[Double]]] = []
            if let runID = position.run_id, state.state != "idle" {
                trail = TrailPoint.segments(try await store.monitoring.trail(device: device.id, runID: runID, limit: Self.trailPoints))
            }
            map = MapView(lat: position.lat, lon: position.lon, accuracy_m: position.accuracy_m, trail: trail)
        }
        let html = MonitorPage.render(MonitorPage.deviceCard, values)
        return DeviceCard(id: device.id, runner: runner.id, html: html, map: map, alert_open: !open.isEmpty)
    }

    /// True when `position` was taken after `other` (or there is no other); an unreadable time
    /// counts as older.
    static func newer(_ position: LivePosition, than other: LivePosition?) -> Bool {
        guard let other else { return true }
        return (AlertBody.placedTime(position.time) ?? .min) > (AlertBody.placedTime(other.time) ?? .min)
    }

    /// The alert as the card shows it, and the newest position its messages carry.
    private func alertValue(_ alert: StoredAlert, device: Device) async throws -> ([String: Any], LivePosition?) {
        let messages = try await store.alerts.alert(secret: alert.secret, messages: AlertLimits.cardMessages)?.messages ?? []
        let decoded = messages.compactMap { try? JSONDecoder().decode(AlertBody.self, from: Data($0.utf8)) }.sorted { $0.sequence < $1.sequence }
        // Where the runner was is shown only while the alert is open (issue 31): a closed alert's
        // positions may be inside a private place, which the alert no longer justifies showing.
        let open = alert.state == .open
        let lines = decoded.map { line($0, withPosition: open) }
        let newest = decoded.last { open && $0.position != nil }.flatMap { message -> LivePosition? in
            guard let position = message.position else { return nil }
            return LivePosition(time: position.time ?? message.time, lat: position.lat, lon: position.lon, accuracy_m: position.accuracy_m,
                                speed_mps: nil, heart_rate: nil, run_id: message.run_id)
        }
        let answers = try await store.monitoring.alertAnswers(device: device.id, alertID: alert.alertID, newest: AlertLimits.answersShown)
            .map { Self.line($0, nowMs: nowMs) }
        let stateText: String
        switch alert.state {
        case .open: stateText = "OPEN"
        case .cancelled: stateText = "cancelled: false alarm, the runner said they are OK"
        case .resolved: stateText = "resolved"
        }
        var value: [String: Any] = [
            "alert_id": alert.alertID, "device_id": device.id, "kind": AlertPage.describe(kind: alert.kind), "state": stateText,
            "open": open, "test": alert.test, "messages": lines, "answers": answers, "has_answers": !answers.isEmpty, "csrf": csrf,
        ]
        // The alert's page has the map of its positions: linked while the alert is open.
        if open { value["page"] = "/a/" + alert.secret }
        return (value, newest)
    }

    /// "20:45 (3 min ago): alert, 201 bpm, at 45.47791, 9.22414", in the monitor's zone.
    func line(_ message: AlertBody, withPosition: Bool = true) -> String {
        let when = AlertBody.placedTime(message.time).map { AlertWords.time(ms: $0, nowMs: nowMs, zone: timezone) }
            ?? "at the device's time \(message.time)"
        var text = "\(when): \(message.type.replacingOccurrences(of: "_", with: " "))"
        if let bpm = message.heart_rate?.bpm { text += ", \(bpm) bpm" }
        if withPosition, let position = message.position { text += String(format: ", at %.5f, %.5f", position.lat, position.lon) }
        if let battery = message.battery_percent { text += ", battery \(battery) %" }
        return text
    }

    static func line(_ answer: AlertAnswer, nowMs: Int64) -> String {
        let what = switch answer.kind {
        case AlertAnswer.onMyWay: "is on the way"
        case AlertAnswer.whereAreYou: "asked for the position"
        default: "said: \u{201C}\(answer.text ?? "")\u{201D}"
        }
        return "\(answer.monitorName) \(what) (\(AlertPage.age(nowMs - answer.createdMs)))"
    }

    /// The device's state: from the heartbeat when it has one; else what the live position and
    /// alerts show, and otherwise "unknown".
    private func stateText(_ state: DeviceStateView, position: LivePosition?, positionMs: Int64?, openAlert: Bool) -> String {
        if openAlert { return "ALERT open" }
        if let since = state.offlineSinceMs { return "offline since \(RunnerCalendar(timezone).clockTime(since, nowMs: nowMs))" }
        switch state.state {
        case "recording": return "out running"
        case "paused": return "run paused"
        case "idle": return "idle"
        default: break
        }
        if let position, position.run_id != nil, let positionMs, nowMs - positionMs < 120_000 {
            return "out running (live position \(AlertPage.age(nowMs - positionMs)))"
        }
        return "unknown"
    }

    private func facts(_ state: DeviceStateView) -> [[String: String]] {
        let unknown = "unknown"
        var heartRate = unknown
        if let bpm = state.heartRateBPM { heartRate = "\(bpm) bpm" + (state.heartRateAgeSeconds.map { ", " + AlertClock.age(milliseconds: $0 * 1000) } ?? "") }
        return [
            ["label": "Heart rate", "value": heartRate],
            ["label": "Device battery", "value": state.batteryPercent.map { "\($0) %" } ?? unknown],
            ["label": "Strap battery", "value": state.strapBatteryPercent.map { "\($0) %" } ?? unknown],
            ["label": "SOS monitoring", "value": state.sosMonitoring.map { $0 ? "on" : "off" } ?? unknown],
        ]
    }
}
