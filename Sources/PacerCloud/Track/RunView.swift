import Foundation
import PacerContract

/// What a run's page shows, computed once from its whole track and stored (`run_view`), so a
/// page view reads one row instead of the track: the track simplified for the map, the pace and
/// heart-rate series downsampled for the charts, splits, best efforts and time per heart rate.
struct RunView: Codable, Sendable, Equatable {
    /// Bumped when what is computed changes: views of an older version are computed again.
    static let version = 1
    /// The most points the map's line has (Douglas–Peucker keeps the most significant ones).
    static let maxTrackPoints = 2_000
    /// The most points of each chart: the whole run, averaged into as many distance buckets.
    static let maxChartPoints = 500
    /// A gap longer than this between two samples counts as this much heart-rate time (a pause
    /// or a lost signal is not time spent at the last reading).
    static let maxSampleGapS = 5.0

    struct Split: Codable, Sendable, Equatable {
        /// 1, 2, …; the last one may be shorter than a kilometre.
        var km: Int
        var meters: Double
        var seconds: Double
        var hrAvg: Double?
    }

    struct BestEffort: Codable, Sendable, Equatable {
        var name: String
        var meters: Double
        var seconds: Double
    }

    /// [lat, lon] of the simplified track.
    var track: [[Double]]
    /// Samples with a position before simplification.
    var samples: Int
    /// [lat, lon, km] where each whole kilometre was reached.
    var kmMarks: [[Double]]
    /// The charts' x axis: kilometres from the start.
    var chartKm: [Double]
    /// Seconds per km at each chart point; nil while stopped.
    var pace: [Double?]
    var heartRate: [Double?]
    var splits: [Split]
    var bestEfforts: [BestEffort]
    /// [bpm, seconds] for each heart rate read, ascending.
    var heartRateSeconds: [[Double]]

    /// The distances records are kept for.
    static let recordDistances: [(name: String, meters: Double)] = [
        ("1 km", 1_000), ("5 km", 5_000), ("10 km", 10_000), ("Half marathon", 21_097.5), ("Marathon", 42_195),
    ]

    /// What a stored view must have been computed from to be current: this version and this summary.
    static func source(summaryJSON: String) -> String { Tokens.hash("run-view \(version)\n" + summaryJSON) }

    init(samples input: [ChunkSample]) {
        let points = input
        samples = points.count
        let kept = Self.simplify(points, keep: Self.maxTrackPoints)
        track = kept.map { [Self.rounded(points[$0].lat), Self.rounded(points[$0].lon)] }
        kmMarks = Self.kilometreMarks(points)
        (chartKm, pace, heartRate) = Self.series(points, buckets: Self.maxChartPoints)
        splits = Self.splits(points)
        bestEfforts = Self.recordDistances.compactMap { record in
            Self.bestTime(points, meters: record.meters).map { BestEffort(name: record.name, meters: record.meters, seconds: $0) }
        }
        heartRateSeconds = Self.heartRateTime(points)
    }

    /// Six decimals of a degree: 0.1 m, finer than any receiver.
    static func rounded(_ degrees: Double) -> Double { (degrees * 1e6).rounded() / 1e6 }

    // MARK: the map

