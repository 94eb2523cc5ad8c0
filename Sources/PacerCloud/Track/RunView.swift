import CloudModel
import Foundation
import PacerContract

/// What a run's page shows, computed once from its whole track and stored (`run_view`), so a
/// page view reads one row instead of the track: the track simplified for the map, the pace and
/// heart-rate series downsampled for the charts, splits, best efforts and time per heart rate.
struct RunView: Codable, Sendable, Equatable {
    /// Bumped when what is computed changes: views of an older version are computed again.
    static let version = 5
    /// The most points the map's line has (Douglas–Peucker keeps the most significant ones).
    static let maxTrackPoints = 2_000
    /// The most points of each chart: the whole run, averaged into as many distance buckets.
    static let maxChartPoints = 500
    /// A gap longer than this between two samples counts as this much heart-rate time (a pause
    /// or a lost signal is not time spent at the last reading).
    static let maxSampleGapS = 5.0
    /// The most whole splits in the table (and kilometre marks on the map): a run longer than
    /// this many km gets splits of 2, 5, 10, 20, 50 … km instead of 1, so that the page stays
    /// small whatever distance a track claims (a run of 1e8 m was 100,000 rows, an 8 MB page).
    /// 500 km of 1 km splits cover any run a runner records in one go.
    static let maxSplits = 500

    struct Split: Codable, Sendable, Equatable {
        /// The kilometre (or mile, in `miles`) it ends at: 1, 2, … (`splitKm` apart); the last one may be shorter.
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

    /// [lat, lon] of the simplified track, stored and sent flat.
    var track: FlatPairs
    /// Samples with a position before simplification.
    var samples: Int
    /// [lat, lon, km] where each `splitKm`-th kilometre was reached.
    var kmMarks: [[Double]]
    /// The kilometres of a split and between marks: 1 unless the run is longer than `maxSplits` km.
    var splitKm: Int
    /// The charts' x axis: kilometres from the start.
    var chartKm: [Double]
    /// Seconds per km at each chart point; nil while stopped.
    var pace: [Double?]
    var heartRate: [Double?]
    /// Metres above sea level at each chart point (a bucket's mean); empty when the track has none.
    var elevation: [Double?]
    /// Metres climbed (`climb`), nil when the track has no altitude.
    var elevationGainM: Double?
    var splits: [Split]
    var bestEfforts: [BestEffort]
    /// [bpm, seconds] for each heart rate read, ascending.
    var heartRateSeconds: [[Double]]
    /// Why the run cannot be right (`RunDoubt`), nil when it can: a doubted run has no best efforts.
    var doubt: String?
    /// The splits and marks of an account that reads miles (the fields above are kilometres').
    var miles: SplitTable

    /// Splits and map marks in one unit.
    struct SplitTable: Codable, Sendable, Equatable {
        /// Units per split and between marks: 1 unless the run is longer than `maxSplits` of them.
        var every: Int
        /// [lat, lon, units from the start] at each mark.
        var marks: [[Double]]
        var splits: [Split]
    }

    /// The splits and marks in `unit`.
    func table(_ unit: DistanceUnit) -> SplitTable {
        unit == .mi ? miles : SplitTable(every: splitKm, marks: kmMarks, splits: splits)
    }

    /// The distances records are kept for.
    static let recordDistances: [(name: String, meters: Double)] = [
        ("1 km", 1_000), ("5 km", 5_000), ("10 km", 10_000), ("Half marathon", 21_097.5), ("Marathon", 42_195),
    ]

    /// What a stored view must have been computed from to be current: this version and this summary.
    /// The sport too: the doubt's bounds are the sport's.
    static func source(summaryJSON: String, sport: Sport = .run) -> String {
        Tokens.hash("run-view \(version)\n" + (sport == .run ? "" : "sport \(sport.rawValue)\n") + summaryJSON)
    }

