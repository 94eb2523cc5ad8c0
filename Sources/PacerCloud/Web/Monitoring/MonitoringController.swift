import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract
import ServiceLifecycle
import Synchronization

/// Open dashboard streams per account on this instance, to hold each account to its cap.
final class StreamCounter: Sendable {
    private let open = Mutex<[String: Int]>([:])

    /// Counts one more stream of the account; false (nothing counted) at the cap.
    func take(_ account: String, limit: Int) -> Bool {
        open.withLock { counts in
            guard counts[account, default: 0] < limit else { return false }
            counts[account, default: 0] += 1
            return true
        }
    }

    func give(_ account: String) {
        open.withLock { counts in
            counts[account, default: 1] -= 1
            if counts[account] == 0 { counts[account] = nil }
        }
    }
}

/// Monitoring (issue 22): a runner invites a person by e-mail, who accepts while signed in;
/// either ends it. The monitor's dashboard shows every watched runner, live over server-sent
/// events; on an open alert the monitor answers, and the device fetches the answers.
struct MonitoringController: Sendable {
    let monitoring: MonitoringRepository
    let accounts: AccountRepository
    let devices: DeviceRepository
    let alerts: AlertRepository
    /// What the dashboard's cards are read from.
    let cards: Dashboard.Repositories
    /// Tells dashboards (of every instance) what changed, and wakes a device's long-poll.
    let hub: any EventHub
    /// Dashboard streams open per account on this instance.
    let streams: StreamCounter
    /// Long-polls open per device and event streams per session on this instance (ConnectionLimits).
    let holds: HoldCounter
    let connections: ConnectionLimits
    /// A dashboard's stream ends with its session.
    let sessions: Sessions
    let monitorSettings: MonitorSettings
    /// The relay invitations go out by; nil: this server sends none.
    let mail: MailSettings?
    /// "https://cloud.example.org": what invitation links start with.
    let linkBase: String
    /// The dashboard's map.
    let map: MapSettings
    /// Milliseconds since 1970: invitations' expiry, answers' times, the dashboard's "now".
    let wallClock: @Sendable () -> Int64
    /// Called after an invitation is queued, so it goes out now, not at the next poll.
    let wakeForwarder: @Sendable () -> Void

    /// `web`: the pages, behind the session middleware; `device`: `/v1` behind the device's token.
    func addRoutes(web: PolicedRoutes<CloudRequestContext>, device: PolicedRoutes<CloudRequestContext>) {
        device.on(.get, "device/answers", DeviceAccess()) { request, context in try await deviceAnswers(request, context) }
        web.on(.get, "monitoring", SignedInAccess()) { _, context in try await monitoringPage(context) }
        web.on(.post, "monitoring/invite", SignedInAccess()) { request, context in try await invite(request, context) }
        web.on(.get, "monitoring/accept", PublicAccess(why: "the e-mailed token is the credential; GET only shows who invites and the button")) {
            request, context in try await acceptPage(request, context)
        }
        web.on(.post, "monitoring/accept", SignedInAccess()) { request, context in try await accept(request, context) }
        web.on(.post, "monitoring/end", SignedInAccess()) { request, context in try await endConsent(request, context) }
        web.on(.get, "watch", SignedInAccess()) { _, context in try await dashboardPage(context) }
        web.on(.get, "watch/events", SignedInAccess()) { _, context in try await dashboardEvents(context) }
        web.on(.post, "watch/alerts/:device/:alert/answer", SignedInAccess()) { request, context in try await answer(request, context) }
        web.on(.post, "watch/devices/:device/where", SignedInAccess()) { request, context in try await askWhere(request, context) }
    }

    // MARK: Consent

