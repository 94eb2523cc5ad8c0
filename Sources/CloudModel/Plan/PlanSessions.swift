import Crypto
import Foundation
import PacerContract
import PacerCore

/// A session of an account's training plan: a workout on a date, or on chosen weekdays for some
/// weeks from that date. Each date it falls on is an occurrence with its own id
/// (`PlanDates.occurrenceID`), which the device gets and a run's summary names.
public struct PlanSession: Sendable, Equatable {
    /// At most this many sessions per account (every page and sync reads them all).
    public static let maxPerAccount = 500
    /// A weekly session repeats for 1 to 52 weeks.
    public static let weeksRange = 1...52

    /// A lowercase UUID.
    public var id: String
    public var accountID: String
    /// 1 to `PlanSteps.maxNameLength` characters, cleaned for speech.
    public var name: String
    /// The steps as the contract's JSON (`[PlanStep]`, sorted keys).
    public var stepsJSON: String
    /// The first date, `YYYY-MM-DD` in the account's time zone.
    public var startDate: String
    /// The weekdays it repeats on: bit 0 Monday … bit 6 Sunday; 0: only on `startDate`.
    public var weekdays: Int
    /// How many weeks from `startDate` it repeats (0 when it does not).
    public var weeks: Int

    public init(id: String, accountID: String, name: String, stepsJSON: String, startDate: String, weekdays: Int = 0, weeks: Int = 0) {
        self.id = id
        self.accountID = accountID
        self.name = name
        self.stepsJSON = stepsJSON
        self.startDate = startDate
        self.weekdays = weekdays
        self.weeks = weeks
    }

    public var repeats: Bool { weekdays != 0 && weeks > 0 }

    /// The last date it can fall on (what the stores index, to read only sessions overlapping a range).
    public var endDate: String {
        guard repeats, let start = PlanDates.day(startDate) else { return startDate }
        return PlanDates.text(start + weeks * 7 - 1)
    }

    /// The days (`PlanDates` day numbers) it falls on within `from...through`, in order.
    public func days(from: Int, through: Int) -> [Int] {
        guard let start = PlanDates.day(startDate) else { return [] }
        guard repeats else { return start >= from && start <= through ? [start] : [] }
        let last = start + weeks * 7 - 1
        let low = max(from, start), high = min(through, last)
        guard low <= high else { return [] }
        return (low...high).filter { weekdays & (1 << PlanDates.weekday($0)) != 0 }
    }

    public var steps: [PlanStep] { (try? JSONDecoder().decode([PlanStep].self, from: Data(stepsJSON.utf8))) ?? [] }
}

/// An occurrence marked done: by a run (its device and id) or by hand (both nil).
public struct PlanDone: Sendable, Equatable {
    public var sessionID: String
    public var date: String
    public var accountID: String
    public var occurrenceID: String
    public var runDeviceID: String?
    public var runID: String?
    public var doneMs: Int64

    public init(sessionID: String, date: String, accountID: String, runDeviceID: String? = nil, runID: String? = nil, doneMs: Int64) {
        self.sessionID = sessionID
        self.date = date
        self.accountID = accountID
        occurrenceID = PlanDates.occurrenceID(sessionID: sessionID, date: date)
        self.runDeviceID = runDeviceID
        self.runID = runID
        self.doneMs = doneMs
    }
}

/// Local dates as day numbers (days since 1970-01-01, the core's `LocalDate.daysSinceEpoch`),
/// which step and compare without a calendar, and the occurrence ids made from them.
public enum PlanDates {
    private static let epoch = LocalDate(year: 1970, month: 1, day: 1)!

    /// "2026-11-26" → its day number; nil when it is no date.
    public static func day(_ text: String) -> Int? {
        guard DeviceState.isDate(text) else { return nil }
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3, parts[0] >= 1, let date = LocalDate(year: parts[0], month: parts[1], day: parts[2]) else { return nil }
        return Int(date.daysSinceEpoch)
    }

    static func date(_ day: Int) -> LocalDate { epoch.adding(days: day) }

    /// A day number as "YYYY-MM-DD".
    public static func text(_ day: Int) -> String { date(day).description }

    /// 0 Monday … 6 Sunday.
    public static func weekday(_ day: Int) -> Int { date(day).weekday - 1 }

    public static func civil(_ day: Int) -> (year: Int, month: Int, day: Int) {
        let date = date(day)
        return (date.year, date.month, date.day)
    }

    /// The first day of the month and the first of the next one.
    public static func month(year: Int, month: Int) -> (first: Int, next: Int) {
        let first = Int(LocalDate(year: year, month: month, day: 1)!.daysSinceEpoch)
        let next = month == 12 ? LocalDate(year: year + 1, month: 1, day: 1)! : LocalDate(year: year, month: month + 1, day: 1)!
        return (first, Int(next.daysSinceEpoch))
    }

    /// The day number of the local date at `ms` in `timezone` (UTC when it is no zone).
    public static func day(atMs ms: Int64, timezone: String) -> Int {
        let zone = TimeZone(identifier: timezone) ?? TimeZone(identifier: "UTC")!
        let date = LocalDate(containing: Timestamp(milliseconds: ms)) { zone.secondsFromGMT(for: Date(timeIntervalSince1970: $0.seconds)) }
        return Int(date.daysSinceEpoch)
    }

    /// The id of the occurrence of session `sessionID` on `date`: the SHA-256 of
    /// "pacer-plan-occurrence:<session id>:<YYYY-MM-DD>" (UTF-8), its first 16 bytes as a
    /// lowercase UUID with version 8 and the RFC 9562 variant. The same session and date give the
    /// same id on every instance and after every edit, and no two sessions or dates share one.
    public static func occurrenceID(sessionID: String, date: String) -> String {
        var bytes = Array(SHA256.hash(data: Data("pacer-plan-occurrence:\(sessionID):\(date)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }
}

/// One date a session falls on, with its done state.
public struct PlanOccurrence: Sendable {
    public var session: PlanSession
    public var day: Int
    public var done: PlanDone?

    public init(session: PlanSession, day: Int, done: PlanDone? = nil) {
        self.session = session
        self.day = day
        self.done = done
    }

    public var date: String { PlanDates.text(day) }
    public var id: String { PlanDates.occurrenceID(sessionID: session.id, date: date) }
}

extension PlanDates {
    /// How far from a run's local start date the occurrence it names is looked for (a device
    /// whose clock or zone differs from the account's may be a day off; a week covers any).
    public static let lookupDays = 7
}
