/// The one way every alert writes a time, for a frightened relative to read at once:
/// "20:45 (3 min ago)". The clock is in the reader's time zone where it is known (the account's,
/// the monitor's), otherwise the wearer's; the age says how long before `now` it was, so the
/// clock is never misread even by someone in another zone. The SMS, the e-mail, the webhook, the
/// alert page and the dashboard all write it through here. Pure: `now` is passed in.
///
/// - the same local day as `now`: "20:45 (3 min ago)", "20:45 (just now)";
/// - another day: "20:45 on 26 Nov (23 h ago)", another year: "20:45 on 31 Dec 2025 (2 days ago)";
/// - no zone known at all: UTC, and it says so: "19:45 UTC (just now)";
/// - a time ahead of `now` (a device clock set wrong): "20:45 (in 5 min)".
public enum AlertClock {
    /// `time` as "20:45 (3 min ago)" in the zone whose offset from UTC (seconds, east positive)
    /// at an instant is `utcOffset(instant)`.
    public static func text(_ time: Timestamp, now: Timestamp, utcOffset: (Timestamp) -> Int) -> String {
        clock(time, now: now, utcOffset: utcOffset, label: "") + " (" + age(milliseconds: now.milliseconds - time.milliseconds) + ")"
    }

    /// `time` in `zone`; nil: no zone is known, UTC said as such.
    public static func text(_ time: Timestamp, now: Timestamp, zone: ZoneOffsets?) -> String {
        guard let zone else {
            return clock(time, now: now, utcOffset: { _ in 0 }, label: " UTC") + " (" + age(milliseconds: now.milliseconds - time.milliseconds) + ")"
        }
        return text(time, now: now, utcOffset: zone.secondsFromUTC(at:))
    }

    /// The age part alone: "just now" (within 10 s), "40 s ago", "3 min ago", "2 h 5 min ago",
    /// "23 h ago", "3 days ago"; ahead of now: "in 5 min".
    public static func age(milliseconds: Int64) -> String {
        let seconds = milliseconds / 1000
        if seconds > -10 && seconds < 10 { return "just now" }
        return seconds < 0 ? "in " + span(seconds == Int64.min ? Int64.max : -seconds) : span(seconds) + " ago"
    }

