/// A day on the calendar in some time zone's local time (proleptic Gregorian), e.g. 2026-05-10.
///
/// The core has no time-zone database: the caller says what the UTC offset is at an instant through
/// `utcOffset` (the Store passes Foundation's `TimeZone.secondsFromGMT(for:)`). Asking per instant is
/// what makes it right across daylight-saving changes: there is no "the zone's offset", only the
/// offset in force at that moment.
public struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Nil unless the date exists (month 1...12, day within that month, 29 February only in leap years).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        let days = Timestamp.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day))
        // 31 April turns into 1 May on the way through: a round trip only survives real dates.
        let date = LocalDate(daysSinceEpoch: days)
        guard date.year == year, date.month == month, date.day == day else { return nil }
        self = date
    }

    /// The local date at `instant`, where `utcOffset(instant)` is the zone's offset from UTC in
    /// seconds at that instant (east positive: +7200 for Europe/Rome in summer, −18000 for UTC−5).
    public init(containing instant: Timestamp, utcOffset: (Timestamp) -> Int) {
        let local = instant.milliseconds + Int64(utcOffset(instant)) * 1000
        self.init(daysSinceEpoch: local.floorDivided(by: 86_400_000))
    }

    init(daysSinceEpoch days: Int64) {
        let (y, m, d) = Timestamp.civilDate(daysSinceEpoch: days)
        (year, month, day) = (Int(y), Int(m), Int(d))
    }

    /// Days from 1970-01-01 (negative before it).
    public var daysSinceEpoch: Int64 {
        Timestamp.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day))
    }

    /// ISO 8601 day of the week: 1 is Monday, 7 is Sunday.
    public var weekday: Int {
        // 1970-01-01 was a Thursday (4).
        let sinceThursday = daysSinceEpoch + 3
        return Int(sinceThursday - sinceThursday.floorDivided(by: 7) * 7) + 1
    }

    public func adding(days: Int) -> LocalDate {
        LocalDate(daysSinceEpoch: daysSinceEpoch + Int64(days))
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// `2026-05-10`.
    public var description: String {
        "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2))"
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value.magnitude)
        let padded = digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        return value < 0 ? "-" + padded : padded
    }
}