    /// `summary`: the run's totals, judged with the track (`RunDoubt`); nil judges the track alone.
    init(samples input: [ChunkSample], sport: Sport = .run, summary: RunSummaryBody? = nil) {
        let points = input
        let first = points.first, last = points.last
        doubt = RunDoubt.reason(
            distanceM: summary?.distance_m ?? ((last?.distanceM ?? 0) - (first?.distanceM ?? 0)), movingS: summary?.moving_time_s ?? 0,
            elapsedS: summary?.elapsed_time_s ?? Double((last?.timeMs ?? 0) - (first?.timeMs ?? 0)) / 1_000, sport: sport,
            points: points.map { RunDoubt.Point(timeMs: $0.timeMs, distanceM: $0.distanceM) })
        samples = points.count
        let kept = Self.simplify(points, keep: Self.maxTrackPoints)
        track = FlatPairs(kept.map { [Self.rounded(points[$0].lat), Self.rounded(points[$0].lon)] })
        splitKm = Self.splitKm(points)
        kmMarks = Self.kilometreMarks(points, every: splitKm)
        (chartKm, pace, heartRate, elevation) = Self.series(points, buckets: Self.maxChartPoints)
        elevationGainM = Self.climb(points)
        splits = Self.splits(points, every: splitKm)
        let mile = DistanceUnit.metresPerMile
        let everyMiles = Self.splitKm(points, unitMeters: mile)
        miles = SplitTable(every: everyMiles, marks: Self.kilometreMarks(points, every: everyMiles, unitMeters: mile),
                           splits: Self.splits(points, every: everyMiles, unitMeters: mile))
        // Records come from plausible efforts only.
        bestEfforts = doubt != nil ? [] : Self.recordDistances.compactMap { record in
            Self.bestTime(points, meters: record.meters).map { BestEffort(name: record.name, meters: record.meters, seconds: $0) }
        }
        heartRateSeconds = Self.heartRateTime(points)
    }

    /// Six decimals of a degree: 0.1 m, finer than any receiver.
    static func rounded(_ degrees: Double) -> Double { (degrees * 1e6).rounded() / 1e6 }

    // MARK: the map

    /// The most points Douglas–Peucker itself looks at: a longer track (more than 5.5 h at one
    /// sample a second) is first thinned to this many (`thin`), so that its cost is bounded
    /// for any input: at most `keep` splits, each scanning at most this many points.
    static let maxSimplifyInput = 10_000

    /// The indices of at most `keep` points, first and last included, that Douglas–Peucker keeps
    /// at the smallest tolerance giving no more than `keep`: the stretch whose farthest point
    /// deviates most (never more than the stretch it was cut from) is split first, until `keep`
    /// points are kept or every stretch is straight. `checks` counts the distances computed:
    /// at most n + keep × `maxSimplifyInput` for any track (the recursive form was quadratic,
    /// 2 × 10^10 for a 200,000-point zigzag whose farthest point is always next to an end).
    static func simplify(_ points: [ChunkSample], keep: Int, checks: inout Int) -> [Int] {
        let count = points.count
        guard count > keep, keep >= 2 else { return Array(0..<count) }
        let origin = points[0]
        let metresPerDegreeLon = 111_320 * cos(origin.lat * .pi / 180)
        let xy = points.map { (x: ($0.lon - origin.lon) * metresPerDegreeLon, y: ($0.lat - origin.lat) * 110_540) }
        let candidates = count <= maxSimplifyInput ? Array(0..<count) : thin(xy, to: maxSimplifyInput, checks: &checks)
        guard candidates.count > keep else { return candidates }

        /// A stretch between two kept candidates (positions in `candidates`) and its farthest point.
        struct Stretch {
            var first: Int, last: Int, farthest: Int, rank: Double
        }
        func stretch(_ first: Int, _ last: Int, cap: Double) -> Stretch? {
            guard last > first + 1 else { return nil }
            let (a, b) = (xy[candidates[first]], xy[candidates[last]])
            var farthest = first + 1, deviation = -1.0
            for position in (first + 1)..<last {
                let distance = segmentDistance(xy[candidates[position]], a, b)
                if distance > deviation { (farthest, deviation) = (position, distance) }
            }
            checks += last - first - 1
            // Every point between lies on the segment: nothing there is worth a point of the map.
            guard deviation > 0 else { return nil }
            return Stretch(first: first, last: last, farthest: farthest, rank: min(deviation, cap))
        }
        // A max-heap on rank (ties: the earlier point first, as a scan along the track would).
        var heap = Heap<Stretch> { ($0.rank, -$0.farthest) > ($1.rank, -$1.farthest) }
        var kept = [Bool](repeating: false, count: candidates.count)
        kept[0] = true
        kept[candidates.count - 1] = true
        var keptCount = 2
        if let whole = stretch(0, candidates.count - 1, cap: .infinity) { heap.push(whole) }
        while keptCount < keep, let top = heap.pop() {
            kept[top.farthest] = true
            keptCount += 1
            if let left = stretch(top.first, top.farthest, cap: top.rank) { heap.push(left) }
            if let right = stretch(top.farthest, top.last, cap: top.rank) { heap.push(right) }
        }
        return candidates.indices.filter { kept[$0] }.map { candidates[$0] }
    }

    static func simplify(_ points: [ChunkSample], keep: Int) -> [Int] {
        var checks = 0
        return simplify(points, keep: keep, checks: &checks)
    }

