/// Paces as runners write them: "3:20" is 3 minutes 20 seconds per kilometre (or per mile), and a
/// target range is "fastest-slowest", "3:10-3:30". Returned in seconds per kilometre, the core's
/// unit.
enum PaceText {
    enum Unit {
        case kilometre, mile

        var name: String { self == .kilometre ? "kilometre" : "mile" }
        var meters: Double { self == .kilometre ? 1000 : 1609.344 }
        /// Bounds in seconds per this unit: from faster than any runner's race pace to a slow
        /// walk, so that a typo like "32:0" is caught rather than coached.
        var plausible: ClosedRange<Double> { self == .kilometre ? 60...1800 : 90...2880 }
    }

    /// The problem is a sentence fragment for "expected …" style errors.
    struct Problem: Error {
        var message: String
    }

    static func range(_ text: String, unit: Unit) throws(Problem) -> (fastest: Double, slowest: Double) {
        let example = unit == .kilometre ? "\"3:10-3:30\"" : "\"5:05-5:35\""
        let expected = "expected a pace range like \(example) (fastest-slowest, minutes:seconds per \(unit.name))"
        // An en dash is what word processors turn "-" into; accepting it costs nothing.
        let parts = text.split(omittingEmptySubsequences: false) { $0 == "-" || $0 == "–" }
        guard parts.count == 2, let fastest = seconds(parts[0].trimmed), let slowest = seconds(parts[1].trimmed) else {
            throw Problem(message: "\(expected), got \"\(text)\"")
        }
        for pace in [fastest, slowest] where !unit.plausible.contains(pace) {
            throw Problem(message: "expected paces from \(format(unit.plausible.lowerBound)) to \(format(unit.plausible.upperBound)) per \(unit.name), got \(format(pace))")
        }
        guard fastest != slowest else {
            throw Problem(message: "a range needs two different paces, e.g. \"\(format(fastest - 10))-\(format(fastest + 10))\", got \"\(text)\"")
        }
        guard fastest < slowest else {
            throw Problem(message: "the faster pace comes first: \"\(format(slowest))-\(format(fastest))\", got \"\(text)\"")
        }
        let perKilometre = 1000 / unit.meters
        return (fastest * perKilometre, slowest * perKilometre)
    }

    /// "M:SS" (one to two digits of minutes, exactly two of seconds, 00-59) to seconds.
    static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let minutes = Int(parts[0]), let seconds = Int(parts[1]), seconds < 60
        else { return nil }
        return Double(minutes * 60 + seconds)
    }

    static func format(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        let s = whole % 60
        return "\(whole / 60):\(s < 10 ? "0" : "")\(s)"
    }
}
