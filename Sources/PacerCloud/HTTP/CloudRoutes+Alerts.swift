import Foundation
import Hummingbird
import PacerContract

extension CloudRoutes {
    func postAlert(_ request: Request, context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let body = try await JSONInput.jsonBody(of: request, context: context)
        let message = try JSONInput.decode(AlertBody.self, from: body)
        try message.validate()
        let alertID = try Identifiers.alertID(message.alert_id)
        // HTTPField.Name is not re-exported by Hummingbird; look the header up by its canonical name.
        if let key = request.headers.first(where: { $0.name.canonicalName == "idempotency-key" })?.value {
            guard key.lowercased() == "\(alertID):\(message.sequence)" else {
                throw APIError.badRequest("idempotency_key_mismatch",
                                          "Idempotency-Key \(WireLimits.quoted(key)) does not match alert_id:sequence '\(alertID):\(message.sequence)'")
            }
        }
        let base = linkBase
        let json = String(decoding: body, as: UTF8.self)
        let receivedMs = WallClock.nowMilliseconds()
        // The wearer: the account's display name where the device belongs to one, else the name
        // the device sent; times in the reader's zone where known, else the wearer's.
        var runner: Account?
        if let accountID = device.accountID { runner = try await store.account(id: accountID) }
        let words = AlertWords(device: device.name, account: runner, messages: [message])
        var forward: [ForwardTarget] = []
        if let webhook = device.webhook {
            let deviceName = device.name
            forward.append(ForwardTarget(channel: "webhook", target: webhook) { secret in
                Forwarding.webhookPayload(device: deviceName, words: words, page: base + "/a/" + secret, message: message, messageJSON: json, nowMs: receivedMs)
            })
        }
        if let email = device.email, let mail = configuration.mail {
            forward.append(ForwardTarget(channel: "email", target: email) { secret in
                Forwarding.emailPayload(from: mail.from, to: email, words: words, page: base + "/a/" + secret, message: message, nowMs: receivedMs)
            })
        }
        // Each person consented to watch the runner gets the e-mail too, in their own zone.
        if let runner = device.accountID, let mail = configuration.mail {
            for monitor in try await store.monitors(runnerID: runner) where monitor.email != device.email {
                let (email, zone) = (monitor.email, monitor.timezone)
                forward.append(ForwardTarget(channel: "email", target: email) { secret in
                    Forwarding.emailPayload(from: mail.from, to: email, words: words, page: base + "/a/" + secret, message: message,
                                            nowMs: receivedMs, readerZone: zone)
                })
            }
        }
        let result = try await store.recordAlertMessage(AlertMessageInput(
            device: device.id, alertID: alertID, sequence: message.sequence, type: message.type, kind: message.kind,
            test: message.test, json: json, receivedMs: receivedMs, newSecret: Tokens.random(bytes: 24),
            forward: forward))
        if case .conflict = result {
            throw APIError(.conflict, "conflict", "message \(message.sequence) of alert \(alertID) is stored already with a different body")
        }
        if case .created = result, !forward.isEmpty { wakeForwarder() }
        if case .created = result, let runner = device.accountID { await hub.publish(HubEvent(kind: .alert, account: runner, subject: device.id)) }
        let reply = AlertReply(alert_id: alertID, sequence: message.sequence, page: base + "/a/" + result.secret)
        if case .created = result { return try JSONInput.encode(reply, status: .created) }
        return try JSONInput.encode(reply)
    }

    func listAlerts(_ request: Request, context: CloudRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        var state: AlertState?
        if let text = request.uri.queryParameters.get("state") {
            guard let parsed = AlertState(rawValue: text) else {
                throw APIError.badRequest("invalid_query", "query parameter 'state' is \(WireLimits.quoted(text)); expected open, resolved or cancelled")
            }
            state = parsed
        }
        let base = linkBase
        let alerts = try await store.alerts(device: device.id, state: state)
        // The stored message is spliced in as received rather than re-encoded: fields this
        // server does not know survive.
        let items = alerts.map { alert in
            let head = (try? JSONInput.canonical(AlertListItem(
                alert_id: alert.alertID, state: alert.state.rawValue, kind: alert.kind, test: alert.test,
                page: base + "/a/" + alert.secret, latest_sequence: alert.latestSequence))) ?? "{}"
            return String(head.dropLast()) + #","latest":"# + alert.latestJSON + "}"
        }
        return JSONInput.json(Array((#"{"alerts":["# + items.joined(separator: ",") + "]}").utf8))
    }

    func alertPage(context: CloudRequestContext) async throws -> Response {
        let secret = context.parameters.get("secret") ?? ""
        let headers = AlertPage.headers
        guard Tokens.isWellFormedSecret(secret), let (alert, messages) = try await store.alert(secret: secret) else {
            return Response(status: .notFound, headers: headers, body: .init(byteBuffer: ByteBuffer(string: AlertPage.notFound())))
        }
        let answers = try await store.alertAnswers(device: alert.device, alertID: alert.alertID)
        // Who: the account's display name where the device belongs to one, else what the device
        // sent; the reader of this public page is not known, so times are in the wearer's zone.
        let device = try await store.device(id: alert.device)
        var runner: Account?
        if let accountID = device?.accountID { runner = try await store.account(id: accountID) }
        let decoded = messages.compactMap { try? JSONDecoder().decode(AlertBody.self, from: Data($0.utf8)) }.sorted { $0.sequence < $1.sequence }
        let words = AlertWords(device: device?.name ?? decoded.first?.device ?? "the device", account: runner, messages: decoded)
        let html = AlertPage.html(alert: alert, messages: messages, answers: answers, nowMs: WallClock.nowMilliseconds(), words: words,
                                  map: configuration.map)
        return Response(status: .ok, headers: AlertPage.pageHeaders(map: configuration.map), body: .init(byteBuffer: ByteBuffer(string: html)))
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
