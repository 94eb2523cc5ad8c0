import CloudModel
import CloudStore
import Export
import Foundation
import Hummingbird
import PacerContract

/// The runner's runs (all the account's devices'): the list, a run's map, charts, splits and
/// zones, and each run downloaded as GPX, TCX or FIT (the Export module's writers, as
/// `pacerctl runs export`). Another account's run is 404, the same as none, so ids cannot be
/// probed.
struct RunsController: Sendable {
    let runs: RunRepository
    let devices: DeviceRepository
    /// Shoes due for replacing, said on the list.
    let shoes: ShoeRepository
    /// The zones' maximum, from the devices' heartbeats.
    let heartbeats: Heartbeats
    /// The run's view, computed once.
    let analysis: RunAnalysis
    /// The planned session the run followed.
    let following: PlanFollowing
    /// The map's tiles.
    let map: MapSettings
    /// A run others may see (a monitor's view).
    let management: RunManagementController

    /// Runs on one page of the list.
    static let runsPerPage = 20

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "runs", SignedInAccess()) { request, context in try await runsPage(request, context) }
        web.on(.get, "runs/:run_id", SignedInAccess()) { _, context in try await runPage(context) }
        for format in FileFormat.allCases {
            web.on(.get, "runs/:run_id/export.\(format.fileExtension)", SignedInAccess()) { _, context in
                try await exportRun(format, context)
            }
        }
    }

    // MARK: the list

    private func runsPage(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
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
        let runs = try await self.runs.accountRuns(accountID: account.id, fromMs: fromMs, toMs: toMs, limit: Self.runsPerPage + 1,
                                               offset: (page - 1) * Self.runsPerPage)
        values["runs"] = runs.prefix(Self.runsPerPage).compactMap { run -> [String: Any]? in
            guard let summary = try? RunItem(run.summary).summary else { return nil }
            var item: [String: Any] = ["id": run.summary.runID, "date": calendar.dateTime(run.summary.startMs),
                                       "distance": RunnerFormat.distance(summary.distance_m), "duration": RunnerFormat.duration(summary.moving_time_s),
                                       "pace": RunnerFormat.pace(summary.avg_pace_s_per_km, sport: run.activity.sport)]
            if let hr = summary.hr_avg { item["hr"] = "\(Int(hr.rounded())) bpm" }
            if run.activity.sport != .run { item["run_sport"] = run.activity.sport.label }
            if let title = run.activity.title { item["run_title"] = title }
            if let doubt = run.activity.doubt { item["run_doubt"] = doubt }
            return item
        }
        func link(_ page: Int) -> String {
            var parts = ["page=\(page)"]
            if !fromText.isEmpty { parts.append("from=\(fromText)") }
            if !toText.isEmpty { parts.append("to=\(toText)") }
            return "/runs?" + parts.joined(separator: "&")
        }
        values["due_shoes"] = try await shoes.shoes(accountID: account.id).filter(\.isDue).map { shoe -> [String: Any] in
            ["name": shoe.name, "distance": RunnerFormat.distance(shoe.distanceM), "remind": shoe.remindM.map { RunnerFormat.distance($0) } ?? ""]
        }
        if page > 1 { values["newer"] = link(page - 1) }
        if runs.count > Self.runsPerPage { values["older"] = link(page + 1) }
        return WebPage.runs.response(values: values, csrf: session.csrf)
    }

    // MARK: one run

    private func runPage(_ context: SignedInContext) async throws -> Response {
        let (account, session) = (context.account, context.session)
        let runID = context.parameters.get("run_id") ?? ""
        // Another account's run is answered as no run at all, unless its runner shows it to the
        // viewer as their monitor.
        guard (try? Identifiers.runID(runID)) != nil else { throw WebRefusal.plain(.notFound, "no run \(runID.prefix(40)) among your runs") }
        guard let managed = try await runs.ownRun(accountID: account.id, runID: runID) else {
            guard let watched = try await runs.monitoredRun(monitorID: account.id, runID: runID) else {
                throw WebRefusal.plain(.notFound, "no run \(runID.prefix(40)) among your runs")
            }
            return try await management.monitoredPage(watched, viewer: account)
        }
        let run = managed.run
        let summary = try RunItem(run.summary).summary
        let view: RunView
        do { view = try await analysis.runView(run) } catch let busy as WorkQueue.Busy { return busy.page() }
        let calendar = RunnerCalendar(account.timezone)
        let (maxHR, maxSource) = try await zoneMaximum(account)
        let zoneSeconds = HeartRateZones.seconds(view.heartRateSeconds, maximum: maxHR)
        let totalZone = max(zoneSeconds.reduce(0, +), 1)
        let zones: [[String: Any]] = zip(HeartRateZones.ranges(maximum: maxHR), zoneSeconds).map { zone, seconds in
            ["name": zone.name, "range": zone.range, "time": RunnerFormat.duration(seconds), "share": String(Int((100 * seconds / totalZone).rounded()))]
        }
        let date = calendar.dateTime(run.summary.startMs)
        var values = try RunPageValues.common(summary: summary, view: view, date: date, sport: managed.details.sport)
        let heading = RunPageValues.heading(managed.details, date: date)
        values.merge([
            "title": heading, "heading": heading, "run_id": runID, "sport": managed.details.sport.label,
            "visibility": RunManagementController.label(managed.details.visibility), "zones": zones, "max_hr": String(maxHR),
            "default_max": maxSource == .standard, "device_max": maxSource == .device,
            "tiles": map.tileURL ?? "", "attribution": map.tileAttribution, "has_map": view.track.count > 1,
        ]) { $1 }
        if let notes = managed.details.notes { values["notes"] = notes }
        if let workout = summary.workout_name { values["workout"] = workout }
        // The view's verdict is the newest (the list's column is written with it).
        if let doubt = view.doubt ?? managed.details.doubt { values["doubt"] = doubt }
        if let occurrenceID = summary.planned_session_id,
           let followed = try await following.followedOccurrence(account, occurrenceID: occurrenceID, startMs: run.summary.startMs) {
            values["followed"] = ["session": followed.session.id, "name": followed.session.name, "date": followed.date]
        }
        return WebPage.run.response(values: values, csrf: session.csrf, headers: runPageHeaders)
    }

    var runPageHeaders: HTTPFields { Self.pageHeaders(map: map) }

    /// A page with the run's map and charts: its scripts, and the tile server's images.
    /// `connect`: the page's script reads from this server too (a race's live stream).
    static func pageHeaders(map: MapSettings, connect: Bool = false) -> HTTPFields {
        var headers = SecurityHeaders.html(style: WebPage.style, formAction: "'self'", scripts: true,
                                           images: ["'self'"] + (map.tileOrigin.map { [$0] } ?? []), connect: connect ? "'self'" : nil)
        headers[.init("Referrer-Policy")!] = PageData.mapReferrer
        return headers
    }

    /// The account's own setting, else the newest `max_hr_bpm` its devices sent, else the default.
    private func zoneMaximum(_ account: Account) async throws -> (Int, ZoneMaximum.Source) {
        if let own = account.maxHeartRate { return (own, .account) }
        return ZoneMaximum.of(account, states: try await heartbeats.newest(of: try await devices.devices(accountID: account.id)))
    }

    // MARK: exports

    /// The signed-in account's complete run `run_id`, on whichever of its devices it is; 404
    /// for any other (another account's run is not said to exist).
    private func ownRun(_ context: SignedInContext) async throws -> (device: String, item: RunItem, chunks: Int, activity: RunActivity) {
        let account = context.account
        let text = context.parameters.get("run_id") ?? ""
        let notFound = WebRefusal.plain(.notFound, "run \(WireLimits.quoted(text)): you have no complete run with this id")
        guard let runID = try? Identifiers.runID(text), let run = try await runs.accountRun(accountID: account.id, runID: runID) else {
            throw notFound
        }
        return (run.deviceID, try RunItem(run.summary), run.summary.chunks, run.activity)
    }

    private func exportRun(_ format: FileFormat, _ context: SignedInContext) async throws -> Response {
        let (device, item, chunks, activity) = try await ownRun(context)
        let samples = try await runs.storedSamples(device: device, runID: item.run_id, below: chunks, excluding: nil)
        guard samples <= TrackChunkFormat.maxSamplesPerRun else {
            throw WebRefusal.plain(.contentTooLarge, "run \(item.run_id) has \(samples) samples; at most \(TrackChunkFormat.maxSamplesPerRun) are served")
        }
        let (runID, summary) = (item.run_id, item.summary)
        let document = TrackStream { ExportTrackDocument(format: format, runID: runID, summary: summary, title: activity.title, sport: activity.sport) }
        let day = String(summary.start_time.prefix(10))
        return Response(
            status: .ok,
            headers: [.contentType: format.contentType, .cacheControl: "no-store",
                      .contentDisposition: "attachment; filename=\"pacer-\(day)-\(runID.prefix(8)).\(format.fileExtension)\""],
            body: document.body(runs: runs, chunks: TrackStream.Chunks(device: device, runID: runID, count: chunks)))
    }
}

/// The run page's data block: what run.js draws.
struct RunPageData: Encodable {
    /// "km" or "mi": what `marks`, `distance` and the pace (seconds per unit) are in.
    var unit: String
    /// lat, lon, lat, lon, …
    var track: FlatPairs
    var marks: [[Double]]
    var distance: [Double]
    var pace: [Double?]
    var hr: [Double?]
    /// Height above sea level at each chart point, in `heightUnit` ("m" or "ft"); empty without altitude.
    var elevation: [Double?]
    var heightUnit: String
    /// The charts' value axes over the body of the data (`ChartAxis`): [min, max].
    var paceAxis: [Double]?
    var hrAxis: [Double]?
}

extension Optional {
    func orThrow(_ error: @autoclosure () -> some Error) throws -> Wrapped {
        guard let value = self else { throw error() }
        return value
    }
}
