/// Whether a run can be right, decided in this one place for a device's uploads and imported
/// files alike: a run that cannot be is kept and shown, marked with the reason (`run.doubt`),
/// and never makes a record, a split or a pace.
public enum RunDoubt {
    /// One point of the track as the check needs it.
    public struct Point: Sendable, Equatable {
        public var timeMs: Int64
        public var distanceM: Double

        public init(timeMs: Int64, distanceM: Double) {
            self.timeMs = timeMs
            self.distanceM = distanceM
        }
    }

    /// The shortest stretch of track the speed check looks at: shorter ones are a receiver's
    /// jitter, not an effort.
    public static let checkedStretchM = 1_000.0

    /// The fastest `checkedStretchM` each sport can cover, in seconds. Running: 2:00 for 1 km,
    /// well under the world record (2:11.96); walking and hiking are held to running's (a mislabelled
    /// run is still a run on foot). Riding: 30 s (120 km/h, past any descent on a bike). Swimming:
    /// 8:00 (the 1,500 m record is 14:30, 16:40 per km). Other: 10 s (360 km/h).
    public static func fastestStretchS(_ sport: Sport) -> Double {
        switch sport {
        case .run, .walk, .hike: 120
        case .ride: 30
        case .swim: 480
        case .other: 10
        }
    }

    /// Why the run cannot be right, or nil when it can. `points`: its track in the stored order
    /// (may be empty: a run without GPS is judged by its totals alone).
    public static func reason(distanceM: Double, movingS: Double, elapsedS: Double, sport: Sport, points: [Point]) -> String? {
        let fastest = fastestStretchS(sport)
        if distanceM > 0, elapsedS <= 0 {
            return "\(Self.metres(distanceM)) in \(Self.seconds(elapsedS)) of elapsed time: its samples carry no elapsed time"
        }
        if let first = points.first, let last = points.last, points.count >= 2, last.distanceM > first.distanceM, last.timeMs <= first.timeMs {
            return "its \(points.count) samples all carry one time: \(Self.metres(last.distanceM - first.distanceM)) in no time"
        }
        if let back = zip(points, points.dropFirst()).first(where: { $1.timeMs < $0.timeMs }) {
            return "its samples go back in time (from \(back.0.timeMs) to \(back.1.timeMs) ms)"
        }
        // The whole run's average: a summary without a track is judged by it.
        let time = movingS > 0 ? movingS : elapsedS
        if distanceM >= checkedStretchM, time > 0, time * checkedStretchM / distanceM < fastest {
            return "\(Self.metres(distanceM)) in \(Self.seconds(time)): faster than a \(sport.rawValue) can go (1 km in under \(Self.seconds(fastest)))"
        }
        if let (startM, seconds) = fastestStretch(points, meters: checkedStretchM), seconds < fastest {
            return "1 km from \(Self.metres(startM)) in \(Self.seconds(seconds)): faster than a \(sport.rawValue) can go (under \(Self.seconds(fastest)))"
        }
        return nil
    }

    /// Where the fastest stretch of `meters` starts and its seconds (its end interpolated
    /// between points); nil when the track is shorter. Points in time order.
    public static func fastestStretch(_ points: [Point], meters: Double) -> (startM: Double, seconds: Double)? {
        guard let first = points.first, let last = points.last, last.distanceM - first.distanceM >= meters else { return nil }
        var best: (startM: Double, seconds: Double)?
        var end = 0
        for start in points.indices {
            let target = points[start].distanceM + meters
            while end < points.count && points[end].distanceM < target { end += 1 }
            guard end < points.count else { break }
            guard end > 0 else { continue }
            let (a, b) = (points[end - 1], points[end])
            let f = b.distanceM > a.distanceM ? (target - a.distanceM) / (b.distanceM - a.distanceM) : 1
            let seconds = (Double(a.timeMs) + Double(b.timeMs - a.timeMs) * f - Double(points[start].timeMs)) / 1_000
            if best.map({ seconds < $0.seconds }) ?? true { best = (points[start].distanceM, seconds) }
        }
        return best
    }

    private static func metres(_ value: Double) -> String {
        value >= 1_000 ? "\((value / 10).rounded() / 100) km" : "\(Int(value.rounded())) m"
    }

    private static func seconds(_ value: Double) -> String {
        let whole = Int(value.rounded(.down))
        return whole >= 60 ? "\(whole / 60) min \(whole % 60) s" : "\((value * 10).rounded() / 10) s"
    }
}
