import CloudModel
import CloudStore
import Hummingbird

/// Who a race shows itself to (#34). An open race: anyone, with or without an account (its page
/// is its share link). An invitation race: whoever has its registration link's code, and its
/// organisers, runners and observers; to anyone else it does not exist (the same 404 as an id
/// no race has, so a guessed id tells nothing).
struct RaceAccessCheck: Sendable {
    let races: RaceRepository

    struct Seen: Sendable {
        let race: Race
        let isOrganiser: Bool
        let entry: RaceEntry?
        let isObserver: Bool
        /// The code the viewer came with, when it is the race's (kept in its forms and stream).
        let code: String?
    }

    static func notFound(_ id: String) -> WebRefusal { .plain(.notFound, "no race has the id \(id.prefix(40))") }

    /// The race `id` as `account` (nil: signed out) with `code` sees it, or the 404.
    func race(_ id: String, account: Account?, code: String?) async throws -> Seen {
        guard CloudRoutes.isLowercaseUUID(id), let race = try await races.race(id: id) else { throw Self.notFound(id) }
        let codeMatches = code.map { WebForm.constantTimeEqual($0, race.inviteCode) } ?? false
        var isOrganiser = false, isObserver = false
        var entry: RaceEntry?
        if let account {
            isOrganiser = try await races.isOrganiser(account.id, of: race.id)
            entry = try await races.entry(raceID: race.id, accountID: account.id)
            isObserver = try await races.isObserver(account.id, of: race.id)
        }
        guard race.access == .open || codeMatches || isOrganiser || entry != nil || isObserver else { throw Self.notFound(id) }
        return Seen(race: race, isOrganiser: isOrganiser, entry: entry, isObserver: isObserver, code: codeMatches ? code : nil)
    }

    /// The race `id` when `account` organises it; the 404 otherwise (an organiser of another
    /// race learns nothing of this one).
    func organised(_ id: String, by account: Account) async throws -> Race {
        guard CloudRoutes.isLowercaseUUID(id), let race = try await races.race(id: id), try await races.isOrganiser(account.id, of: race.id) else {
            throw WebRefusal.plain(.notFound, "no race you organise has the id \(id.prefix(40))")
        }
        return race
    }
}