    /// The indices of at most `keep` points, first and last included, that Douglas–Peucker keeps
    /// at the smallest tolerance giving no more than `keep`: each point is ranked by the
    /// deviation at which it would be kept (never above its parent's), and the highest ranks win.
    static func simplify(_ points: [ChunkSample], keep: Int) -> [Int] {
        let count = points.count
        guard count > keep, keep >= 2 else { return Array(0..<count) }
        let origin = points[0]
        let metresPerDegreeLon = 111_320 * cos(origin.lat * .pi / 180)
        let xy = points.map { (x: ($0.lon - origin.lon) * metresPerDegreeLon, y: ($0.lat - origin.lat) * 110_540) }
        var rank = [Double](repeating: 0, count: count)
        rank[0] = .infinity
        rank[count - 1] = .infinity
        var pending = [(first: 0, last: count - 1, cap: Double.infinity)]
        while let (first, last, cap) = pending.popLast() {
            guard last > first + 1 else { continue }
            var farthest = first + 1, deviation = -1.0
            for index in (first + 1)..<last {
                let distance = segmentDistance(xy[index], xy[first], xy[last])
                if distance > deviation { (farthest, deviation) = (index, distance) }
            }
            // Every point between lies on the segment: all rank 0 already, and splitting it point
            // by point would be quadratic (a straight stretch of thousands of samples).
            guard deviation > 0 else { continue }
            let value = min(deviation, cap)
            rank[farthest] = value
            pending.append((first, farthest, value))
            pending.append((farthest, last, value))
        }
        let threshold = rank.sorted(by: >)[keep - 1]
        var chosen: [Int] = []
        var ties = keep - rank.filter { $0 > threshold }.count
        for index in 0..<count where rank[index] > threshold || (rank[index] == threshold && ties > 0) {
            if rank[index] == threshold { ties -= 1 }
            chosen.append(index)
        }
        return chosen
    }

    static func segmentDistance(_ p: (x: Double, y: Double), _ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
        let (dx, dy) = (b.x - a.x, b.y - a.y)
        let length = dx * dx + dy * dy
        let t = length == 0 ? 0 : max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length))
        let (ex, ey) = (p.x - (a.x + t * dx), p.y - (a.y + t * dy))
        return (ex * ex + ey * ey).squareRoot()
    }

    static func kilometreMarks(_ points: [ChunkSample]) -> [[Double]] {
        var marks: [[Double]] = []
        var next = 1_000.0
        for (a, b) in zip(points, points.dropFirst()) where b.distanceM >= next && b.distanceM > a.distanceM {
            while b.distanceM >= next {
                let f = max(0, (next - a.distanceM) / (b.distanceM - a.distanceM))
                marks.append([rounded(a.lat + (b.lat - a.lat) * f), rounded(a.lon + (b.lon - a.lon) * f), next / 1_000])
                next += 1_000
            }
        }
        return marks
    }

    // MARK: the charts

    /// The run cut into at most `buckets` equal stretches of distance: each bucket's pace
    /// (time over distance since the previous bucket's end) and mean heart rate.
    static func series(_ points: [ChunkSample], buckets: Int) -> (km: [Double], pace: [Double?], hr: [Double?]) {
        guard let first = points.first, let last = points.last, last.distanceM > first.distanceM else { return ([], [], []) }
        let width = max((last.distanceM - first.distanceM) / Double(buckets), 1)
        let bucketOf = { (sample: ChunkSample) in min(Int((sample.distanceM - first.distanceM) / width), buckets - 1) }
        var km: [Double] = [], pace: [Double?] = [], hr: [Double?] = []
        var previous = first
        var (hrSum, hrCount) = (0.0, 0)
        for (index, sample) in points.enumerated() {
            if let bpm = sample.heartRate { (hrSum, hrCount) = (hrSum + Double(bpm), hrCount + 1) }
            // A bucket ends at its last sample.
            let end = index == points.count - 1 || bucketOf(points[index + 1]) > bucketOf(sample)
            guard end, sample.distanceM > previous.distanceM else { continue }
            let secondsPerKm = Double(sample.timeMs - previous.timeMs) / (sample.distanceM - previous.distanceM)
            km.append((sample.distanceM / 10).rounded() / 100)
            // Slower than 30 min/km is standing, not running: a gap in the chart.
            pace.append(secondsPerKm <= 1_800 ? secondsPerKm.rounded() : nil)
            hr.append(hrCount > 0 ? (hrSum / Double(hrCount)).rounded() : nil)
            (hrSum, hrCount) = (0, 0)
            previous = sample
        }
        return (km, pace, hr)
    }

    // MARK: splits and records

    /// One split per whole kilometre (its end interpolated between samples), then the rest.
    static func splits(_ points: [ChunkSample]) -> [Split] {
        guard let first = points.first, let last = points.last else { return [] }
        var splits: [Split] = []
        var (startMs, startM) = (Double(first.timeMs), first.distanceM)
        var (hrSum, hrCount) = (0.0, 0)
        var next = 1_000.0
        for (a, b) in zip(points, points.dropFirst()) {
            if let bpm = b.heartRate { (hrSum, hrCount) = (hrSum + Double(bpm), hrCount + 1) }
            while b.distanceM >= next && b.distanceM > a.distanceM {
                let f = (next - a.distanceM) / (b.distanceM - a.distanceM)
                let atMs = Double(a.timeMs) + Double(b.timeMs - a.timeMs) * f
                splits.append(Split(km: splits.count + 1, meters: next - startM, seconds: ((atMs - startMs) / 100).rounded() / 10,
                                    hrAvg: hrCount > 0 ? (hrSum / Double(hrCount)).rounded() : nil))
                (startMs, startM, hrSum, hrCount) = (atMs, next, 0, 0)
                next += 1_000
            }
        }
        // The rest, when it is more than a stride or two.
        if last.distanceM - startM >= 20 {
            splits.append(Split(km: splits.count + 1, meters: (last.distanceM - startM).rounded(),
                                seconds: ((Double(last.timeMs) - startMs) / 100).rounded() / 10,
                                hrAvg: hrCount > 0 ? (hrSum / Double(hrCount)).rounded() : nil))
        }
        return splits
    }

    /// The shortest time in which `meters` were covered anywhere in the run (the end of the
    /// stretch interpolated between samples); nil when the run is shorter.
    static func bestTime(_ points: [ChunkSample], meters: Double) -> Double? {
        guard let first = points.first, let last = points.last, last.distanceM - first.distanceM >= meters else { return nil }
        var best = Double.infinity
        var end = 0
        for start in points.indices {
            let target = points[start].distanceM + meters
            while end < points.count && points[end].distanceM < target { end += 1 }
            guard end < points.count else { break }
            let (a, b) = (points[end - 1], points[end])
            let f = b.distanceM > a.distanceM ? (target - a.distanceM) / (b.distanceM - a.distanceM) : 1
            let atMs = Double(a.timeMs) + Double(b.timeMs - a.timeMs) * f
            best = min(best, (atMs - Double(points[start].timeMs)) / 1_000)
        }
        return best.isFinite ? (best * 10).rounded() / 10 : nil
    }

    static func heartRateTime(_ points: [ChunkSample]) -> [[Double]] {
        var seconds: [Int: Double] = [:]
        for (a, b) in zip(points, points.dropFirst()) {
            guard let bpm = a.heartRate else { continue }
            seconds[bpm, default: 0] += min(Double(b.timeMs - a.timeMs) / 1_000, maxSampleGapS)
        }
        return seconds.keys.sorted().map { [Double($0), seconds[$0]!] }
    }
}

