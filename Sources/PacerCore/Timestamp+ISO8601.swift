extension Timestamp {
    /// `2026-05-10T07:30:01.000Z`: ISO-8601 UTC with milliseconds, the one format Pacer prints.
    public var iso8601: String {
        let days = milliseconds.floorDivided(by: 86_400_000)
        let msOfDay = milliseconds - days * 86_400_000
        let (year, month, day) = Self.civilDate(daysSinceEpoch: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let ms = msOfDay % 1000
        return "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2))T"
            + "\(Self.pad(hour, 2)):\(Self.pad(minute, 2)):\(Self.pad(second, 2)).\(Self.pad(ms, 3))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff…]Z` (UTC only, as gpsd and Pacer's HR logs write it).
    /// Returns nil for anything else rather than guessing.
    public init?(iso8601 text: String) {
        guard let ms = Self.milliseconds(iso8601: text, allowingOffset: false) else { return nil }
        milliseconds = ms
    }

    /// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fff…]` followed by `Z`, or with
    /// `allowingOffset` also `±HH:MM` (what the cloud takes from a device, Sources/PacerContract).
    /// Fractions past milliseconds are cut off; anything else is nil.
    public static func milliseconds(iso8601 text: String, allowingOffset: Bool) -> Int64? {
        let b = Array(text.utf8)
        func digits(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                let c = b[i]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            return v
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116,
            b[13] == 58, b[16] == 58,
            let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
            let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fractionMs: Int64 = 0
        if index < b.count && b[index] == 46 {
            index += 1
            var scale: Int64 = 100
            let start = index
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                fractionMs += Int64(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        guard index < b.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch b[index] {
        case 90, 122:  // Z, z
            index += 1
        case 43, 45:  // +, -
            guard allowingOffset, let oh = digits(index + 1, 2), index + 3 < b.count, b[index + 3] == 58, let om = digits(index + 4, 2)
            else { return nil }
            offsetMinutes = (oh * 60 + om) * (b[index] == 45 ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let days = Self.daysSinceEpoch(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60_000 + second * 1000 + fractionMs
    }

    // Howard Hinnant's days_from_civil / civil_from_days: exact proleptic Gregorian arithmetic.
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilDate(daysSinceEpoch z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = z.floorDivided(by: 146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? q - 1 : q
    }
}
