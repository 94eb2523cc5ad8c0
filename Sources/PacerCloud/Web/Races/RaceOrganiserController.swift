import CloudModel
import CloudStore
import Foundation
import Hummingbird
import PacerContract

/// A race's organisers (#34): its runners marked present or disqualified and their results
/// corrected, co-organisers added, the race postponed or deleted with notice to everyone it
/// concerns: an e-mail each, and to each runner's devices a notice they speak at their next sync.
struct RaceOrganiserController: Sendable {
    let races: RaceRepository
    let accounts: AccountRepository
    let devices: DeviceRepository
    let sync: SyncRepository
    let outbox: OutboxRepository
    let access: RaceAccessCheck
    /// Told of each change a frame shows.
    let frames: RaceFrames
    let mail: MailSettings?
    let linkBase: String
    let wallClock: @Sendable () -> Int64
    let wakeForwarder: @Sendable () -> Void

    func addRoutes(to web: PolicedRoutes<CloudRequestContext>) {
        web.on(.get, "races/:race/manage", SignedInAccess()) { _, context in try await managePage(context) }
        web.on(.post, "races/:race/runners/:bib", SignedInAccess()) { request, context in try await mark(request, context) }
        web.on(.post, "races/:race/organisers", SignedInAccess()) { request, context in try await addOrganiser(request, context) }
        web.on(.post, "races/:race/postpone", SignedInAccess()) { request, context in try await postpone(request, context) }
        web.on(.post, "races/:race/delete", SignedInAccess()) { request, context in try await delete(request, context) }
    }

    private func organised(_ context: SignedInContext) async throws -> Race {
        try await access.organised(context.parameters.get("race") ?? "", by: context.account)
    }

    private func values(_ race: Race, _ context: SignedInContext) async throws -> [String: Any] {
        let entries = try await races.entries(raceID: race.id)
        let format = RaceFormat(account: context.account)
        let runners: [[String: Any]] = entries.map { entry in
            let timed = entry.finishMs.map { RaceFormat.clock(milliseconds: $0 - race.startsMs) } ?? ""
            return ["bib": String(entry.bib), "name": entry.displayName, "race": race.id, "timed": timed,
                    "corrected": entry.correctedGunMs.map { RaceFormat.clock(milliseconds: $0) } ?? "",
                    "statuses": RaceEntryStatus.allCases.map { ["value": $0.rawValue, "label": $0.rawValue.capitalized, "selected": $0 == entry.status] }]
        }
        var values: [String: Any] = [
            "title": "Manage " + race.name, "id": race.id, "name": race.name, "starts": format.starts(race), "length": RunnerFormat.distance(race.lengthM),
            "open": race.access == .open, "runners": runners, "count": String(entries.count), "timezone": race.timezone,
            "starts_field": RunnerCalendar(race.timezone).localTimeField(race.startsMs),
            "organisers": try await races.organisers(raceID: race.id).map { ["display_name": $0.displayName, "email": $0.email] },
        ]
        if race.access == .invitation { values["invite"] = "\(linkBase)/races/\(race.id)?code=\(race.inviteCode)" }
        return values
    }

    private func managePage(_ context: SignedInContext, notice: String? = nil) async throws -> Response {
        var values = try await values(try await organised(context), context)
        if let notice { values["notice"] = notice }
        return WebPage.raceManage.response(values: values, csrf: context.session.csrf)
    }

    private func refuse(_ race: Race, _ context: SignedInContext, _ message: String) async throws -> WebRefusal {
        .form(.badRequest, page: .raceManage, message: message, values: try await values(race, context).strings, csrf: context.session.csrf)
    }

    private func mark(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let race = try await organised(context)
        let form = try await WebForm.read(request, context: context)
        let bibText = context.parameters.get("bib") ?? ""
        guard let bib = Int(bibText), bib > 0 else { throw WebRefusal.plain(.notFound, "no runner of \(race.name) has the bib \(bibText.prefix(12))") }
        guard let status = RaceEntryStatus(rawValue: form["status"] ?? "") else {
            throw try await refuse(race, context, "status: enrolled, present or disqualified")
        }
        let correctedText = (form["corrected"] ?? "").trimmingSpaces
        var corrected: Int64?
        if !correctedText.isEmpty {
            guard let value = RaceFormat.parsedClock(correctedText) else {
                throw try await refuse(race, context, "corrected: a time like 1:02:03 or 42:10, or empty for the timed one")
            }
            corrected = value
        }
        guard try await races.mark(raceID: race.id, bib: bib, status: status, correctedGunMs: corrected) else {
            throw WebRefusal.plain(.notFound, "no runner of \(race.name) has the bib \(bib)")
        }
        frames.noteChange(raceID: race.id)
        return RunManagementController.seeOther("/races/\(race.id)/manage#runner-\(bib)")
    }

