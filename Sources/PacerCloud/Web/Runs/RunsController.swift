import Foundation
import Hummingbird
import PacerContract

/// The runner's pages: their runs (all the account's devices'), a run's map, charts, splits and
/// zones, statistics with records and distance goals, and the settings these use. Another
/// account's run or goal is 404, the same as none, so ids cannot be probed.
extension CloudRoutes {
    /// Runs on one page of the list.
    static let runsPerPage = 20

    func addRunnerRoutes(_ web: PolicedRoutes) {
        web.on(.get, "runs", SignedInAccess()) { request, context in try await runsPage(request, context) }
        web.on(.get, "runs/:run_id", SignedInAccess()) { _, context in try await runPage(context) }
        web.on(.get, "stats", SignedInAccess()) { _, context in try await statsPage(context) }
        web.on(.get, "heart", SignedInAccess()) { _, context in
            let (account, session) = try signedIn(context)
            return try await heartPage(account, session)
        }
        web.on(.post, "goals", SignedInAccess()) { request, context in try await saveGoal(request, context, id: nil) }
        web.on(.post, "goals/:goal_id", SignedInAccess()) { request, context in
            try await saveGoal(request, context, id: context.parameters.get("goal_id") ?? "")
        }
        web.on(.post, "goals/:goal_id/delete", SignedInAccess()) { request, context in try await deleteGoal(request, context) }
        web.on(.post, "account/settings", SignedInAccess()) { request, context in try await saveSettings(request, context) }
    }

    private func signedIn(_ context: CloudRequestContext) throws -> (Account, StoredSession) {
        guard let account = context.account, let session = context.session else { throw WebRefusal.signInFirst }
        return (account, session)
    }

    // MARK: the list

    private func runsPage(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let (account, session) = try signedIn(context)
        let calendar = RunnerCalendar(account.timezone)
        let query = request.uri.queryParameters
        let fromText = query["from"].map(String.init) ?? "", toText = query["to"].map(String.init) ?? ""
        var values: [String: Any] = ["from": fromText, "to": toText, "filtered": !fromText.isEmpty || !toText.isEmpty]
        let refuse = { (message: String) in WebRefusal.form(.badRequest, page: .runs, message: message, values: ["from": fromText, "to": toText]) }
        // Digits only (PlanDates.day), as the spec's format date says: Int() alone takes "+001".
        let day = { (text: String, plusDays: Int) in PlanDates.day(text) == nil ? nil : calendar.dayStartMs(text, plusDays: plusDays) }
        let fromMs = try fromText.isEmpty ? nil : day(fromText, 0).orThrow(refuse("from: '\(fromText.prefix(20))' is not a date like 2026-05-10"))
        let toMs = try toText.isEmpty ? nil : day(toText, 1).orThrow(refuse("to: '\(toText.prefix(20))' is not a date like 2026-05-10"))
        if let fromMs, let toMs, fromMs >= toMs { throw refuse("to: the end date is before the start date") }
        let pageText = query["page"].map(String.init) ?? "1"
        // Written as the links write it: "+5" and "05" are no page numbers.
        guard let page = Int(pageText), String(page) == pageText, (1...100_000).contains(page) else { throw refuse("page: '\(pageText.prefix(20))' is not a page number 1, 2, …") }
        let runs = try await store.runs.accountRuns(accountID: account.id, fromMs: fromMs, toMs: toMs, limit: Self.runsPerPage + 1,
                                               offset: (page - 1) * Self.runsPerPage)
        values["runs"] = runs.prefix(Self.runsPerPage).compactMap { run -> [String: Any]? in
            guard let summary = try? RunItem(run.summary).summary else { return nil }
            var item: [String: Any] = ["id": run.summary.runID, "date": calendar.dateTime(run.summary.startMs),
                                       "distance": RunnerFormat.distance(summary.distance_m), "duration": RunnerFormat.duration(summary.moving_time_s),
                                       "pace": RunnerFormat.pace(summary.avg_pace_s_per_km)]
            if let hr = summary.hr_avg { item["hr"] = "\(Int(hr.rounded())) bpm" }
            return item
        }
        func link(_ page: Int) -> String {
            var parts = ["page=\(page)"]
            if !fromText.isEmpty { parts.append("from=\(fromText)") }
            if !toText.isEmpty { parts.append("to=\(toText)") }
            return "/runs?" + parts.joined(separator: "&")
        }
        if page > 1 { values["newer"] = link(page - 1) }
        if runs.count > Self.runsPerPage { values["older"] = link(page + 1) }
        return WebPage.runs.response(values: values, csrf: session.csrf)
    }

