import CloudModel
import CloudStore
import PacerContract

/// Runs that followed a planned session: a run whose summary names an occurrence of the plan
/// marks it done (the device's uploads), and the run page shows which it followed.
struct PlanFollowing: Sendable {
    let runs: RunRepository
    let accounts: AccountRepository
    let plans: PlanRepository
    /// Milliseconds since 1970: today, and when an occurrence was marked done.
    let wallClock: @Sendable () -> Int64

    /// Today in the account's time zone, as a plan day.
    static func today(_ account: Account, nowMs: Int64) -> Int { PlanDates.day(atMs: nowMs, timezone: account.timezone) }

    /// When the device's run `runID` is complete, its summary names an occurrence of the
    /// device's account and the run covered most of it (`PlanCompletion`: 80 % of its planned
    /// distance and time), marks that occurrence done by the run. Another account's occurrence,
    /// or none, is passed over without a word: the upload succeeds the same.
    func markFollowedSession(device: Device, runID: String) async throws {
        guard let accountID = device.accountID, let stored = try await runs.completeRun(device: device.id, runID: runID),
              let summary = (try? RunItem(stored))?.summary, let occurrenceID = summary.planned_session_id,
              let account = try await accounts.account(id: accountID),
              let followed = try await followedOccurrence(account, occurrenceID: occurrenceID, startMs: stored.startMs),
              PlanCompletion.isDone(stepsJSON: followed.session.stepsJSON, distanceM: summary.distance_m, elapsedS: summary.elapsed_time_s)
        else { return }
        _ = try await plans.markPlanDone(PlanDone(sessionID: followed.session.id, date: followed.date, accountID: accountID, runDeviceID: device.id,
                                            runID: runID, doneMs: wallClock()))
    }

    /// The account's occurrence a run starting at `startMs` names, looked for around the run's
    /// local date, then around today's: the device took the id from a plan fetched near "now",
    /// and its clock (GPS time, or none yet) may put the run on another date.
    func followedOccurrence(_ account: Account, occurrenceID: String, startMs: Int64) async throws -> PlanOccurrence? {
        let runDay = PlanDates.day(atMs: startMs, timezone: account.timezone)
        if let found = try await plans.planOccurrence(accountID: account.id, id: occurrenceID, near: runDay) { return found }
        let today = Self.today(account, nowMs: wallClock())
        guard abs(today - runDay) > PlanDates.lookupDays else { return nil }
        return try await plans.planOccurrence(accountID: account.id, id: occurrenceID, near: today)
    }
}