    private static func span(_ seconds: Int64) -> String {
        if seconds < 90 { return "\(seconds) s" }
        if seconds < 90 * 60 { return "\(seconds / 60) min" }
        if seconds < 48 * 3600 {
            let (hours, minutes) = (seconds / 3600, seconds / 60 % 60)
            return seconds < 6 * 3600 && minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h"
        }
        return "\(seconds / 86_400) days"
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// "20:45", with the date when it is not `now`'s local day.
    private static func clock(_ time: Timestamp, now: Timestamp, utcOffset: (Timestamp) -> Int, label: String) -> String {
        let localMs = time.milliseconds &+ Int64(utcOffset(time)) * 1000
        let minuteOfDay = localMs.floorDivided(by: 60_000) - localMs.floorDivided(by: 86_400_000) * 1440
        let hhmm = twoDigits(minuteOfDay / 60) + ":" + twoDigits(minuteOfDay % 60) + label
        let day = LocalDate(containing: time, utcOffset: utcOffset)
        let today = LocalDate(containing: now, utcOffset: utcOffset)
        guard day != today else { return hhmm }
        let date = "\(day.day) " + months[day.month - 1]
        return hhmm + " on " + date + (day.year == today.year ? "" : " \(day.year)")
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}

/// The wearer's name (`[profile] name` on the device, the account's display name in the cloud)
/// as every alert shows it: plain text on one line. Control characters, invisible formatting
/// (bidirectional overrides and isolates, zero-width joiners, soft hyphens) and line or paragraph
/// separators are dropped, so a name can neither reorder the text around it nor hide in it; runs
/// of white space become one space; at most `maxLength` Unicode scalars (the contract's cap).
public enum WearerName {
    /// The longest name in Unicode scalars: `[profile] name`'s limit and the alert JSON's `wearer`.
    public static let maxLength = 64

    /// The name cleaned for showing; nil when nothing printable is left.
    public static func cleaned(_ text: String) -> String? {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        var count = 0
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace || isSpace(scalar) {
                pendingSpace = !out.isEmpty
                continue
            }
            guard isShown(scalar) else { continue }
            if pendingSpace {
                guard count + 2 <= maxLength else { break }
                out.append(" ")
                count += 1
                pendingSpace = false
            }
            guard count < maxLength else { break }
            out.append(scalar)
            count += 1
        }
        return out.isEmpty ? nil : String(out)
    }

    /// The first scalar `[profile] name` must refuse: one that `cleaned` would drop, other than
    /// white space (a control character, invisible formatting, a separator); nil when none.
    public static func firstHidden(_ text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { !isShown($0) && !isSpace($0) }
    }

    /// The name in the GSM-7 basic set for the SMS: common accented Latin letters without their
    /// accent ("François" → "Francois"), anything else "?", at most `limit` characters; nil when
    /// no letter or digit is left (a name in another script), so the text does not carry "????".
    public static func gsm7(_ text: String, limit: Int) -> String? {
        guard let name = cleaned(text) else { return nil }
        var out = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            let mapped: String
            if GSM7.basic.contains(scalar), scalar != "\n", scalar != "\r" {
                mapped = String(scalar)
            } else if let plain = latin[scalar] {
                mapped = plain
            } else {
                mapped = "?"
            }
            for piece in mapped.unicodeScalars where out.count < limit { out.append(piece) }
        }
        var result = String(out)
        while result.hasSuffix(" ") { result.removeLast() }
        guard result.unicodeScalars.contains(where: { $0.properties.isAlphabetic || ("0"..."9").contains($0) }),
              result.unicodeScalars.contains(where: { $0 != "?" && $0 != " " }) else { return nil }
        return result
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .spaceSeparator
    }

    private static func isShown(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned, .spaceSeparator: false
        default: true
        }
    }

    /// Latin letters outside the GSM-7 basic set, written without their accent.
    static let latin: [Unicode.Scalar: String] = {
        let pairs: [(String, String)] = [
            ("ÀÁÂÃĀĂĄ", "A"), ("áâãāăą", "a"), ("ÇĆĈĊČ", "C"), ("çćĉċč", "c"), ("ĎĐ", "D"), ("ďđ", "d"),
            ("ÈÊËĒĔĖĘĚ", "E"), ("êëēĕėęě", "e"), ("ĜĞĠĢ", "G"), ("ĝğġģ", "g"), ("ĤĦ", "H"), ("ĥħ", "h"),
            ("ÌÍÎÏĨĪĬĮİ", "I"), ("íîïĩīĭįı", "i"), ("Ĵ", "J"), ("ĵ", "j"), ("Ķ", "K"), ("ķ", "k"), ("ĹĻĽĿŁ", "L"), ("ĺļľŀł", "l"),
            ("ŃŅŇ", "N"), ("ńņňŉ", "n"), ("ÒÓÔÕŌŎŐ", "O"), ("óôõōŏő", "o"), ("ŔŖŘ", "R"), ("ŕŗř", "r"), ("ŚŜŞŠȘ", "S"), ("śŝşšș", "s"),
            ("ŢŤŦȚ", "T"), ("ţťŧț", "t"), ("ÙÚÛŨŪŬŮŰŲ", "U"), ("úûũūŭůűų", "u"), ("Ŵ", "W"), ("ŵ", "w"), ("ÝŶŸ", "Y"), ("ýÿŷ", "y"),
            ("ŹŻŽ", "Z"), ("źżž", "z"), ("Œ", "OE"), ("œ", "oe"), ("Ð", "D"), ("ð", "d"), ("Þ", "Th"), ("þ", "th"),
            ("’‘`´", "'"), ("“”", "\""), ("–—", "-"),
        ]
        var table: [Unicode.Scalar: String] = [:]
        for (letters, plain) in pairs {
            for scalar in letters.unicodeScalars { table[scalar] = plain }
        }
        return table
    }()
}