    private func addOrganiser(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let race = try await organised(context)
        let form = try await WebForm.read(request, context: context)
        guard let address = try? EmailAddress.normalized(form["email"] ?? "").get(),
              let other = try await accounts.account(email: address)?.account else {
            throw try await refuse(race, context, "email: no Pacer account has this address; they must sign up first")
        }
        switch try await races.addOrganiser(raceID: race.id, accountID: other.id, limit: RaceLimits.maxOrganisers) {
        case nil: return try await managePage(context, notice: "\(other.displayName) organises this race already.")
        case false?: throw try await refuse(race, context, "email: a race has at most \(RaceLimits.maxOrganisers) organisers")
        case true?:
            let text = "\(DisplayName.plain(context.account.displayName)) made you a co-organiser of the race \"\(DisplayName.plain(race.name))\" "
                + "on Pacer.\n\nManage it at:\n\n\(linkBase)/races/\(race.id)/manage\n"
            try await email(to: [other.email], subject: "You co-organise a race on Pacer", text: text)
            return try await managePage(context, notice: "\(other.displayName) now co-organises this race; we told them by e-mail.")
        }
    }

    private func postpone(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let race = try await organised(context)
        let form = try await WebForm.read(request, context: context)
        let calendar = RunnerCalendar(race.timezone)
        guard let startsMs = calendar.localTimeMs(form["starts"] ?? ""), startsMs > wallClock() else {
            throw try await refuse(race, context, "starts: a date and time in the future, like 2026-12-13T09:30 (in \(race.timezone))")
        }
        guard startsMs != race.startsMs else { throw try await refuse(race, context, "starts: that is the start it has") }
        var closesMs = startsMs
        if let text = form["closes"], !text.isEmpty {
            guard let closes = calendar.localTimeMs(text), closes <= startsMs else {
                throw try await refuse(race, context, "closes: a date and time by the new start")
            }
            closesMs = closes
        }
        guard try await races.postpone(raceID: race.id, startsMs: startsMs, closesMs: closesMs) else { throw RaceAccessCheck.notFound(race.id) }
        frames.noteChange(raceID: race.id)
        let when = calendar.dateTime(startsMs)
        try await tellEveryone(race, subject: "Race moved: \(DisplayName.plain(race.name))",
                               text: "The race \"\(DisplayName.plain(race.name))\", which was to start \(calendar.dateTime(race.startsMs)), "
                                   + "now starts \(when) (\(race.timezone)).\n\nIts page: \(linkBase)/races/\(race.id)\n",
                               spoken: "The race \(race.name) is postponed to \(when).")
        return try await managePage(context, notice: "Postponed to \(when); everyone enrolled or observing was told.")
    }

    private func delete(_ request: Request, _ context: SignedInContext) async throws -> Response {
        let race = try await organised(context)
        _ = try await WebForm.read(request, context: context)
        // Told first: once deleted, nobody is left to tell.
        let calendar = RunnerCalendar(race.timezone)
        try await tellEveryone(race, subject: "Race cancelled: \(DisplayName.plain(race.name))",
                               text: "The race \"\(DisplayName.plain(race.name))\", planned for \(calendar.dateTime(race.startsMs)) "
                                   + "(\(race.timezone)), was cancelled by its organisers.\n",
                               spoken: "The race \(race.name) is cancelled.")
        _ = try await races.deleteRace(id: race.id)
        return RunManagementController.seeOther("/races")
    }

    /// An e-mail to each organiser, runner and observer, and a notice to each runner's devices.
    private func tellEveryone(_ race: Race, subject: String, text: String, spoken: String) async throws {
        let people = try await races.concerned(raceID: race.id)
        try await email(to: people.map(\.email), subject: subject, text: text)
        let runners = Set(try await races.entries(raceID: race.id).map(\.accountID))
        let cleaned = String(NoticeText.clean(spoken).prefix(NoticeText.maxLength))
        for person in people where runners.contains(person.accountId) {
            for device in try await devices.devices(accountID: person.accountId) where !device.revoked {
                try await sync.addNotice(StoredNotice(id: UUID().uuidString.lowercased(), device: device.id, text: cleaned, createdMs: wallClock()))
            }
        }
    }

    private func email(to addresses: [String], subject: String, text: String) async throws {
        guard let mail, !addresses.isEmpty else { return }
        for address in addresses {
            let payload = try JSONInput.canonical(Forwarding.Email(from: mail.from, to: address, subject: subject, text: text))
            try await outbox.queueMail(OutboxMail(to: address, payload: payload))
        }
        wakeForwarder()
    }
}
