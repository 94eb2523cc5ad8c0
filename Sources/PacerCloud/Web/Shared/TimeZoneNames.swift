import Foundation

/// The time zones a runner chooses from: the tz database's names of places ("Europe/Rome") and
/// UTC, as Foundation knows them (ICU's copy of the database). Offsets written as names
/// ("GMT+1", "Etc/GMT-1", whose sign is the reverse of what people mean) are not offered, nor
/// taken: they ignore summer time, which a place's name follows.
enum TimeZoneNames {
    static let all: [String] = {
        let places = TimeZone.knownTimeZoneIdentifiers.filter { name in
            name.contains("/") && !name.hasPrefix("Etc/") && !name.hasPrefix("SystemV/") && TimeZone(identifier: name) != nil
        }
        return (Set(places).union(["UTC"])).sorted()
    }()

    private static let byLowercase: [String: String] = Dictionary(all.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })

    /// The list's spelling of `text`, whatever its case and surrounding spaces, spaces counting
    /// as underscores ("europe/rome" is Europe/Rome, "america/new york" America/New_York); nil
    /// when it is not a name of the list.
    static func canonical(_ text: String) -> String? {
        let key = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "_").lowercased()
        guard key.utf8.count <= 64 else { return nil }
        return byLowercase[key]
    }

    /// The `<option>`s of the select, `selected` marked.
    static func options(selected: String) -> [[String: Any]] {
        all.map { ["name": $0, "selected": $0 == selected] }
    }
}