    // MARK: one run

    private func runPage(_ context: CloudRequestContext) async throws -> Response {
        let (account, session) = try signedIn(context)
        let runID = context.parameters.get("run_id") ?? ""
        // Another account's run is answered as no run at all.
        guard (try? Identifiers.runID(runID)) != nil, let run = try await store.runs.accountRun(accountID: account.id, runID: runID) else {
            throw WebRefusal.plain(.notFound, "no run \(runID.prefix(40)) among your runs")
        }
        let summary = try RunItem(run.summary).summary
        let view: RunView
        do { view = try await runView(run) } catch let busy as WorkQueue.Busy { return busy.page() }
        let calendar = RunnerCalendar(account.timezone)
        let (maxHR, maxSource) = try await zoneMaximum(account)
        let zoneSeconds = HeartRateZones.seconds(view.heartRateSeconds, maximum: maxHR)
        let totalZone = max(zoneSeconds.reduce(0, +), 1)
        let zones: [[String: Any]] = zip(HeartRateZones.ranges(maximum: maxHR), zoneSeconds).map { zone, seconds in
            ["name": zone.name, "range": zone.range, "time": RunnerFormat.duration(seconds), "share": String(Int((100 * seconds / totalZone).rounded()))]
        }
        // A whole split shows the kilometre it ends at; the shorter rest, the run's distance.
        let splitM = Double(view.splitKm) * 1_000
        let splits: [[String: Any]] = view.splits.map { split in
            ["km": split.meters >= splitM - 0.5 ? String(split.km) : String(format: "%.2f", Double(split.km - view.splitKm) + split.meters / 1_000),
             "time": RunnerFormat.duration(split.seconds), "pace": RunnerFormat.pace(split.seconds * 1_000 / max(split.meters, 1)),
             "hr": split.hrAvg.map { String(Int($0)) } ?? "–"]
        }
        let data = RunPageData(track: view.track, kmMarks: view.kmMarks, km: view.chartKm, pace: view.pace, hr: view.heartRate)
        let json = try Self.scriptData(data)
        var values: [String: Any] = [
            "title": "Run of " + calendar.dateTime(run.summary.startMs), "date": calendar.dateTime(run.summary.startMs), "run_id": runID,
            "distance": RunnerFormat.distance(summary.distance_m), "duration": RunnerFormat.duration(summary.moving_time_s),
            "pace": RunnerFormat.pace(summary.avg_pace_s_per_km), "splits": splits, "zones": zones, "max_hr": String(maxHR),
            "split_km": view.splitKm > 1 ? String(view.splitKm) : false,
            "default_max": maxSource == .standard, "device_max": maxSource == .device, "has_hr": !view.heartRateSeconds.isEmpty, "data": json,
            "tiles": configuration.map.tileURL ?? "", "attribution": configuration.map.tileAttribution,
            "stylesheet": "/assets/leaflet/leaflet.css", "referrer": Self.runPageReferrer,
        ]
        if let hr = summary.hr_avg { values["hr_avg"] = "avg \(Int(hr.rounded())) bpm" + (summary.hr_max.map { ", max \($0)" } ?? "") }
        if let workout = summary.workout_name { values["workout"] = workout }
        if let occurrenceID = summary.planned_session_id,
           let followed = try await followedOccurrence(account, occurrenceID: occurrenceID, startMs: run.summary.startMs) {
            values["followed"] = ["session": followed.session.id, "name": followed.session.name, "date": followed.date]
        }
        return WebPage.run.response(values: values, csrf: session.csrf, headers: runPageHeaders)
    }

    /// Tile servers want to know the site their tiles are shown on (OpenStreetMap's refuses
    /// requests without a Referer): the origin only, never the run's path.
    static let runPageReferrer = "strict-origin"

    var runPageHeaders: HTTPFields {
        var headers = SecurityHeaders.html(style: WebPage.style, formAction: "'self'", scripts: true,
                                           images: ["'self'"] + (configuration.map.tileOrigin.map { [$0] } ?? []))
        headers[.init("Referrer-Policy")!] = Self.runPageReferrer
        return headers
    }

