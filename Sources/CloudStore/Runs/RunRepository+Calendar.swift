import CloudModel
import SQLKit

/// A run as the calendar of runs shows it.
public struct CalendarRun: Sendable, Equatable {
    public var runID: String
    public var startMs: Int64
    /// From the run's figures; nil while they are not counted yet, or for a summary not understood.
    public var distanceM: Double?
    public var sport: Sport
    public var title: String?
    /// Why the run is not believed; nil: believed.
    public var doubt: String?

    public init(runID: String, startMs: Int64, distanceM: Double?, sport: Sport, title: String?, doubt: String?) {
        self.runID = runID
        self.startMs = startMs
        self.distanceM = distanceM
        self.sport = sport
        self.title = title
        self.doubt = doubt
    }
}

extension RunRepository {
    /// The account's complete runs starting in [fromMs, toMs), oldest first, at most `limit`.
    public func calendarRuns(accountID: String, fromMs: Int64, toMs: Int64, limit: Int) async throws -> [CalendarRun] {
        struct Row: Decodable {
            let runId: String, startMs: Int64, distanceM: Double?, sport: String, title: String?, doubt: String?
        }
        return try await database.read { db in
            try await db.raw("""
                SELECT r.run_id, r.start_ms, f.distance_m, r.sport, r.title, r.doubt FROM run r JOIN device d ON d.id = r.device_id
                LEFT JOIN run_figures f ON f.device_id = r.device_id AND f.run_id = r.run_id
                WHERE d.account_id = \(bind: accountID) AND r.start_ms >= \(bind: fromMs) AND r.start_ms < \(bind: toMs) AND \(Self.complete)
                ORDER BY r.start_ms, r.run_id LIMIT \(bind: limit)
                """).rows(Row.self)
        }.map { CalendarRun(runID: $0.runId, startMs: $0.startMs, distanceM: $0.distanceM, sport: Sport(rawValue: $0.sport) ?? .other,
                            title: $0.title, doubt: $0.doubt) }
    }
}
