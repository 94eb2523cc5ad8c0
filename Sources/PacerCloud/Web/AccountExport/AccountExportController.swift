import CloudModel
import CloudStore
import Export
import Foundation
import Gzip
import Hummingbird
import PacerContract
import Synchronization

/// Everything of the account in one ZIP (#33): every activity as FIT and GPX, and the account's
/// own data as JSON (its settings, devices, goals, plan, shoes, who watches over it and whom it
/// watches, and each activity's summary, name, notes, sport and visibility). Made as it is sent,
/// one run's chunk at a time (`ZipWriter`); one export per account at a time.
struct AccountExportController: Sendable {
    let store: CloudStore
    let wallClock: @Sendable () -> Int64
    /// Accounts whose export is being made.
    let making = ExportsInProgress()

    /// Runs read per page while the archive is made.
    static let runsPerRead = 100

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "account/export", SignedInAccess()) { _, context in try export(context) }
    }

    final class ExportsInProgress: Sendable {
        private let accounts = Mutex<Set<String>>([])

        /// The account's export, until the ticket goes: with the response's body, however it ends
        /// (written, failed, or never started because the client left first).
        final class Ticket: Sendable {
            let gate: ExportsInProgress, accountID: String
            init(gate: ExportsInProgress, accountID: String) { (self.gate, self.accountID) = (gate, accountID) }
            deinit { _ = gate.accounts.withLock { $0.remove(accountID) } }
        }

        func begin(_ id: String) -> Ticket? { accounts.withLock { $0.insert(id).inserted } ? Ticket(gate: self, accountID: id) : nil }
    }

    private func export(_ context: SignedInContext) throws -> Response {
        let account = context.account
        guard let ticket = making.begin(account.id) else {
            throw WebRefusal.tooManyAttempts(retryAfter: 60, message: "Your export is being made already: wait for that download to end")
        }
        let nowMs = wallClock()
        let day = String(WireTime.text(milliseconds: nowMs).prefix(10))
        let store = store
        let body = ResponseBody { writer in
            withExtendedLifetime(ticket) {}
            try await Self.write(account: account, store: store, nowMs: nowMs) { bytes in
                if !bytes.isEmpty { try await writer.write(ByteBuffer(bytes: bytes)) }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "application/zip", .cacheControl: "no-store",
                                               .contentDisposition: "attachment; filename=\"pacer-export-\(day).zip\""], body: body)
    }

    /// The archive, handed to `send` as it is made.
    static func write(account: Account, store: CloudStore, nowMs: Int64, send: ([UInt8]) async throws -> Void) async throws {
        let time = WireTime.text(milliseconds: nowMs)
        let parts = time.prefix(19).split(whereSeparator: { "-T:".contains($0) }).compactMap { Int($0) }
        let zip = ZipWriter(year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4], second: parts[5])
        var index: [[String: Any]] = []
        var leftOut: [[String: Any]] = []
        var offset = 0
        while true {
            let page = try await store.runs.ownRuns(accountID: account.id, limit: runsPerRead, offset: offset)
            offset += page.count
            for managed in page {
                let (entry, skipped) = try await addRun(managed, zip: zip, store: store, send: send)
                if let entry { index.append(entry) }
                if let skipped { leftOut.append(skipped) }
                // Other requests' turn between runs: an export is long and never urgent.
                await Task.yield()
            }
            if page.count < runsPerRead { break }
        }
        let data = try await accountData(account, store: store, exportedAt: time, runs: index, leftOut: leftOut)
        try await send(try zip.add("account.json", data))
        try await send(try zip.add("README.txt", Array(readme(time: time, leftOut: leftOut.count).utf8)))
        try await send(try zip.finish())
    }

    /// Adds the run's FIT and GPX files; its index entry, or why it was left out.
    private static func addRun(_ managed: ManagedRun, zip: ZipWriter, store: CloudStore,
                               send: ([UInt8]) async throws -> Void) async throws -> ([String: Any]?, [String: Any]?) {
        let run = managed.run
        let runID = run.summary.runID
        var entry: [String: Any] = ["run_id": runID, "sport": managed.details.sport.rawValue, "visibility": managed.details.visibility.rawValue]
        if let title = managed.details.title { entry["title"] = title }
        if let notes = managed.details.notes { entry["notes"] = notes }
        if let doubt = managed.details.doubt { entry["not_believed_because"] = doubt }
        entry["summary"] = (try? JSONSerialization.jsonObject(with: Data(run.summary.json.utf8))) ?? run.summary.json
        guard let item = try? RunItem(run.summary) else {
            return (entry, ["run_id": runID, "why": "its summary cannot be read; its data is in account.json"])
        }
        let samples = try await store.runs.storedSamples(device: run.deviceID, runID: runID, below: run.summary.chunks, excluding: nil)
        // A GPX point is under 200 bytes, a FIT record under 40.
        guard samples <= TrackChunkFormat.maxSamplesPerRun, zip.canAdd(bytes: UInt64(samples) * 240 + 4_096, name: runID) else {
            return (entry, ["run_id": runID, "why": "the archive is full (4 GiB) or the run too long; download it from its page"])
        }
        let base = "activities/\(item.summary.start_time.prefix(10))-\(runID.prefix(8))"
        var files: [String] = []
        for format in [FileFormat.fit, .gpx] {
            let name = "\(base).\(format.fileExtension)"
            var document = ExportTrackDocument(format: format, runID: runID, summary: item.summary, title: run.activity.title,
                                               sport: run.activity.sport)
            try await send(try zip.begin(name))
            try await send(try zip.write(try document.start()))
            for seq in 0..<run.summary.chunks {
                guard let chunk = try await store.runs.chunk(device: run.deviceID, runID: runID, seq: seq) else {
                    throw StoreError("chunk \(seq) of run \(runID) went while the export was made")
                }
                var bytes: [UInt8] = []
                try TrackChunkFormat.read(chunk.body, gzip: chunk.contentEncoding == "gzip") { bytes += try document.add($0) }
                try await send(try zip.write(bytes))
            }
            try await send(try zip.write(try document.end()))
            try await send(try zip.end())
            files.append(name)
        }
        entry["files"] = files
        return (entry, nil)
    }

    private static func accountData(_ account: Account, store: CloudStore, exportedAt: String, runs: [[String: Any]],
                                    leftOut: [[String: Any]]) async throws -> [UInt8] {
        var profile: [String: Any] = ["email": account.email, "display_name": account.displayName, "timezone": account.timezone,
                                      "created_at": account.createdAt]
        if let maxHR = account.maxHeartRate { profile["max_hr_bpm"] = maxHR }
        let devices: [[String: Any]] = try await store.devices.devices(accountID: account.id).filter { !$0.holdsImports }.map { device in
            var item: [String: Any] = ["name": device.name, "created_at": device.createdAt, "linked": !device.revoked]
            if let seen = device.lastSeenMs { item["last_seen"] = WireTime.text(milliseconds: seen) }
            return item
        }
        let goals: [[String: Any]] = try await store.plans.goals(accountID: account.id).map {
            ["period": $0.period.rawValue, "distance_m": $0.distanceM]
        }
        let plan: [[String: Any]] = try await store.plans.planSessions(accountID: account.id, from: "0001-01-01", through: "9999-12-31").map { session in
            ["name": session.name, "start_date": session.startDate, "weekdays": session.weekdays, "weeks": session.weeks,
             "steps": (try? JSONSerialization.jsonObject(with: Data(session.stepsJSON.utf8))) ?? session.stepsJSON]
        }
        let shoes: [[String: Any]] = try await store.shoes.shoes(accountID: account.id).map { shoe in
            var item: [String: Any] = ["name": shoe.name, "distance_m": shoe.distanceM, "start_m": shoe.startM, "retired": shoe.retired]
            if let remind = shoe.remindM { item["remind_m"] = remind }
            return item
        }
        // Other people's names only: their addresses are theirs.
        let monitors = try await store.monitoring.monitors(runnerID: account.id).map(\.displayName)
        let watched = try await store.monitoring.watchedRunners(monitorID: account.id).map(\.displayName)
        var data: [String: Any] = ["exported_at": exportedAt, "account": profile, "devices": devices, "goals": goals, "plan_sessions": plan,
                                   "shoes": shoes, "watched_over_by": monitors, "watching_over": watched, "activities": runs]
        if !leftOut.isEmpty { data["activities_without_files"] = leftOut }
        return Array(try JSONSerialization.data(withJSONObject: data, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
    }

    private static func readme(time: String, leftOut: Int) -> String {
        """
        Pacer: everything of your account, exported at \(time).

        account.json   your settings, devices, goals, training plan, shoes, the people who watch over you and
                       whom you watch (by name), and every activity: its summary, name, notes, sport and who sees it.
        activities/    every activity as a FIT file and a GPX file (date and the start of its id in the name),
                       which other apps and watches read.
        \(leftOut > 0 ? "\n\(leftOut) activities have no files here (account.json says why); download them from their pages.\n" : "")
        """
    }
}
