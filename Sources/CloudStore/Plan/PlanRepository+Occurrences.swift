import CloudModel

extension PlanRepository {
    /// The account's occurrences within `from...through` (day numbers), by date then name, with
    /// their done state. Bounded: at most `PlanSession.maxPerAccount` sessions, each once a day.
    public func planOccurrences(accountID: String, from: Int, through: Int) async throws -> [PlanOccurrence] {
        let (first, last) = (PlanDates.text(from), PlanDates.text(through))
        let sessions = try await planSessions(accountID: accountID, from: first, through: last)
        var done: [String: PlanDone] = [:]
        for entry in try await planDone(accountID: accountID, from: first, through: last) { done[entry.occurrenceID] = entry }
        var occurrences: [PlanOccurrence] = []
        for session in sessions {
            for day in session.days(from: from, through: through) {
                var occurrence = PlanOccurrence(session: session, day: day)
                occurrence.done = done[occurrence.id]
                occurrences.append(occurrence)
            }
        }
        return occurrences.sorted { ($0.day, $0.session.name, $0.session.id) < ($1.day, $1.session.name, $1.session.id) }
    }

    /// The account's occurrence with id `occurrenceID` within `PlanDates.lookupDays` of `day`:
    /// a run names the session it followed on the day it ran, so only those dates are searched.
    public func planOccurrence(accountID: String, id occurrenceID: String, near day: Int) async throws -> PlanOccurrence? {
        try await planOccurrences(accountID: accountID, from: day - PlanDates.lookupDays, through: day + PlanDates.lookupDays)
            .first { $0.id == occurrenceID }
    }
}
