import CloudModel
import CloudStore
import Foundation
import Hummingbird
import ServiceLifecycle

/// Races for runners and spectators (#34): find races by name or near a place, make one, a
/// race's page with its live map and leaderboard, enrol ("Participate"), observe.
struct RacesController: Sendable {
    let races: RaceRepository
    let access: RaceAccessCheck
    let frames: RaceFrames
    let heavyWork: WorkQueue
    let map: MapSettings
    let settings: RaceSettings
    let linkBase: String
    let wallClock: @Sendable () -> Int64
    /// Over streets (PostgreSQL with pgRouting); nil: this store cannot.
    let routeCalculator: RouteCalculator?

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "races", SignedInAccess()) { request, context in try await listPage(request, context) }
        web.on(.get, "races/new", SignedInAccess()) { _, context in newPage(context) }
        web.on(.post, "races", SignedInAccess()) { request, context in try await create(request, context) }
        let why = "an open race's page is its share link; an invitation race answers 404 without its link's code or a part in it"
        web.on(.get, "races/:race", PublicAccess(why: why)) { request, context in try await racePage(request, context) }
        web.on(.get, "races/:race/frame", PublicAccess(why: why)) { request, context in try await frameJSON(request, context) }
        web.on(.get, "races/:race/live", PublicAccess(why: why)) { request, context in try await live(request, context) }
        web.on(.post, "races/:race/enrol", SignedInAccess()) { request, context in try await enrol(request, context) }
        web.on(.post, "races/:race/withdraw", SignedInAccess()) { request, context in try await withdraw(request, context) }
        web.on(.post, "races/:race/observe", SignedInAccess()) { request, context in try await observe(request, context) }
    }

    // MARK: Finding races

    static let searchLimit = 50
    static let defaultWithinKm = 50.0

    private func listPage(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let query = request.uri.queryParameters
        let name = query["q"].map { String($0).trimmingSpaces } ?? ""
        let nearText = query["near"].map { String($0).trimmingSpaces } ?? ""
        let withinText = query["within_km"].map { String($0).trimmingSpaces } ?? ""
        let account = context.account
        let format = RaceFormat(account: account)
        var values: [String: Any] = ["q": name, "near": nearText, "within_km": withinText]
        values["mine"] = try await races.racesOf(accountID: account.id, limit: Self.searchLimit).map { race, organises, bib -> [String: Any] in
            var row = format.summary(race)
            row["role"] = organises ? "you organise it" : bib.map { "you run it, bib \($0)" } ?? "you observe it"
            return row
        }
        guard !name.isEmpty || !nearText.isEmpty else { return WebPage.races.response(values: values, csrf: context.session.csrf) }
        guard name.count <= RaceLimits.maxNameLength else {
            throw WebRefusal.form(.badRequest, page: .races, message: "q: at most \(RaceLimits.maxNameLength) characters", values: values.strings)
        }
        var near: LatLon?
        if !nearText.isEmpty {
            switch RaceRules.parsedWaypoints(nearText + "\n" + nearText) {
            case .success(let points): near = points[0]
            case .failure:
                throw WebRefusal.form(.badRequest, page: .races, message: "near: a place as \"latitude, longitude\", like 45.4642, 9.1900",
                                      values: values.strings)
            }
        }
        var withinKm = Self.defaultWithinKm
        if !withinText.isEmpty {
            guard let km = RaceRules.number(withinText), (1...500).contains(km) else {
                throw WebRefusal.form(.badRequest, page: .races, message: "within_km: a number of km from 1 to 500", values: values.strings)
            }
            withinKm = km
        }
        let found = try await races.findRaces(name: name.isEmpty ? nil : name, near: near, radiusM: withinKm * 1_000,
                                             fromMs: wallClock() - 12 * 3_600_000, limit: Self.searchLimit)
        values["found"] = found.map { race -> [String: Any] in
            var row = format.summary(race)
            if let near { row["away"] = RunnerFormat.distance(race.start.distanceM(to: near)) + " away" }
            return row
        }
        values["searched"] = true
        return WebPage.races.response(values: values, csrf: context.session.csrf)
    }

    // MARK: Making a race

    private func newPage(_ context: SignedInContext) -> Response {
        WebPage.raceNew.response(values: newFormValues([:], plan: .straight, access: .open, routing: routeCalculator != nil), csrf: context.session.csrf)
    }

    func newFormValues(_ typed: [String: String], plan: RoutePlan, access: RaceAccess, routing: Bool) -> [String: Any] {
        // Strings only: a refused form is shown again from its text values ("1": checked).
        var values: [String: Any] = typed
        values["plan_\(plan.rawValue)"] = "1"
        values["access_\(access.rawValue)"] = "1"
        if routing { values["routing"] = "1" }
        values["max_stages"] = String(RaceLimits.maxStages)
        values["max_km"] = String(Int(RaceLimits.maxLengthM / 1_000))
        return values
    }

    /// The most a new-race form takes, its GPX file included.
    static let maxFormBytes = 8 << 20

    private func create(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let account = context.account
        let (body, boundary) = try await MultipartForm.collect(request, maxBytes: Self.maxFormBytes)
        let form = try await heavyWork.run { try MultipartForm.parse(body, boundary: boundary, maxFileBytes: Self.maxFormBytes) }
        guard let sent = form.fields["csrf"], WebForm.constantTimeEqual(sent, context.session.csrf) else {
            throw WebRefusal.plain(.forbidden, "the form's csrf field does not match this browser's session: reload the page and send it again")
        }
        let typed = ["name": form.fields["name"] ?? "", "starts": form.fields["starts"] ?? "", "closes": form.fields["closes"] ?? "",
                     "waypoints": form.fields["waypoints"] ?? ""]
        let plan = RoutePlan(rawValue: form.fields["plan"] ?? "straight")
        let raceAccess = RaceAccess(rawValue: form.fields["access"] ?? "open")
        let routing = routeCalculator != nil
        func refuse(_ message: String) -> WebRefusal {
            .form(.badRequest, page: .raceNew, message: message,
                  values: newFormValues(typed, plan: plan ?? .straight, access: raceAccess ?? .open, routing: routing).strings, csrf: context.session.csrf)
        }
        let name = try RaceRules.validatedName(typed["name"]!).mapError { refuse($0.message) }.get()
        let calendar = RunnerCalendar(account.timezone)
        let nowMs = wallClock()
        guard let startsMs = calendar.localTimeMs(typed["starts"]!) else {
            throw refuse("starts: a date and time, like 2026-12-06T09:30 (in \(account.timezone))")
        }
        guard startsMs > nowMs else { throw refuse("starts: the start must be in the future") }
        guard startsMs < nowMs + 2 * 365 * 86_400_000 else { throw refuse("starts: at most two years ahead") }
        var closesMs = startsMs
        if !typed["closes"]!.isEmpty {
            guard let closes = calendar.localTimeMs(typed["closes"]!) else { throw refuse("closes: a date and time, like 2026-12-05T20:00") }
            guard closes <= startsMs else { throw refuse("closes: registration must close by the start") }
            closesMs = closes
        }
        guard let raceAccess else { throw refuse("access: open or invitation") }
        guard let plan else { throw refuse("plan: straight, gpx or calculated") }
        // A GPX course has its own ends: the waypoints are then not asked for.
        let waypoints = plan == .gpx ? [] : try RaceRules.parsedWaypoints(typed["waypoints"]!).mapError { refuse($0.message) }.get()
        let path: [LatLon]
        switch plan {
        case .straight:
            path = waypoints
        case .gpx:
            guard let file = form.files.first, !file.bytes.isEmpty else { throw refuse("file: choose the GPX file of the course") }
            do {
                let bytes = file.bytes
                path = try await heavyWork.run { try GPXCourseReader.course(bytes) }
            } catch let error as ImportError {
                throw refuse("file: \(error.description)")
            }
        case .calculated:
            guard let routeCalculator else {
                throw refuse("plan: calculated routes need the PostgreSQL store with street data (pgRouting); draw the path with "
                             + "straight legs or upload a GPX")
            }
            do { path = try await routeCalculator.route(through: waypoints, maxLengthM: RaceLimits.maxLengthM) } catch let error as RouteError {
                throw refuse("waypoints: \(error.message)")
            }
        }
        let lengthM = try RaceRules.measured(path).mapError { refuse($0.message) }.get()
        let race = Race(id: UUID().uuidString.lowercased(), ownerID: account.id, name: name, timezone: account.timezone, startsMs: startsMs,
                        closesMs: closesMs, access: raceAccess, inviteCode: Tokens.random(), waypoints: plan == .gpx ? [path[0], path[path.count - 1]] : waypoints,
                        path: path, lengthM: lengthM, routePlan: plan, createdMs: nowMs)
        guard try await races.addRace(race, limit: RaceLimits.maxOrganisedRaces) else {
            throw WebRefusal.plain(.conflict, "You organise \(RaceLimits.maxOrganisedRaces) races, the most an account may: delete one first")
        }
        return RunManagementController.seeOther("/races/\(race.id)/manage")
    }

    // MARK: A race's page

    private func raceID(_ context: some RequestContext) -> String { context.parameters.get("race") ?? "" }

    private func code(_ request: Request) -> String? {
        request.uri.queryParameters["code"].map(String.init).flatMap { $0.isEmpty || $0.count > 100 ? nil : $0 }
    }

    private func racePage(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let seen = try await access.race(raceID(context), account: context.account, code: code(request))
        let frame = try await frames.current(raceID: seen.race.id)
        let values = try RacePageValues.make(seen, frame: frame, account: context.account, nowMs: wallClock(), map: map, linkBase: linkBase)
        return WebPage.race.response(values: values, csrf: context.session?.csrf, headers: RunsController.pageHeaders(map: map, connect: true))
    }

    private func frameJSON(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let seen = try await access.race(raceID(context), account: context.account, code: code(request))
        guard let frame = try await frames.current(raceID: seen.race.id) else {
            return try JSONInput.encode(RaceFrame.make(race: seen.race, entries: [], seq: 0, nowMs: wallClock()).view(following: []))
        }
        return try JSONInput.encode(frame.view(following: try Self.followed(request)))
    }

    /// `?follow=12,15,7`: the bibs a spectator follows with every fix.
    static func followed(_ request: Request) throws -> [Int] {
        guard let text = request.uri.queryParameters["follow"].map(String.init), !text.isEmpty else { return [] }
        let parts = text.split(separator: ",", omittingEmptySubsequences: true)
        guard parts.count <= RaceLimits.maxFollowed, text.count <= 100 else {
            throw APIError(.badRequest, "invalid_field", "follow: at most \(RaceLimits.maxFollowed) bibs, separated by commas")
        }
        return try parts.map { part in
            guard let bib = Int(String(part).trimmingSpaces), (1...RaceLimits.maxRunners).contains(bib) else {
                throw APIError(.badRequest, "invalid_field", "follow: '\(part.prefix(12))' is not a bib number")
            }
            return bib
        }
    }

    /// The race's live stream: a `frame` event with each new frame (the top of the board, the
    /// markers of a small race, the density), a `follow` event with the followed runners' rows,
    /// a comment as heartbeat. Bounded per instance (`RaceSettings.maxStreams`) and in time.
    private func live(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let seen = try await access.race(raceID(context), account: context.account, code: code(request))
        let followed = try Self.followed(request)
        guard frames.watcherCount < settings.maxStreams else {
            throw APIError(.serviceUnavailable, "busy", "too many spectators on this server right now; try again in a few seconds")
        }
        let updates = await frames.watch(raceID: seen.race.id)
        let settings = settings
        var headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store"]
        headers[.init("X-Accel-Buffering")!] = "no"
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            // One stream of what to write, so one loop writes: frames, heartbeats, and its end.
            // `boardDue`: the board held back by `boardEvery` is sent once its time comes, so the
            // last change of a quiet race is never left unsent.
            enum Next: Sendable { case frame(RaceFrameUpdate), heartbeat, boardDue }
            let (next, feed) = AsyncStream.makeStream(of: Next.self, bufferingPolicy: .bufferingNewest(2))
            try await writer.write(ByteBuffer(string: "retry: 3000\n: connected\n\n"))
            try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await update in updates { feed.yield(.frame(update)) }
                        feed.finish()
                    }
                    group.addTask {
                        while true {
                            try await Task.sleep(for: settings.heartbeat)
                            feed.yield(.heartbeat)
                        }
                    }
                    group.addTask {
                        try await Task.sleep(for: settings.streamLifetime)
                        feed.finish()
                    }
                    defer { group.cancelAll() }
                    let clock = ContinuousClock()
                    var boardSent: ContinuousClock.Instant?
                    var heldBoard: RaceFrameUpdate?
                    for await item in next {
                        switch item {
                        case .frame(let update):
                            let now = clock.now
                            if let sent = boardSent, now - sent < settings.boardEvery {
                                // One wake-up per held board: set when the first is held.
                                if heldBoard == nil {
                                    let wait = settings.boardEvery - (now - sent)
                                    group.addTask {
                                        try await Task.sleep(for: wait)
                                        feed.yield(.boardDue)
                                    }
                                }
                                heldBoard = update
                            } else {
                                try await writer.write(update.shared)
                                boardSent = now
                                heldBoard = nil
                            }
                            if let follow = update.followEvent(bibs: followed) { try await writer.write(follow) }
                        case .boardDue:
                            if let held = heldBoard {
                                try await writer.write(held.shared)
                                boardSent = clock.now
                                heldBoard = nil
                            }
                        case .heartbeat:
                            try await writer.write(ByteBuffer(string: ": keepalive\n\n"))
                        }
                    }
                }
            } onGracefulShutdown: {
                feed.finish()
            }
            try await writer.finish(nil)
        })
    }

    // MARK: Participate, observe

    private func enrol(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let seen = try await access.race(raceID(context), account: context.account, code: form["code"])
        let race = seen.race
        // An invitation race takes runners through its link only (an observer may not enrol itself).
        guard race.access == .open || seen.code != nil else {
            throw WebRefusal.plain(.forbidden, "code: this race is by invitation: open the registration link its organisers sent you")
        }
        let nowMs = wallClock()
        guard nowMs <= race.closesMs else {
            throw WebRefusal.plain(.conflict, "Registration for \(race.name) closed \(RunnerCalendar(race.timezone).dateTime(race.closesMs))")
        }
        switch try await races.enrol(raceID: race.id, accountID: context.account.id, nowMs: nowMs, limit: RaceLimits.maxRunners) {
        case .enrolled, .already: break
        case .full: throw WebRefusal.plain(.conflict, "\(race.name) has \(RaceLimits.maxRunners) runners, the most a race takes")
        }
        return RunManagementController.seeOther("/races/\(race.id)")
    }

    private func withdraw(_ request: Request, _ context: SignedInContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        let seen = try await access.race(raceID(context), account: context.account, code: nil)
        guard seen.entry != nil else { throw WebRefusal.plain(.notFound, "you are not enrolled in \(seen.race.name)") }
        guard wallClock() < seen.race.startsMs else {
            throw WebRefusal.plain(.conflict, "\(seen.race.name) has started: ask its organisers to take you off")
        }
        if try await races.withdraw(raceID: seen.race.id, accountID: context.account.id) { frames.noteChange(raceID: seen.race.id) }
        return RunManagementController.seeOther("/races/\(seen.race.id)")
    }

    private func observe(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let seen = try await access.race(raceID(context), account: context.account, code: form["code"])
        try await races.observe(raceID: seen.race.id, accountID: context.account.id, form["on"] != "0")
        return RunManagementController.seeOther("/races/\(seen.race.id)" + (seen.code.map { "?code=" + $0 } ?? ""))
    }
}
