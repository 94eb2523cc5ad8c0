/// A distance Pacer keeps a personal record for.
///
/// Identity is the distance alone: two values with the same `meters` and different names are the same
/// record (a name is for display, and a record read back from storage with `init(meters:)` must still
/// match the configured one). Hashing follows the same rule.
public struct RecordDistance: Sendable, Hashable, CustomStringConvertible {
    public let meters: Double
    public let name: String

    /// `name` defaults to the standard name for a standard distance ("Half marathon"), else "3 km",
    /// "400 m" or "1609.344 m".
    public init(meters: Double, name: String? = nil) {
        self.meters = meters
        self.name = name ?? Self.defaultName(meters)
    }

    public static let oneKilometre = RecordDistance(meters: 1_000, name: "1 km")
    public static let fiveKilometres = RecordDistance(meters: 5_000, name: "5 km")
    public static let tenKilometres = RecordDistance(meters: 10_000, name: "10 km")
    /// 21 097.5 m: half of the IAAF marathon.
    public static let halfMarathon = RecordDistance(meters: 21_097.5, name: "Half marathon")
    /// 42 195 m, the IAAF marathon.
    public static let marathon = RecordDistance(meters: 42_195, name: "Marathon")

    /// The default list, shortest first.
    public static let standard: [RecordDistance] = [
        .oneKilometre, .fiveKilometres, .tenKilometres, .halfMarathon, .marathon,
    ]

    public static func == (lhs: RecordDistance, rhs: RecordDistance) -> Bool { lhs.meters == rhs.meters }

    public func hash(into hasher: inout Hasher) { hasher.combine(meters) }

    public var description: String { name }

    private static func defaultName(_ meters: Double) -> String {
        if let known = standard.first(where: { $0.meters == meters }) { return known.name }
        // Whole kilometres and whole metres print without a fraction; anything else keeps Swift's
        // shortest round-tripping form so no two distinct distances get the same name.
        if meters.isFinite, meters > 0, meters < 1e12, meters == meters.rounded() {
            let whole = Int64(meters)
            return whole % 1000 == 0 ? "\(whole / 1000) km" : "\(whole) m"
        }
        return "\(meters) m"
    }
}
