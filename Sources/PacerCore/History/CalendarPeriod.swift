/// One week, month or year of local calendar time: "2026-W19", "2026-05", "2026".
///
/// A period is a span of local dates, not of instants: which period a run belongs to depends on the
/// local date it started on in the runner's time zone (see `LocalDate`). Weeks are ISO 8601 weeks,
/// Monday to Sunday, labelled with the ISO week-numbering year, which differs from the calendar year
/// for up to three days around 1 January: 2027-01-01 (a Friday) is in 2026-W53 and 2025-12-29
/// (a Monday) is in 2026-W01.
public struct CalendarPeriod: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let kind: PeriodKind
    /// The calendar year; for a week, the ISO week-numbering year.
    public let year: Int
    /// Week 1...53, month 1...12; 1 for a year.
    public let number: Int

    private init(unchecked kind: PeriodKind, year: Int, number: Int) {
        (self.kind, self.year, self.number) = (kind, year, number)
    }

    /// Nil unless `week` exists in `isoYear` (52 or 53 weeks).
    public init?(isoYear: Int, week: Int) {
        guard week >= 1, week <= Self.weeks(inISOYear: isoYear) else { return nil }
        self.init(unchecked: .week, year: isoYear, number: week)
    }

    public init?(year: Int, month: Int) {
        guard (1...12).contains(month) else { return nil }
        self.init(unchecked: .month, year: year, number: month)
    }

    public init(year: Int) {
        self.init(unchecked: .year, year: year, number: 1)
    }

    /// The period of `kind` that contains `date`.
    public init(_ kind: PeriodKind, containing date: LocalDate) {
        switch kind {
        case .week:
            // An ISO week belongs to the year its Thursday falls in, and is numbered by how many
            // Thursdays of that year come before it.
            let thursday = date.adding(days: 4 - date.weekday)
            let jan1 = Timestamp.daysSinceEpoch(year: Int64(thursday.year), month: 1, day: 1)
            let week = Int((thursday.daysSinceEpoch - jan1) / 7) + 1
            self.init(unchecked: .week, year: thursday.year, number: week)
        case .month:
            self.init(unchecked: .month, year: date.year, number: date.month)
        case .year:
            self.init(unchecked: .year, year: date.year, number: 1)
        }
    }

    /// The period of `kind` that contains `instant` in the zone whose UTC offset (seconds, east
    /// positive) at an instant is `utcOffset(instant)`.
    public init(_ kind: PeriodKind, containing instant: Timestamp, utcOffset: (Timestamp) -> Int) {
        self.init(kind, containing: LocalDate(containing: instant, utcOffset: utcOffset))
    }

    /// Reads a `label`: `2026-W19`, `2026-05` or `2026` (four-digit years only). Nil for anything
    /// else, including weeks and months that do not exist.
    public init?(label: String) {
        let b = Array(label.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for c in b[from..<(from + count)] {
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard let year = number(0, 4) else { return nil }
        switch b.count {
        case 4:
            self.init(year: year)
        case 7 where b[4] == 45:
            guard let month = number(5, 2) else { return nil }
            self.init(year: year, month: month)
        case 8 where b[4] == 45 && b[5] == 87:
            guard let week = number(6, 2) else { return nil }
            self.init(isoYear: year, week: week)
        default:
            return nil
        }
    }

    /// `2026-W19`, `2026-05` or `2026`: unique across kinds, sorts chronologically within a kind
    /// (for four-digit years), and `init(label:)` reads it back; usable as a storage key.
    public var label: String {
        switch kind {
        case .week: "\(LocalDate.pad(year, 4))-W\(LocalDate.pad(number, 2))"
        case .month: "\(LocalDate.pad(year, 4))-\(LocalDate.pad(number, 2))"
        case .year: LocalDate.pad(year, 4)
        }
    }

    public var description: String { label }

    /// The first local date in the period (a Monday for a week).
    public var firstDay: LocalDate {
        switch kind {
        case .week: LocalDate(daysSinceEpoch: Self.mondayOfWeek1(isoYear: year) + Int64(number - 1) * 7)
        case .month: LocalDate(daysSinceEpoch: Timestamp.daysSinceEpoch(year: Int64(year), month: Int64(number), day: 1))
        case .year: LocalDate(daysSinceEpoch: Timestamp.daysSinceEpoch(year: Int64(year), month: 1, day: 1))
        }
    }

    /// The last local date in the period (a Sunday for a week).
    public var lastDay: LocalDate { advanced(by: 1).firstDay.adding(days: -1) }

    public var dayCount: Int { Int(advanced(by: 1).firstDay.daysSinceEpoch - firstDay.daysSinceEpoch) }

    /// The period `n` periods of the same kind later (earlier for negative `n`): `advanced(by: -1)`
    /// of 2027-W01 is 2026-W53. For filling the gaps between the non-empty periods `PeriodTotals`
    /// returns.
    public func advanced(by n: Int) -> CalendarPeriod {
        switch kind {
        case .week:
            return CalendarPeriod(.week, containing: firstDay.adding(days: 7 * n))
        case .month:
            let index = Int64(year) * 12 + Int64(number - 1) + Int64(n)
            let year = index.floorDivided(by: 12)
            return CalendarPeriod(unchecked: .month, year: Int(year), number: Int(index - year * 12) + 1)
        case .year:
            return CalendarPeriod(year: year + n)
        }
    }

    /// A UTC range that holds every instant whose local date is in this period, whatever the zone
    /// (offsets up to ±18 h, Foundation's limit). It is deliberately wider than the period: use it to
    /// narrow a database query, then bucket what it returns with `PeriodTotals`, which decides by
    /// local date. Exact instant bounds would need the zone's transitions, which the core does not
    /// have, and local midnight can repeat or be skipped where a zone changes offset at midnight.
    public var utcSearchRange: Range<Timestamp> {
        let dayMs: Int64 = 86_400_000
        let slackMs: Int64 = 18 * 3_600_000
        let start = firstDay.daysSinceEpoch * dayMs - slackMs
        let end = advanced(by: 1).firstDay.daysSinceEpoch * dayMs + slackMs
        return Timestamp(milliseconds: start)..<Timestamp(milliseconds: end)
    }

    /// Chronological by first day; periods of different kinds starting the same day order week,
    /// month, year.
    public static func < (lhs: CalendarPeriod, rhs: CalendarPeriod) -> Bool {
        let (l, r) = (lhs.firstDay.daysSinceEpoch, rhs.firstDay.daysSinceEpoch)
        if l != r { return l < r }
        return lhs.kind.order < rhs.kind.order
    }

    /// 52, or 53 when the ISO year has 53 Thursdays' worth of weeks: 28 December is always in the
    /// year's last week.
    public static func weeks(inISOYear isoYear: Int) -> Int {
        guard let dec28 = LocalDate(year: isoYear, month: 12, day: 28) else { return 52 }
        return CalendarPeriod(.week, containing: dec28).number
    }

    /// Week 1 is the week holding 4 January.
    private static func mondayOfWeek1(isoYear: Int) -> Int64 {
        let jan4 = LocalDate(daysSinceEpoch: Timestamp.daysSinceEpoch(year: Int64(isoYear), month: 1, day: 4))
        return jan4.daysSinceEpoch - Int64(jan4.weekday - 1)
    }
}

extension PeriodKind {
    fileprivate var order: Int {
        switch self {
        case .week: 0
        case .month: 1
        case .year: 2
        }
    }
}
