import CloudModel
import Foundation
import SQLKit

/// A complete run with what its runner said of it, and whose it is.
public struct ManagedRun: Sendable, Equatable {
    public var run: AccountRun
    public var details: RunDetails
    /// The account of the run's device.
    public var accountID: String

    public init(run: AccountRun, details: RunDetails, accountID: String) {
        self.run = run
        self.details = details
        self.accountID = accountID
    }
}

/// The runner managing their runs (#33): name, notes, sport, visibility, share links, deletion;
/// and the runs others may see: a consented monitor those the runner shows monitors, anyone
/// with a live share link that one run.
extension RunRepository {
    struct ManagedRow: Decodable {
        let deviceId: String, runId: String, summary: String, chunks: Int, startMs: Int64, accountId: String
        let title: String?, notes: String?, sport: String, visibility: String, shareSha256: String?, doubt: String?
        static let columns: SQLQueryString = """
            r.device_id, r.run_id, r.summary, r.chunks, r.start_ms, d.account_id, r.title, r.notes, r.sport, r.visibility, r.share_sha256, r.doubt
            """
        var managed: ManagedRun {
            // A value this binary does not know (a newer one wrote it) reads as the safest.
            let details = RunDetails(title: title, notes: notes, sport: Sport(rawValue: sport) ?? .other,
                                     visibility: RunVisibility(rawValue: visibility) ?? .private, shared: shareSha256 != nil, doubt: doubt)
            return ManagedRun(run: AccountRun(deviceID: deviceId, summary: StoredSummary(runID: runId, json: summary, chunks: chunks, startMs: startMs)),
                              details: details, accountID: accountId)
        }
    }

    private func managedRun(_ condition: SQLQueryString) async throws -> ManagedRun? {
        try await database.read { db in
            try await db.raw("""
                SELECT \(ManagedRow.columns) FROM run r JOIN device d ON d.id = r.device_id
                WHERE \(condition) AND \(Self.complete) ORDER BY r.device_id LIMIT 1
                """).row(ManagedRow.self)
        }?.managed
    }

    /// One complete run of the account's devices with its details; nil for another account's
    /// run as for none.
    public func ownRun(accountID: String, runID: String) async throws -> ManagedRun? {
        try await managedRun("d.account_id = \(bind: accountID) AND r.run_id = \(bind: runID)")
    }

    /// A run `monitorID` may see: of a runner who consented to them, shown to monitors (or by
    /// link, which monitors see too); nil otherwise, as for no run.
    public func monitoredRun(monitorID: String, runID: String) async throws -> ManagedRun? {
        try await managedRun("""
            r.run_id = \(bind: runID) AND r.visibility IN ('monitors', 'link')
            AND EXISTS (SELECT 1 FROM monitor_consent c WHERE c.runner_id = d.account_id AND c.monitor_id = \(bind: monitorID))
            """)
    }

    /// The run whose live share link hashes to `shareHash`; nil when none (revoked, or made private).
    public func sharedRun(shareHash: String) async throws -> ManagedRun? {
        try await managedRun("r.share_sha256 = \(bind: shareHash) AND r.visibility = 'link' AND d.account_id IS NOT NULL")
    }

    /// Saves the run's name, notes, sport and visibility (the figures' sport with it, so the
    /// statistics move at once). A visibility other than `link` ends its share link. False when
    /// the run is gone.
    public func updateDetails(device: String, runID: String, title: String?, notes: String?, sport: Sport,
                              visibility: RunVisibility) async throws -> Bool {
        try await database.transaction { db in
            let endsLink: SQLQueryString = visibility == .link ? "" : ", share_sha256 = NULL"
            let updated = try await db.raw("""
                UPDATE run SET title = \(bind: title), notes = \(bind: notes), sport = \(bind: sport.rawValue), visibility = \(bind: visibility.rawValue)\(endsLink)
                WHERE device_id = \(bind: device) AND run_id = \(bind: runID) RETURNING run_id
                """).all().count
            try await db.raw("UPDATE run_figures SET sport = \(bind: sport.rawValue) WHERE device_id = \(bind: device) AND run_id = \(bind: runID)").run()
            return updated > 0
        }
    }

    /// Gives the run a new share link (the hash of its secret), ending any earlier one, and makes
    /// it visible by link; nil hash: ends the link, and the run is shown to monitors at most.
    public func setShareLink(device: String, runID: String, hash: String?) async throws -> Bool {
        try await database.transaction { db in
            let set: SQLQueryString = if let hash {
                "share_sha256 = \(bind: hash), visibility = 'link'"
            } else {
                "share_sha256 = NULL, visibility = CASE WHEN visibility = 'link' THEN 'monitors' ELSE visibility END"
            }
            return try await db.raw("UPDATE run SET \(set) WHERE device_id = \(bind: device) AND run_id = \(bind: runID) RETURNING run_id")
                .all().count > 0
        }
    }
}

extension RunRepository {
    /// The account's complete runs with their details, newest first, a page at a time.
    public func ownRuns(accountID: String, limit: Int, offset: Int) async throws -> [ManagedRun] {
        try await database.read { db in
            try await db.raw("""
                SELECT \(ManagedRow.columns) FROM run r JOIN device d ON d.id = r.device_id
                WHERE d.account_id = \(bind: accountID) AND \(Self.complete)
                ORDER BY r.start_ms DESC, r.run_id DESC LIMIT \(bind: limit) OFFSET \(bind: offset)
                """).rows(ManagedRow.self)
        }.map(\.managed)
    }
}