    /// At most `limit` indices of `xy`, ends included, in one pass: the track cut into runs of
    /// consecutive points, each giving its first point and the one farthest from the line to
    /// the next run's first (a corner or a turn-around survives; points on the line go).
    static func thin(_ xy: [(x: Double, y: Double)], to limit: Int, checks: inout Int) -> [Int] {
        let runs = max(1, (limit - 1) / 2)
        let width = (xy.count - 1 + runs - 1) / runs
        var chosen: [Int] = []
        chosen.reserveCapacity(2 * runs + 1)
        var start = 0
        while start < xy.count - 1 {
            let end = min(start + width, xy.count - 1)
            chosen.append(start)
            var farthest = -1, deviation = 0.0
            for index in (start + 1)..<end {
                let distance = segmentDistance(xy[index], xy[start], xy[end])
                if distance > deviation { (farthest, deviation) = (index, distance) }
            }
            checks += max(0, end - start - 1)
            if farthest >= 0 { chosen.append(farthest) }
            start = end
        }
        chosen.append(xy.count - 1)
        return chosen
    }

    static func segmentDistance(_ p: (x: Double, y: Double), _ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
        let (dx, dy) = (b.x - a.x, b.y - a.y)
        let length = dx * dx + dy * dy
        let t = length == 0 ? 0 : max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length))
        let (ex, ey) = (p.x - (a.x + t * dx), p.y - (a.y + t * dy))
        return (ex * ex + ey * ey).squareRoot()
    }

    /// Where each `km`-th unit (of `unitMeters`: a kilometre, or a mile) was reached.
    static func kilometreMarks(_ points: [ChunkSample], every km: Int = 1, unitMeters: Double = 1_000) -> [[Double]] {
        var marks: [[Double]] = []
        let step = Double(km) * unitMeters
        var next = step
        for (a, b) in zip(points, points.dropFirst()) where b.distanceM >= next && b.distanceM > a.distanceM {
            while b.distanceM >= next {
                let f = max(0, (next - a.distanceM) / (b.distanceM - a.distanceM))
                marks.append([rounded(a.lat + (b.lat - a.lat) * f), rounded(a.lon + (b.lon - a.lon) * f), (next / unitMeters).rounded()])
                next += step
            }
        }
        return marks
    }

    // MARK: the charts

    /// The run cut into at most `buckets` equal stretches of distance: each bucket's pace
    /// (time over distance since the previous bucket's end) and mean heart rate.
    static func series(_ points: [ChunkSample], buckets: Int) -> (km: [Double], pace: [Double?], hr: [Double?], elevation: [Double?]) {
        guard let first = points.first, let last = points.last, last.distanceM > first.distanceM else { return ([], [], [], []) }
        let width = max((last.distanceM - first.distanceM) / Double(buckets), 1)
        let bucketOf = { (sample: ChunkSample) in min(Int((sample.distanceM - first.distanceM) / width), buckets - 1) }
        var km: [Double] = [], pace: [Double?] = [], hr: [Double?] = [], elevation: [Double?] = []
        var previous = first
        var (hrSum, hrCount) = (0.0, 0)
        var (altitudeSum, altitudeCount) = (0.0, 0)
        for (index, sample) in points.enumerated() {
            if let bpm = sample.heartRate { (hrSum, hrCount) = (hrSum + Double(bpm), hrCount + 1) }
            if let metres = sample.altitudeM { (altitudeSum, altitudeCount) = (altitudeSum + metres, altitudeCount + 1) }
            // A bucket ends at its last sample.
            let end = index == points.count - 1 || bucketOf(points[index + 1]) > bucketOf(sample)
            guard end, sample.distanceM > previous.distanceM else { continue }
            let secondsPerKm = Double(sample.timeMs - previous.timeMs) / (sample.distanceM - previous.distanceM)
            km.append((sample.distanceM / 10).rounded() / 100)
            // Slower than 30 min/km is standing, not running: a gap in the chart; no time at all
            // is no pace (a run without elapsed time drew an axis of "-1:-1").
            pace.append(secondsPerKm > 0 && secondsPerKm <= 1_800 ? secondsPerKm.rounded() : nil)
            hr.append(hrCount > 0 ? (hrSum / Double(hrCount)).rounded() : nil)
            elevation.append(altitudeCount > 0 ? (altitudeSum / Double(altitudeCount) * 10).rounded() / 10 : nil)
            (hrSum, hrCount, altitudeSum, altitudeCount) = (0, 0, 0, 0)
            previous = sample
        }
        // No altitude anywhere: no elevation chart at all.
        return (km, pace, hr, elevation.contains { $0 != nil } ? elevation : [])
    }

    /// Rises smaller than this are taken for the receiver's noise (a GPS altitude wanders by a
    /// few metres while standing still): climbing counts once it is past it.
    static let climbThresholdM = 3.0

    /// Metres climbed, with hysteresis: a climb counts once it rises `climbThresholdM` above
    /// the lowest point before it, and then every metre up to its top; a descent of the
    /// threshold ends it. Nil without altitude.
    static func climb(_ points: [ChunkSample]) -> Double? {
        var low: Double?, high = 0.0, climbing = false
        var gain = 0.0
        for metres in points.lazy.compactMap(\.altitudeM) {
            guard let lowest = low else {
                low = metres
                continue
            }
            if climbing {
                if metres > high {
                    gain += metres - high
                    high = metres
                } else if high - metres >= climbThresholdM {
                    (climbing, low) = (false, metres)
                }
            } else if metres < lowest {
                low = metres
            } else if metres - lowest >= climbThresholdM {
                gain += metres - lowest
                (climbing, high) = (true, metres)
            }
        }
        return low == nil ? nil : gain.rounded()
    }

    // MARK: splits and records

    /// 1, or the first of 2, 5, 10, 20, 50, … that cuts the farthest distance of the track into
    /// at most `maxSplits` whole splits.
    static func splitKm(_ points: [ChunkSample], unitMeters: Double = 1_000) -> Int {
        let farthestKm = (points.lazy.map(\.distanceM).max() ?? 0) / unitMeters
        var (step, ladder) = (1, 0)
        while farthestKm > Double(maxSplits * step) {
            step = ladder % 3 == 1 ? step / 2 * 5 : step * 2
            ladder += 1
        }
        return step
    }

    /// One split per `km` whole kilometres (its end interpolated between samples), then the rest.
    static func splits(_ points: [ChunkSample], every km: Int = 1, unitMeters: Double = 1_000) -> [Split] {
        guard let first = points.first, let last = points.last else { return [] }
        var splits: [Split] = []
        var (startMs, startM) = (Double(first.timeMs), first.distanceM)
        var (hrSum, hrCount) = (0.0, 0)
        let step = Double(km) * unitMeters
        var next = step
        for (a, b) in zip(points, points.dropFirst()) {
            if let bpm = b.heartRate { (hrSum, hrCount) = (hrSum + Double(bpm), hrCount + 1) }
            while b.distanceM >= next && b.distanceM > a.distanceM {
                let f = (next - a.distanceM) / (b.distanceM - a.distanceM)
                let atMs = Double(a.timeMs) + Double(b.timeMs - a.timeMs) * f
                // A kilometre in no time is no split (samples without elapsed time made 0:00 ones).
                guard atMs > startMs else { return [] }
                splits.append(Split(km: (splits.count + 1) * km, meters: next - startM, seconds: ((atMs - startMs) / 100).rounded() / 10,
                                    hrAvg: hrCount > 0 ? (hrSum / Double(hrCount)).rounded() : nil))
                (startMs, startM, hrSum, hrCount) = (atMs, next, 0, 0)
                next += step
            }
        }
        // The rest, when it is more than a stride or two.
        if last.distanceM - startM >= 20, Double(last.timeMs) > startMs {
            splits.append(Split(km: (splits.count + 1) * km, meters: (last.distanceM - startM).rounded(),
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

/// A binary heap: `before(a, b)` when a comes out before b.
struct Heap<Element> {
    private var items: [Element] = []
    private let before: (Element, Element) -> Bool

    init(before: @escaping (Element, Element) -> Bool) { self.before = before }

    mutating func push(_ item: Element) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard before(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Element? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let (left, right) = (2 * parent + 1, 2 * parent + 2)
            var first = parent
            if left < items.count, before(items[left], items[first]) { first = left }
            if right < items.count, before(items[right], items[first]) { first = right }
            guard first != parent else { return top }
            items.swapAt(parent, first)
            parent = first
        }
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

/// Pairs ([lat, lon], …) kept and written as one flat JSON array [lat, lon, lat, lon, …]: a
/// stored view's 2,000 map points decoded and encoded as pairs, a container each, were most of
/// the run page's time under load (bench-web).
struct FlatPairs: Codable, Sendable, Equatable {
    var flat: [Double]

    init(_ pairs: [[Double]]) {
        flat = []
        flat.reserveCapacity(pairs.count * 2)
        for pair in pairs where pair.count == 2 { flat += pair }
    }

    var count: Int { flat.count / 2 }

    init(from decoder: any Decoder) throws {
        flat = try decoder.singleValueContainer().decode([Double].self)
        guard flat.count % 2 == 0 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "an odd number of coordinates"))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(flat)
    }
}
