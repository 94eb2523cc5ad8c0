import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract
import Threads

/// A device's alerts (`/v1/alerts`): each message stored, forwarded (webhook, e-mail, the
/// runner's monitors) and shown on the alert's secret page; the device's alerts listed.
struct DeviceAlertsController: Sendable {
    let alerts: AlertRepository
    let accounts: AccountRepository
    let monitoring: MonitoringRepository
    let heartbeats: Heartbeats
    /// Alert messages per device and alert (issue 31), never refusing a real SOS.
    let admission: AlertAdmission
    /// "https://cloud.example.org": what alert page links start with (`CloudConfiguration.linkBase`).
    let linkBase: String
    /// The relay e-mails go out by; nil: this server sends none.
    let mail: MailSettings?
    /// Called after a new alert message queued forwards, so they go out now, not at the next poll.
    let wakeForwarder: @Sendable () -> Void
    /// Tells dashboards the runner has an alert.
    let hub: any EventHub

    func addRoutes(to device: PolicedRoutes<CloudRequestContext>) {
        device.on(.post, "alerts", DeviceAccess()) { request, context in try await postAlert(request, context: context) }
        device.on(.get, "alerts", DeviceAccess()) { request, context in try await listAlerts(request, context: context) }
    }

    private func postAlert(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let body = try await JSONInput.jsonBody(of: request, context: context, limit: AlertLimits.maxBodyBytes)
        let message = try JSONInput.decode(AlertBody.self, from: body)
        try message.validate()
        let alertID = try Identifiers.alertID(message.alert_id)
        // What is stored and forwarded is the fields this server knows, re-encoded: a field it
        // does not know (a 1 MiB `pad`) is dropped, never stored (issue 31).
        let json = try JSONInput.canonical(message)
        guard json.utf8.count <= AlertLimits.maxStoredBytes else {
            throw APIError(.unprocessableContent, "too_large",
                           "body: the alert message is \(json.utf8.count) bytes as stored; at most \(AlertLimits.maxStoredBytes) are taken")
        }
        // HTTPField.Name is not re-exported by Hummingbird; look the header up by its canonical name.
        if let key = request.headers.first(where: { $0.name.canonicalName == "idempotency-key" })?.value {
            guard key.lowercased() == "\(alertID):\(message.sequence)" else {
                throw APIError.badRequest("idempotency_key_mismatch",
                                          "Idempotency-Key \(WireLimits.quoted(key)) does not match alert_id:sequence '\(alertID):\(message.sequence)'")
            }
        }
        let stored = try await alerts.alert(device: device.id, alertID: alertID)
        if !AlertAdmission.alwaysTaken(message, stored: stored), let seconds = admission.take(device: device.id, alertID: alertID) {
            var refusal = APIError(.tooManyRequests, "rate_limited",
                                   "sequence: too many updates of alert \(alertID) from this device (at most \(AlertAdmission.perAlert.phrase) per alert, "
                                       + "\(AlertAdmission.perDevice.phrase) per device); retry after \(seconds) s")
            refusal.retryAfter = seconds
            throw refusal
        }
        let base = linkBase
        let receivedMs = WallClock.milliseconds()
        // The wearer: the account's display name where the device belongs to one, else the name
        // the device sent; times in the reader's zone where known, else the wearer's.
        var runner: Account?
        if let accountID = device.accountID { runner = try await accounts.account(id: accountID) }
        let words = AlertWords(device: device.name, account: runner, messages: [message])
        var forward: [ForwardTarget] = []
        if let webhook = device.webhook {
            let deviceName = device.name
            forward.append(ForwardTarget(channel: "webhook", target: webhook) { secret in
                Forwarding.webhookPayload(device: deviceName, words: words, page: base + "/a/" + secret, message: message, messageJSON: json, nowMs: receivedMs)
            })
        }
        if let email = device.email, let mail = mail {
            forward.append(ForwardTarget(channel: "email", target: email) { secret in
                Forwarding.emailPayload(from: mail.from, to: email, words: words, page: base + "/a/" + secret, message: message, nowMs: receivedMs)
            })
        }
        // Each person consented to watch the runner gets the e-mail too, in their own zone.
        if let runner = device.accountID, let mail = mail {
            for monitor in try await monitoring.monitors(runnerID: runner) where monitor.email != device.email {
                let (email, zone) = (monitor.email, monitor.timezone)
                forward.append(ForwardTarget(channel: "email", target: email) { secret in
                    Forwarding.emailPayload(from: mail.from, to: email, words: words, page: base + "/a/" + secret, message: message,
                                            nowMs: receivedMs, readerZone: zone)
                })
            }
        }
        let result = try await alerts.recordAlertMessage(AlertMessageInput(
            device: device.id, alertID: alertID, sequence: message.sequence, type: message.type, kind: message.kind,
            test: message.test, json: json, receivedMs: receivedMs, newSecret: Tokens.random(bytes: 24),
            forward: forward))
        if case .conflict = result {
            throw APIError(.conflict, "conflict", "message \(message.sequence) of alert \(alertID) is stored already with a different body")
        }
        if case .created = result, !forward.isEmpty { wakeForwarder() }
        if case .created = result, AlertState(messageType: message.type) != .open { try await forgetPrivatePosition(device.id) }
        if case .created = result, let runner = device.accountID { await hub.publish(HubEvent(kind: .alert, account: runner, subject: device.id)) }
        let reply = AlertReply(alert_id: alertID, sequence: message.sequence, page: base + "/a/" + result.secret)
        if case .created = result { return try JSONInput.encode(reply, status: .created) }
        return try JSONInput.encode(reply)
    }

