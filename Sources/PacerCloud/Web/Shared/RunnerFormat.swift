import CloudModel
import Foundation
import PacerCore

/// How the runner's pages write distances, times and paces.
enum RunnerFormat {
    /// "10.03 km", or "6.23 mi" for a viewer who reads miles.
    static func distance(_ meters: Double, in unit: DistanceUnit = PageLayout.units) -> String {
        String(format: "%.2f ", unit.amount(metres: meters)) + unit.symbol
    }

    /// "10.0 km": a calendar's or a list's short figure.
    static func shortDistance(_ meters: Double, in unit: DistanceUnit = PageLayout.units) -> String {
        String(format: "%.1f ", unit.amount(metres: meters)) + unit.symbol
    }

    /// "42:05" or "3:12:40".
    static func duration(_ seconds: Double) -> String {
        // Int() of NaN, an infinity or more than Int.max traps: a figure no run has is shown as none.
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "–" }
        let total = Int(seconds.rounded())
        let (h, m, s) = (total / 3_600, total / 60 % 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    /// "5:12 /km", or "8:22 /mi" for a viewer who reads miles; "–" with none.
    static func pace(_ secondsPerKm: Double?, in unit: DistanceUnit = PageLayout.units) -> String {
        guard let secondsPerKm, secondsPerKm.isFinite, secondsPerKm > 0, secondsPerKm < 1e15 else { return "–" }
        let total = Int(unit.pace(secondsPerKm: secondsPerKm).rounded())
        return String(format: "%d:%02d ", total / 60, total % 60) + unit.paceSuffix
    }

    /// A ride's speed ("31.9 km/h", "19.8 mph"), anything else's pace: what each sport reads.
    static func pace(_ secondsPerKm: Double?, sport: Sport, in unit: DistanceUnit = PageLayout.units) -> String {
        guard sport == .ride else { return pace(secondsPerKm, in: unit) }
        guard let secondsPerKm, secondsPerKm.isFinite, secondsPerKm > 0 else { return "–" }
        let perHour = 3_600 / unit.pace(secondsPerKm: secondsPerKm)
        return String(format: "%.1f ", perHour) + (unit == .km ? "km/h" : "mph")
    }

    /// How long ago, as the alerts write it (`AlertClock.age`): "just now", "40 s ago", "3 min
    /// ago", "2 h 5 min ago", "3 days ago"; never hundreds of seconds.
    static func age(milliseconds: Int64) -> String { AlertClock.age(milliseconds: milliseconds) }

    /// A number without needless decimals: "10", "10.5".
    static func number(_ value: Double) -> String {
        let text = String(format: "%.2f", value)
        return text.replacingOccurrences(of: #"\.?0+$"#, with: "", options: .regularExpression)
    }
}

/// Days, weeks (from Monday), months and years in the account's time zone. One per request.
/// Dates are written from the zone's offset at each instant and the proleptic Gregorian
/// calendar, in English: Foundation's DateFormatter set up its ICU formatter again on every call
/// (a tenth of the runs list's CPU under load, bench-web).
final class RunnerCalendar {
    enum Unit {
        case week, month, year
    }

    let calendar: Calendar
    /// Now, by the request's wall clock: a time of this year is written without its year.
    let nowMs: Int64?

    /// `nowMs` defaults to the time the page's request is handled at (`PageLayout.viewer`).
    init(_ timezone: String, nowMs: Int64? = PageLayout.viewer?.nowMs) {
        self.nowMs = nowMs
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: timezone) ?? TimeZone(identifier: "UTC")!
        calendar.firstWeekday = 2
        calendar.minimumDaysInFirstWeek = 4
        self.calendar = calendar
    }

    private func date(ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1_000) }
    private func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000).rounded()) }

    /// The start of the day "2026-05-10" (plus `plusDays`) in this time zone; nil when it is no date.
    func dayStartMs(_ text: String, plusDays: Int = 0) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...9_999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        let components = DateComponents(year: year, month: month, day: day)
        guard calendar.date(from: components).map({ calendar.component(.day, from: $0) == day }) == true,
              let start = calendar.date(from: components).flatMap({ calendar.date(byAdding: .day, value: plusDays, to: $0) }) else { return nil }
        return ms(start)
    }

    /// A local date and time as a `datetime-local` field sends it ("2026-12-06T09:30", seconds
    /// allowed), in this time zone; nil when it is none (or falls in a clock change's gap).
    func localTimeMs(_ text: String) -> Int64? {
        guard let match = text.wholeMatch(of: /([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2}))?/),
              let year = Int(match.1), let month = Int(match.2), let day = Int(match.3), let hour = Int(match.4), let minute = Int(match.5),
              (1...9_999).contains(year), (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        let second = match.6.flatMap { Int($0) } ?? 0
        guard (0...59).contains(second) else { return nil }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let at = calendar.date(from: components) else { return nil }
        let back = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: at)
        guard back.year == year, back.month == month, back.day == day, back.hour == hour, back.minute == minute else { return nil }
        return ms(at)
    }

    /// `at` as a `datetime-local` field's value, "2026-12-06T09:30".
    func localTimeField(_ at: Int64) -> String {
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date(ms: at))
        func two(_ value: Int?) -> String { let v = value ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.year ?? 1970)-\(two(parts.month))-\(two(parts.day))T\(two(parts.hour)):\(two(parts.minute))"
    }

    func periodStartMs(_ at: Int64, _ unit: Unit) -> Int64 {
        // Runs come in time order, so most fall in the period of the one before: asking the
        // calendar (ICU, tens of microseconds) only for a new period keeps /stats light.
        if let known = lastPeriod[unit], known.start <= at, at < known.end { return known.start }
        let component: Calendar.Component = switch unit {
        case .week: .weekOfYear
        case .month: .month
        case .year: .year
        }
        guard let interval = calendar.dateInterval(of: component, for: date(ms: at)) else { return at }
        lastPeriod[unit] = (ms(interval.start), ms(interval.end))
        return ms(interval.start)
    }

    private var lastPeriod: [Unit: (start: Int64, end: Int64)] = [:]

    func periodLabel(_ start: Int64, _ unit: Unit) -> String {
        switch unit {
        case .week: "Week of " + format(start, .dayMonthYear)
        case .month: format(start, .monthNameYear)
        case .year: format(start, .year)
        }
    }

    /// `weeks` weeks after `at` (before it when negative), the same local time.
    func adding(weeks: Int, to at: Int64) -> Int64 {
        calendar.date(byAdding: .weekOfYear, value: weeks, to: date(ms: at)).map(ms) ?? at
    }

    /// `months` months after `at` (before it when negative).
    func adding(months: Int, to at: Int64) -> Int64 {
        calendar.date(byAdding: .month, value: months, to: date(ms: at)).map(ms) ?? at
    }

    /// "Nov 26": a month on a chart's axis.
    func monthLabel(_ at: Int64) -> String { format(at, .monthShortYear) }

    /// The local date "2026-05-10".
    func day(_ at: Int64) -> String { format(at, .isoDay) }

    /// "10 May".
    func shortDate(_ at: Int64) -> String { format(at, .dayMonth) }

    /// Every time the pages show, in one format: "Fri 27 Nov, 20:45", with the year when it is
    /// not this year's ("Tue 24 Nov 2025, 07:31").
    func dateTime(_ at: Int64) -> String {
        isThisYear(at) ? format(at, .weekdayDayMonthTime) : format(at, .weekdayDayMonthYearTime)
    }

    /// "Fri 27 Nov, 20:45 (3 min ago)": when something was last heard of.
    func dateTimeAndAge(_ at: Int64) -> String {
        nowMs.map { dateTime(at) + " (" + RunnerFormat.age(milliseconds: $0 - at) + ")" } ?? dateTime(at)
    }

    private func isThisYear(_ at: Int64) -> Bool {
        guard let nowMs else { return false }
        return local(at).year == local(nowMs).year
    }

    func date(_ at: Int64) -> String { format(at, .dayMonthYear) }

    /// "07:31" on the day of `nowMs`, else as `dateTime`: "Tue 24 Nov, 07:31".
    func clockTime(_ at: Int64, nowMs: Int64) -> String {
        calendar.isDate(date(ms: at), inSameDayAs: date(ms: nowMs)) ? format(at, .time) : dateTime(at)
    }

    private enum Pattern {
        /// "10 May 2026", "May 2026", "2026", "May 26", "2026-05-10", "10 May", "Sun 10 May, 07:31",
        /// "Sun 10 May 2026, 07:31", "07:31".
        case dayMonthYear, monthNameYear, year, monthShortYear, isoDay, dayMonth, weekdayDayMonthTime, weekdayDayMonthYearTime, time
    }

    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                                     "November", "December"]

    /// The local date and time of `at` (ms since the epoch) in this calendar's zone; `weekday` 0 is Monday.
    private func local(_ at: Int64) -> (year: Int, month: Int, day: Int, weekday: Int, hour: Int, minute: Int) {
        let seconds = Int64((Double(at) / 1_000).rounded(.down)) + Int64(calendar.timeZone.secondsFromGMT(for: date(ms: at)))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let inDay = Int(seconds - days * 86_400)
        // Days to a civil date (Howard Hinnant's algorithm), the epoch a Thursday.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shifted + 2) / 5 + 1)
        let month = Int(shifted < 10 ? shifted + 3 : shifted - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        let weekday = Int(((days + 3) % 7 + 7) % 7)
        return (year, month, day, weekday, inDay / 3_600, inDay / 60 % 60)
    }

    private func format(_ at: Int64, _ pattern: Pattern) -> String {
        let t = local(at)
        let month = Self.months[t.month - 1]
        let time = String(format: "%02d:%02d", t.hour, t.minute)
        switch pattern {
        case .dayMonthYear: return "\(t.day) \(month) \(t.year)"
        case .monthNameYear: return "\(Self.monthNames[t.month - 1]) \(t.year)"
        case .year: return String(t.year)
        case .monthShortYear: return month + String(format: " %02d", t.year % 100)
        case .isoDay: return String(format: "%04d-%02d-%02d", t.year, t.month, t.day)
        case .dayMonth: return "\(t.day) \(month)"
        case .weekdayDayMonthTime: return "\(Self.weekdays[t.weekday]) \(t.day) \(month), \(time)"
        case .weekdayDayMonthYearTime: return "\(Self.weekdays[t.weekday]) \(t.day) \(month) \(t.year), \(time)"
        case .time: return time
        }
    }
}
