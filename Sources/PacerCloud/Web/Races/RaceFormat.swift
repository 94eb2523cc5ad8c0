import CloudModel
import Foundation

/// A race's figures as its pages write them: times in the race's zone, distances in the viewer's unit.
struct RaceFormat {
    let viewerZone: String?

    init(account: Account?) { viewerZone = account?.timezone }

    /// "Sun 6 Dec, 09:30 (Europe/Rome)": the race's own zone, named when it is not the viewer's.
    func starts(_ race: Race) -> String {
        let text = RunnerCalendar(race.timezone).dateTime(race.startsMs)
        return viewerZone == race.timezone ? text : text + " (" + race.timezone + ")"
    }

    func summary(_ race: Race) -> [String: Any] {
        ["id": race.id, "name": race.name, "starts": starts(race), "length": RunnerFormat.distance(race.lengthM),
         "invitation": race.access == .invitation]
    }

    /// "1:02:03", "42:10": a race time.
    static func clock(milliseconds: Int64) -> String {
        let total = Int((Double(milliseconds) / 1_000).rounded())
        let (h, m, s) = (total / 3_600, total / 60 % 60, total % 60)
        let mm = h > 0 && m < 10 ? "0\(m)" : "\(m)", ss = s < 10 ? "0\(s)" : "\(s)"
        return h > 0 ? "\(h):\(mm):\(ss)" : "\(mm):\(ss)"
    }

    /// "1:02:03" or "42:10" typed, in milliseconds; nil when it is not a time.
    static func parsedClock(_ text: String) -> Int64? {
        let parts = text.trimmingSpaces.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            return nil
        }
        let numbers = parts.compactMap { Int($0) }
        guard numbers.count == parts.count, numbers.dropFirst().allSatisfy({ $0 < 60 }) else { return nil }
        let seconds = numbers.reduce(0) { $0 * 60 + $1 }
        guard seconds > 0, seconds <= 48 * 3_600 else { return nil }
        return Int64(seconds) * 1_000
    }
}