/// Heart-rate zones as shares of a maximum heart rate: Z1 below 60 %, then one per 10 %, Z5
/// from 90 %.
enum HeartRateZones {
    /// The maximum used when neither the account (its settings) nor its device (`[profile]
    /// max_hr_bpm`, sent with the heartbeat) gives one: a common adult figure, shown on the page
    /// as the default it is.
    static let defaultMaximum = 190
    static let bounds = [0.6, 0.7, 0.8, 0.9]

    /// Each zone's name and bpm range as the pages show them: "Z1" "< 114", "Z2" "114–132", …, "Z5" "≥ 171".
    static func ranges(maximum: Int) -> [(name: String, range: String)] {
        var lower = 0
        return (0...bounds.count).map { index in
            let upper = index < bounds.count ? Int((bounds[index] * Double(maximum)).rounded()) : nil
            defer { lower = upper ?? lower }
            return ("Z\(index + 1)", upper.map { lower == 0 ? "< \($0)" : "\(lower)–\($0 - 1)" } ?? "≥ \(lower)")
        }
    }

    /// Seconds in each of the five zones.
    static func seconds(_ heartRateSeconds: [[Double]], maximum: Int) -> [Double] {
        var zones = [Double](repeating: 0, count: bounds.count + 1)
        for entry in heartRateSeconds where entry.count == 2 {
            let share = entry[0] / Double(maximum)
            zones[bounds.firstIndex { share < $0 } ?? bounds.count] += entry[1]
        }
        return zones
    }
}