    /// The run's stored view, computed from its track (and stored) when there is none yet for
    /// this summary and version. The computing is `heavyWork`'s: it throws `WorkQueue.Busy` when
    /// that is full. A stored view is read here: it is bounded (2,000 points of the map, 500
    /// splits, 500 of each chart) and quick to decode. `background`: no request waits for it.
    func runView(_ run: AccountRun, background: Bool = false) async throws -> RunView {
        let source = RunView.source(summaryJSON: run.summary.json)
        if let stored = try await store.runs.runView(device: run.deviceID, runID: run.summary.runID, source: source),
           let view = try? JSONDecoder().decode(RunView.self, from: Data(stored.utf8)) {
            return view
        }
        // Counted before any chunk is read: a run stored before the caps may be larger.
        let stored = try await store.runs.storedSamples(device: run.deviceID, runID: run.summary.runID, below: run.summary.chunks, excluding: nil)
        guard stored <= TrackChunkFormat.maxSamplesPerRun else {
            throw WebRefusal.plain(.contentTooLarge, "run \(run.summary.runID) has more than \(TrackChunkFormat.maxSamplesPerRun) samples")
        }
        var chunks: [StoredChunk] = []
        for seq in 0..<run.summary.chunks {
            guard let chunk = try await store.runs.chunk(device: run.deviceID, runID: run.summary.runID, seq: seq) else {
                throw WebRefusal.plain(.notFound, "run \(run.summary.runID) changed while it was read; reload the page")
            }
            chunks.append(chunk)
        }
        let (runID, read) = (run.summary.runID, chunks)
        let waiting = background ? WorkQueue.backgroundMaxWaiting : nil
        let (view, body, records) = try await heavyWork.run(waiting: waiting) { () throws -> (RunView, String, String) in
            var samples: [ChunkSample] = []
            for chunk in read {
                try TrackChunkFormat.read(chunk.body, gzip: chunk.contentEncoding == "gzip") { samples.append($0) }
                guard samples.count <= TrackChunkFormat.maxSamplesPerRun else {
                    throw WebRefusal.plain(.contentTooLarge, "run \(runID) has more than \(TrackChunkFormat.maxSamplesPerRun) samples")
                }
            }
            let started = ContinuousClock.now
            let view = RunView(samples: samples)
            // How long a view takes, for the operator (and tools/bench-zigzag).
            WorkQueue.logger.info("run view of \(runID): \(samples.count) samples in \(Int((ContinuousClock.now - started) / .milliseconds(1))) ms")
            let encoder = JSONEncoder()
            return (view, String(decoding: try encoder.encode(view), as: UTF8.self), String(decoding: try encoder.encode(view.bestEfforts), as: UTF8.self))
        }
        try await store.runs.putRunView(device: run.deviceID, runID: runID, source: source, body: body, records: records)
        return view
    }

    // MARK: statistics and goals

    /// Reads each run's stored figures (`RunFigures`), never a track: the totals are one light
    /// row per run, the records at most one row per distance.
    private func statsPage(_ context: CloudRequestContext, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let (account, session) = try signedIn(context)
        let calendar = RunnerCalendar(account.timezone)
        let uncounted = try await countNewRuns(account)
        let runs = try await store.health.runTotals(accountID: account.id)

        let best = try await store.health.records(accountID: account.id)
        let records: [[String: Any]] = RunView.recordDistances.compactMap { record in
            best.first { $0.name == record.name }.map {
                ["name": record.name, "time": RunnerFormat.duration($0.seconds), "pace": RunnerFormat.pace($0.seconds * 1_000 / record.meters),
                 "run": $0.runID, "date": calendar.date($0.startMs)]
            }
        }

        // Totals per week, month and year, newest first.
        var periods: [[String: Any]] = []
        var totalsByUnit: [RunnerCalendar.Unit: [Int64: (distance: Double, seconds: Double, runs: Int)]] = [:]
        for (title, unit, shown) in [("Weeks", RunnerCalendar.Unit.week, 12), ("Months", .month, 12), ("Years", .year, 50)] {
            var totals: [Int64: (distance: Double, seconds: Double, runs: Int)] = [:]
            for run in runs {
                let start = calendar.periodStartMs(run.startMs, unit)
                let total = totals[start] ?? (0, 0, 0)
                totals[start] = (total.distance + run.distanceM, total.seconds + run.movingS, total.runs + 1)
            }
            totalsByUnit[unit] = totals
            let rows: [[String: Any]] = totals.keys.sorted(by: >).prefix(shown).map { start in
                let total = totals[start]!
                return ["label": calendar.periodLabel(start, unit), "distance": RunnerFormat.distance(total.distance),
                        "time": RunnerFormat.duration(total.seconds), "runs": String(total.runs)]
            }
            if !rows.isEmpty { periods.append(["title": title, "rows": rows]) }
        }

        // Goals against the current week and month.
        let now = wallClock()
        let goals: [[String: Any]] = try await store.plans.goals(accountID: account.id).map { goal in
            let unit: RunnerCalendar.Unit = goal.period == .week ? .week : .month
            let start = calendar.periodStartMs(now, unit)
            // The period tables' sums: the same runs added in the same order.
            let done = totalsByUnit[unit]?[start]?.distance ?? 0
            let percent = goal.distanceM > 0 ? Int((100 * done / goal.distanceM).rounded(.down)) : 0
            return ["id": goal.id, "label": goal.period == .week ? "This week" : "This month", "done": RunnerFormat.distance(done),
                    "target": RunnerFormat.distance(goal.distanceM), "percent": String(percent), "bar": String(min(percent, 100)),
                    "km": RunnerFormat.number(goal.distanceM / 1_000), "week": goal.period == .week]
        }
        return WebPage.stats.response(status, values: ["goals": goals, "records": records, "periods": periods, "timezone": account.timezone,
                                                       "uncounted": uncounted],
                                      csrf: session.csrf, error: error)
    }