    private func monitoringPage(_ context: SignedInContext, status: HTTPResponse.Status = .ok, notice: String? = nil,
                                error: String? = nil) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let person = { (other: Account) -> [String: String] in ["id": other.id, "name": other.displayName, "email": other.email] }
        let now = wallClock()
        let calendar = RunnerCalendar(account.timezone, nowMs: now)
        let invites = try await monitoring.monitorInvites(runnerID: account.id, nowMs: now).map {
            ["email": $0.email, "until": calendar.dateTime($0.expiresMs)]
        }
        var values: [String: Any] = [
            "monitors": try await monitoring.monitors(runnerID: account.id).map(person),
            "runners": try await monitoring.watchedRunners(monitorID: account.id).map(person),
            "invites": invites,
        ]
        if let notice { values["notice"] = notice }
        return MonitorPage.response(MonitorPage.monitoring, status, values: values, csrf: session.csrf, error: error, title: "Monitoring")
    }

    private func invite(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let account = context.account
        let form = try await WebForm.read(request, context: context)
        let refuse = { (status: HTTPResponse.Status, message: String) async throws -> Response in
            try await monitoringPage(context, status: status, error: message)
        }
        guard let raw = form["email"], !raw.isEmpty else { return try await refuse(.badRequest, "email is missing: fill it in") }
        let email: String
        switch EmailAddress.normalized(raw) {
        case .success(let address): email = address
        case .failure(let error): return try await refuse(.badRequest, error.message)
        }
        guard email != account.email else { return try await refuse(.badRequest, "email: that is your own address; invite another person") }
        guard let mail = mail else {
            return try await refuse(.serviceUnavailable, "email: this server sends no e-mail, so it cannot send invitations")
        }
        let nowMs = wallClock()
        let pending = try await monitoring.monitorInvites(runnerID: account.id, nowMs: nowMs)
        let limit = monitorSettings.pendingInvitesPerRunner
        guard pending.count < limit else {
            return try await refuse(.tooManyRequests, "email: you have \(limit) invitations waiting already; wait until some are accepted or expire")
        }
        let token = Tokens.random()
        let lifetime = monitorSettings.inviteLifetime.milliseconds
        let text = InvitationMail.text(inviterName: account.displayName, inviterEmail: account.email,
                                       link: "\(linkBase)/monitoring/accept?token=\(token)", lifetimeDays: lifetime / 86_400_000)
        let payload = try JSONInput.canonical(Forwarding.Email(from: mail.from, to: email, subject: InvitationMail.subject, text: text))
        try await monitoring.addMonitorInvite(
            MonitorInvite(hash: Tokens.hash(token), runnerID: account.id, email: email, createdMs: nowMs, expiresMs: nowMs + lifetime),
            mail: OutboxMail(to: email, payload: payload))
        wakeForwarder()
        return try await monitoringPage(context, notice: "We sent an invitation to \(email).")
    }

    /// The invitation the token names: a 400 without a token, a 404 naming it when it names none.
    private func invitation(_ token: String) async throws -> MonitorInvite {
        guard !token.isEmpty else { throw WebRefusal.plain(.badRequest, "token is missing: open the link from the invitation e-mail") }
        guard Tokens.isWellFormedSecret(token), let invite = try await monitoring.monitorInvite(hash: Tokens.hash(token), nowMs: wallClock()) else {
            throw WebRefusal.plain(.notFound, "token: this invitation is not valid, was used already or has expired; ask for a new one")
        }
        return invite
    }

    private func acceptPage(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let token = request.uri.queryParameters["token"].map(String.init) ?? ""
        let invite = try await invitation(token)
        let runner = try await accounts.account(id: invite.runnerID)?.displayName ?? "A runner"
        let values: [String: Any] = ["runner": runner, "email": invite.email, "token": token, "signed_in": context.session != nil]
        return MonitorPage.response(MonitorPage.accept, values: values, csrf: context.session?.csrf ?? "", title: "Watch over \(runner)")
    }

    private func accept(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let account = context.account
        let form = try await WebForm.read(request, context: context)
        let token = form["token"] ?? ""
        let invite = try await invitation(token)
        // Consent is to a person: the one the runner named by address, signed in as that address.
        guard invite.email == account.email else {
            throw WebRefusal.plain(.forbidden, "token: this invitation was sent to another address; log in with the address it was sent to")
        }
        guard invite.runnerID != account.id else { throw WebRefusal.plain(.badRequest, "token: you cannot watch over yourself") }
        guard let runnerID = try await monitoring.acceptMonitorInvite(hash: Tokens.hash(token), monitorID: account.id, nowMs: wallClock()) else {
            throw WebRefusal.plain(.notFound, "token: this invitation was used already or has expired; ask for a new one")
        }
        await hub.publish(HubEvent(kind: .consent, account: runnerID, subject: account.id))
        return Response(status: .seeOther, headers: [.location: "/watch", .cacheControl: "no-store"])
    }

    private func endConsent(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let account = context.account
        let form = try await WebForm.read(request, context: context)
        // Either side ends it: the runner names the monitor, the monitor names the runner.
        let (runnerID, monitorID): (String, String)
        if let monitor = form["monitor"], !monitor.isEmpty {
            (runnerID, monitorID) = (account.id, monitor)
        } else if let runner = form["runner"], !runner.isEmpty {
            (runnerID, monitorID) = (runner, account.id)
        } else {
            return try await monitoringPage(context, status: .badRequest, error: "monitor or runner is missing: say whose watching ends")
        }
        guard try await monitoring.endConsent(runnerID: runnerID, monitorID: monitorID) else {
            return try await monitoringPage(context, status: .notFound, error: "monitor or runner: there is no such watching to end")
        }
        await hub.publish(HubEvent(kind: .consent, account: runnerID, subject: monitorID))
        return Response(status: .seeOther, headers: [.location: "/monitoring", .cacheControl: "no-store"])
    }

    // MARK: Dashboard

    private func dashboard(_ account: Account, _ session: StoredSession) -> Dashboard {
        Dashboard(store: cards, nowMs: wallClock(), csrf: session.csrf, timezone: account.timezone)
    }

    private func dashboardPage(_ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let cards = try await dashboard(account, session).cards(monitorID: account.id)
        // Open alerts first; otherwise the order the consents were given in.
        return MonitorPage.dashboardResponse(cards: cards.filter(\.alert_open) + cards.filter { !$0.alert_open }, csrf: session.csrf,
                                             map: map)
    }

    /// The dashboard's stream: a `device` event with the card again whenever a watched
    /// runner's device changes, a `consent` event when whom the account watches changes, a
    /// comment as heartbeat. Bounded per connection (the hub's buffer), per account (a cap on
    /// streams) and in time (it ends after `streamLifetime`; the browser reconnects).
    private func dashboardEvents(_ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let settings = monitorSettings
        guard streams.take(account.id, limit: settings.streamsPerAccount) else {
            throw WebRefusal.tooManyAttempts(retryAfter: 10, message: "too many open dashboards for this account: at most \(settings.streamsPerAccount)")
        }
        // And per session (issue 31); the account's count is given back when this one refuses.
        let slot: HoldSlot
        do { slot = try holds.streamSlot(session: session, limit: connections.streamsPerSession) } catch {
            streams.give(account.id)
            throw error
        }
        let subscription = hub.subscribe(bufferingNewest: settings.streamBuffer)
        let streams = streams
        let csrf = session.csrf, timezone = account.timezone
        let wallClock = wallClock
        let sessions = sessions
        var headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store"]
        // nginx: do not buffer the stream (docs/reverse-proxy).
        headers[.init("X-Accel-Buffering")!] = "no"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            defer {
                subscription.end()
                streams.give(account.id)
                slot.release()
            }
            var watched = Set(try await monitoring.watchedRunners(monitorID: account.id).map(\.id))
            try await writer.write(ByteBuffer(string: "retry: 3000\n: connected\n\n"))
            // A server shutting down waits for open responses: the stream ends at once then.
            try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        while true {
                            try await Task.sleep(for: settings.heartbeat)
                            subscription.yield(.heartbeat)
                        }
                    }
                    group.addTask {
                        try await Task.sleep(for: settings.streamLifetime)
                        subscription.end()
                    }
                    defer { group.cancelAll() }
                    for await signal in subscription.signals {
                        // Races' frames share the hub: nothing of a dashboard, not worth a session read.
                        if case .event(let event) = signal, event.kind == .race { continue }
                        // Every event and heartbeat first checks the session (one read by key): the
                        // stream ends with it, and nothing is sent after log-out or expiry.
                        guard try await sessions.isLive(idHash: session.idHash) else { break }
                        guard case .event(let event) = signal else {
                            try await writer.write(ByteBuffer(string: ": keepalive\n\n"))
                            continue
                        }
                        if event.kind == .consent {
                            guard event.account == account.id || event.subject == account.id else { continue }
                            watched = Set(try await monitoring.watchedRunners(monitorID: account.id).map(\.id))
                            try await writer.write(ByteBuffer(string: "event: consent\ndata: {}\n\n"))
                            continue
                        }
                        guard watched.contains(event.account), let runner = try await accounts.account(id: event.account),
                              let device = try await devices.device(id: event.subject), device.accountID == runner.id, !device.revoked
                        else { continue }
                        let card = try await Dashboard(store: cards, nowMs: wallClock(), csrf: csrf, timezone: timezone).card(runner: runner, device: device)
                        let json = String(decoding: try JSONEncoder().encode(card), as: UTF8.self)
                        try await writer.write(ByteBuffer(string: "event: device\ndata: " + json + "\n\n"))
                    }
                }
            } onGracefulShutdown: {
                subscription.end()
            }
            try await writer.finish(nil)
        })
    }

    // MARK: Answers

    private func answer(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let account = context.account
        let form = try await WebForm.read(request, context: context)
        let deviceID = context.parameters.get("device") ?? "", alertID = context.parameters.get("alert") ?? ""
        // Only a consented monitor of the device's runner; anyone else learns nothing of it.
        guard let device = try await devices.device(id: deviceID), let runnerID = device.accountID,
              try await monitoring.isMonitor(account.id, of: runnerID),
              let alert = try await alerts.alert(device: device.id, alertID: alertID) else {
            throw WebRefusal.plain(.notFound, "no such alert among the runners you watch over")
        }
        guard alert.state == .open else { throw WebRefusal.plain(.conflict, "alert: this alert is no longer open, so it takes no answer") }
        // The device speaks every answer: one monitor cannot make it talk without end.
        let limit = monitorSettings.answersPerMonitorPerAlert
        let sent = try await monitoring.alertAnswers(device: device.id, alertID: alert.alertID)
            .filter { $0.monitorID == account.id && $0.kind != AlertAnswer.whereAreYou }.count
        guard sent < limit else {
            throw WebRefusal.plain(.tooManyRequests, "kind: you have sent \(limit) answers to this alert already, the most one person may")
        }
        var text: String?
        switch form["kind"] {
        case AlertAnswer.onMyWay:
            break
        case AlertAnswer.text:
            let cleaned = AnswerText.cleaned(form["text"] ?? "")
            guard !cleaned.isEmpty else { throw WebRefusal.plain(.badRequest, "text is missing: write a short message") }
            guard cleaned.count <= AnswerText.maxCharacters else {
                throw WebRefusal.plain(.badRequest, "text: at most \(AnswerText.maxCharacters) characters; this one has \(cleaned.count)")
            }
            text = cleaned
        default:
            throw WebRefusal.plain(.badRequest, "kind: expected on_my_way or text")
        }
        _ = try await monitoring.addAlertAnswer(AlertAnswer(device: device.id, alertID: alert.alertID, monitorID: account.id,
                                                       monitorName: account.displayName, kind: text == nil ? AlertAnswer.onMyWay : AlertAnswer.text,
                                                       text: text, createdMs: wallClock()))
        await hub.publish(HubEvent(kind: .answer, account: runnerID, subject: device.id))
        return Response(status: .seeOther, headers: [.location: "/watch", .cacheControl: "no-store"])
    }

    /// "Where are you?": a consented monitor asks the runner's device for its position now. It
    /// reaches the device on the answers channel (kind `where_are_you`, under the open alert if
    /// there is one); the device sends its position (`PUT /v1/position`), from inside a privacy
    /// zone only while an alert is open. Never from the alert's secret page, which has no session.
    private func askWhere(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let account = context.account
        _ = try await WebForm.read(request, context: context)
        let deviceID = context.parameters.get("device") ?? ""
        // Only a consented monitor of the device's runner; anyone else learns nothing of it.
        guard let device = try await devices.device(id: deviceID), !device.revoked, let runnerID = device.accountID,
              try await monitoring.isMonitor(account.id, of: runnerID) else {
            throw WebRefusal.plain(.notFound, "no such device among the runners you watch over")
        }
        let alertID = try await alerts.alerts(device: device.id, state: .open).first?.alertID ?? ""
        let nowMs = wallClock()
        // The device answers each at once: one monitor asks at most a few times a minute.
        let limit = monitorSettings.whereAreYouPerMinute
        let recent = try await monitoring.alertAnswers(device: device.id, alertID: alertID).filter {
            $0.monitorID == account.id && $0.kind == AlertAnswer.whereAreYou && nowMs - $0.createdMs < 60_000
        }
        guard recent.count < limit else {
            throw WebRefusal.tooManyAttempts(retryAfter: 60, message: "you asked \(limit) times in the last minute already; the position comes when the device is online")
        }
        _ = try await monitoring.addAlertAnswer(AlertAnswer(device: device.id, alertID: alertID, monitorID: account.id, monitorName: account.displayName,
                                                       kind: AlertAnswer.whereAreYou, text: nil, createdMs: nowMs))
        await hub.publish(HubEvent(kind: .answer, account: runnerID, subject: device.id))
        return Response(status: .seeOther, headers: [.location: "/watch", .cacheControl: "no-store"])
    }

    /// `GET /v1/device/answers?after=ID&wait=S`: the device's answers after `after`; with
    /// `wait`, held until one comes or `wait` seconds pass (a long-poll).
    private func deviceAnswers(_ request: Request, _ context: DeviceContext) async throws -> Response {
        let device = context.device
        let query = request.uri.queryParameters
        var after: Int64 = 0
        if let text = query.get("after") {
            guard let value = Int64(text), value >= 0 else {
                throw APIError.badRequest("invalid_query", "query parameter 'after' is \(WireLimits.quoted(text)); expected an answer id (0 or more)")
            }
            after = value
        }
        let waitMax = Int(monitorSettings.answerWaitMax.components.seconds)
        var wait = 0
        if let text = query.get("wait") {
            guard let value = Int(text), (0...waitMax).contains(value) else {
                throw APIError.badRequest("invalid_query", "query parameter 'wait' is \(WireLimits.quoted(text)); expected seconds, 0 to \(waitMax)")
            }
            wait = value
        }
        let limit = 100
        var answers = try await monitoring.alertAnswers(device: device.id, after: after, limit: limit)
        if answers.isEmpty, wait > 0 {
            // A long-poll holds a connection: only a few per device (issue 31).
            let slot = try holds.longPollSlot(device: device.id, limit: connections.longPollsPerDevice)
            defer { slot.release() }
            let subscription = hub.subscribe(bufferingNewest: 16)
            defer { subscription.end() }
            // Read again once subscribed: an answer stored in between is not missed.
            answers = try await monitoring.alertAnswers(device: device.id, after: after, limit: limit)
            if answers.isEmpty {
                let timeout = Task {
                    try? await Task.sleep(for: .seconds(wait))
                    subscription.end()
                }
                defer { timeout.cancel() }
                for await signal in subscription.signals {
                    if case .event(let event) = signal, event.kind == .answer, event.subject == device.id { break }
                }
                answers = try await monitoring.alertAnswers(device: device.id, after: after, limit: limit)
            }
        }
        let items = answers.map {
            AlertAnswerItem(id: $0.id, alert_id: $0.alertID, from: $0.monitorName, kind: $0.kind, text: $0.text,
                            time: WireTime.text(milliseconds: $0.createdMs))
        }
        return try JSONInput.encode(AlertAnswersReply(answers: items, last_id: answers.last?.id ?? after))
    }
}
