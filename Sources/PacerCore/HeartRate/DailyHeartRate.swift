/// The strap's readings outside runs, summed up per local day for the cloud's health page: how
/// many, the lowest, and a resting estimate. Each day keeps a count per bpm (a few hundred
/// integers at most), so the summary is exact and the whole log fits a small state file.
///
/// The resting estimate is the day's 5th percentile (nearest rank) once it has at least
/// `minReadingsForResting` readings: the low end of a day at rest, which a single artefact (the
/// minimum's weakness) cannot move.
public struct DailyHeartRate: Sendable, Equatable, Codable {
    /// One day's summary, as the heartbeat's `hr_daily` carries it.
    public struct Summary: Sendable, Equatable, Codable {
        /// `YYYY-MM-DD` in the account's time zone.
        public var date: String
        public var count: Int
        public var minBpm: Int?
        public var restingBpm: Int?

        public init(date: String, count: Int, minBpm: Int?, restingBpm: Int?) {
            self.date = date
            self.count = count
            self.minBpm = minBpm
            self.restingBpm = restingBpm
        }
    }

    struct Day: Sendable, Equatable, Codable {
        var date: String
        /// Readings of bpm `firstBpm + i` at `counts[i]`.
        var firstBpm: Int
        var counts: [Int]
        /// The summary the cloud last took for this day (nil: none yet).
        var accepted: Summary?
    }

    /// Days kept (the heartbeat's `DeviceState.maxDailyEntries`).
    public static let maxDays = 31
    public static let restingPercentile = 5
    /// Two minutes of a strap's one reading a second.
    public static let minReadingsForResting = 120

    /// Oldest first, at most `maxDays`.
    private(set) var days: [Day] = []

    public init() {}

    /// One reading at `instant`, where the account's time zone is `utcOffsetSeconds` from UTC.
    /// Readings of a day older than the oldest kept are dropped.
    public mutating func add(bpm: Int, at instant: Timestamp, utcOffsetSeconds: Int) {
        guard bpm > 0, bpm <= HeartRateSample.maximumPlausibleBpm else { return }
        let date = LocalDate(containing: instant, utcOffset: { _ in utcOffsetSeconds }).description
        let index: Int
        if let found = days.lastIndex(where: { $0.date == date }) {
            index = found
        } else {
            if days.count >= Self.maxDays, let oldest = days.first, date < oldest.date { return }
            // Dates as `YYYY-MM-DD` sort as the days they are.
            let at = days.firstIndex { $0.date > date } ?? days.count
            days.insert(Day(date: date, firstBpm: bpm, counts: [0], accepted: nil), at: at)
            // Full, the new day is newer than the oldest (checked above): the oldest goes.
            let dropped = max(0, days.count - Self.maxDays)
            days.removeFirst(dropped)
            index = at - dropped
        }
        days[index].count(bpm)
    }

    /// Every day kept, oldest first.
    public var summaries: [Summary] { days.map(\.summary) }

    /// The days whose summary the cloud does not have yet, oldest first; at most `limit`, the newest.
    public func unsent(limit: Int) -> [Summary] {
        Array(days.compactMap { day in
            let summary = day.summary
            return summary == day.accepted ? nil : summary
        }.suffix(limit))
    }

    /// The cloud took these summaries: they are sent again only once they change.
    public mutating func accepted(_ summaries: [Summary]) {
        for summary in summaries {
            guard let index = days.firstIndex(where: { $0.date == summary.date }) else { continue }
            days[index].accepted = summary
        }
    }
}

extension DailyHeartRate.Day {
    mutating func count(_ bpm: Int) {
        if bpm < firstBpm {
            counts.insert(contentsOf: [Int](repeating: 0, count: firstBpm - bpm), at: 0)
            firstBpm = bpm
        } else if bpm >= firstBpm + counts.count {
            counts.append(contentsOf: [Int](repeating: 0, count: bpm - firstBpm - counts.count + 1))
        }
        counts[bpm - firstBpm] += 1
    }

    var summary: DailyHeartRate.Summary {
        let total = counts.reduce(0, +)
        let lowest = counts.firstIndex { $0 > 0 }.map { firstBpm + $0 }
        var resting: Int?
        if total >= DailyHeartRate.minReadingsForResting {
            // Nearest rank: the smallest bpm with at least p % of the readings at or below it.
            let rank = (total * DailyHeartRate.restingPercentile + 99) / 100
            var seen = 0
            for (offset, count) in counts.enumerated() {
                seen += count
                if seen >= rank {
                    resting = firstBpm + offset
                    break
                }
            }
        }
        return DailyHeartRate.Summary(date: date, count: total, minBpm: lowest, restingBpm: resting)
    }
}