    /// A goal from the form; `id` nil: a new one. Refusals name the field, on the statistics page.
    private func saveGoal(_ request: Request, _ context: CloudRequestContext, id: String?) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let (account, _) = try signedIn(context)
        if let id, UUID(uuidString: id) == nil || id != id.lowercased() { throw WebRefusal.plain(.notFound, "no goal \(id.prefix(40)) of yours") }
        let kmText = (form["distance_km"] ?? "").replacingOccurrences(of: ",", with: ".").trimmingSpaces
        guard let km = Double(kmText), km.isFinite, (0.1...100_000).contains(km) else {
            return try await statsPage(context, error: "distance_km: '\(kmText.prefix(20))' is not a distance in km from 0.1 to 100000",
                                       status: .badRequest)
        }
        guard let period = Goal.Period(rawValue: form["period"] ?? "") else {
            return try await statsPage(context, error: "period: choose week or month", status: .badRequest)
        }
        let goal = Goal(id: id ?? UUID().uuidString.lowercased(), accountID: account.id, period: period, distanceM: km * 1_000)
        guard try await (id == nil ? store.plans.addGoal(goal) : store.plans.updateGoal(goal)) else { throw WebRefusal.plain(.notFound, "no goal \(goal.id) of yours") }
        return Response(status: .seeOther, headers: [.location: "/stats", .cacheControl: "no-store"])
    }

    private func deleteGoal(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        _ = try await WebForm.read(request, context: context)
        let (account, _) = try signedIn(context)
        let id = context.parameters.get("goal_id") ?? ""
        guard try await store.plans.deleteGoal(accountID: account.id, id: id) else { throw WebRefusal.plain(.notFound, "no goal \(id.prefix(40)) of yours") }
        return Response(status: .seeOther, headers: [.location: "/stats", .cacheControl: "no-store"])
    }

    private func saveSettings(_ request: Request, _ context: CloudRequestContext) async throws -> Response {
        let form = try await WebForm.read(request, context: context)
        let (account, session) = try signedIn(context)
        let timezone = (form["timezone"] ?? "").trimmingSpaces
        let maxText = (form["max_hr"] ?? "").trimmingSpaces
        func refuse(_ message: String) -> WebRefusal {
            .form(.badRequest, page: .account, message: message, values: ["display_name": account.displayName, "email": account.email,
                                                                           "timezone": account.timezone, "max_hr": maxText], csrf: session.csrf)
        }
        guard timezone.utf8.count <= 64, TimeZone(identifier: timezone) != nil else {
            throw refuse("timezone: '\(timezone.prefix(64))' is not a time zone name like Europe/Rome or UTC")
        }
        var maxHR: Int?
        if !maxText.isEmpty {
            guard let value = Int(maxText), (100...240).contains(value) else { throw refuse("max_hr: '\(maxText.prefix(10))' is not a heart rate from 100 to 240 bpm") }
            maxHR = value
        }
        try await store.accounts.setAccountSettings(id: account.id, timezone: timezone, maxHeartRate: maxHR)
        return Response(status: .seeOther, headers: [.location: "/account", .cacheControl: "no-store"])
    }
}

/// The run page's data block: what run.js draws.
struct RunPageData: Encodable {
    var track: [[Double]]
    var kmMarks: [[Double]]
    var km: [Double]
    var pace: [Double?]
    var hr: [Double?]
}

extension Optional {
    func orThrow(_ error: @autoclosure () -> some Error) throws -> Wrapped {
        guard let value = self else { throw error() }
        return value
    }
}
