import CloudModel

/// Bounds and helpers of the health pages' reads.
enum HealthSQL {
    /// Days × devices: an account with a few devices over a year.
    static let maxDayRows = 2_000

    /// The newest first, one per date: the first row of each date (most readings).
    static func onePerDate(_ rows: [HeartRateDay]) -> [HeartRateDay] {
        var seen = Set<String>()
        return rows.filter { seen.insert($0.date).inserted }
    }
}