    /// The alert closed: a position the device sent from a private place while it was open is
    /// justified no more, so it is forgotten as the heartbeat forgets one (issue 31).
    private func forgetPrivatePosition(_ deviceID: String) async throws {
        guard try await heartbeats.stored(deviceID)?.in_private_place == true,
              try await alerts.alerts(device: deviceID, state: .open, before: nil, limit: 1).isEmpty else { return }
        try await monitoring.forgetPosition(device: deviceID)
    }

    /// `GET /v1/alerts?state=&limit=&before=`: a page of the device's alerts, newest first, and
    /// `next` (the `before` of the next page) when there may be more.
    private func listAlerts(_ request: Request, context: DeviceContext) async throws -> Response {
        let device = context.device
        let query = request.uri.queryParameters
        var state: AlertState?
        if let text = query.get("state") {
            guard let parsed = AlertState(rawValue: text) else {
                throw APIError.badRequest("invalid_query", "query parameter 'state' is \(WireLimits.quoted(text)); expected open, resolved or cancelled")
            }
            state = parsed
        }
        var limit = AlertLimits.pageDefault
        if let text = query.get("limit") {
            guard text.utf8.count <= 4, let value = Int(text), (1...AlertLimits.pageMax).contains(value) else {
                throw APIError.badRequest("invalid_query", "query parameter 'limit' is \(WireLimits.quoted(text)); expected 1 to \(AlertLimits.pageMax)")
            }
            limit = value
        }
        var before: AlertCursor?
        if let text = query.get("before") {
            guard let cursor = AlertCursor(text: text) else {
                throw APIError.badRequest("invalid_query", "query parameter 'before' is \(WireLimits.quoted(text)); expected the 'next' of a page")
            }
            before = cursor
        }
        let base = linkBase
        // One more than asked: whether there is a next page, without counting.
        var alerts = try await alerts.alerts(device: device.id, state: state, before: before, limit: limit + 1)
        let more = alerts.count > limit
        alerts = Array(alerts.prefix(limit))
        // The stored message (its known fields) is spliced in rather than decoded and encoded again.
        let items = alerts.map { alert in
            let head = (try? JSONInput.canonical(AlertListItem(
                alert_id: alert.alertID, state: alert.state.rawValue, kind: alert.kind, test: alert.test,
                page: base + "/a/" + alert.secret, latest_sequence: alert.latestSequence))) ?? "{}"
            return String(head.dropLast()) + #","latest":"# + alert.latestJSON + "}"
        }
        var text = #"{"alerts":["# + items.joined(separator: ",") + "]"
        if more, let last = alerts.last { text += #","next":""# + AlertCursor(after: last).text + "\"" }
        return JSONInput.json(Array((text + "}").utf8))
    }
}

struct AlertReply: Encodable {
    var alert_id: String
    var sequence: Int
    var page: String
}

struct AlertListItem: Encodable {
    var alert_id: String
    var state: String
    var kind: String
    var test: Bool
    var page: String
    var latest_sequence: Int
}
