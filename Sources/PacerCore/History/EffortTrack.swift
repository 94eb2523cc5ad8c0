/// One run's samples flattened for the personal-record sweep (`PersonalRecords.bestEfforts`):
/// seconds since the first sample (Double, so the sweep does no integer conversions), distance as a
/// running maximum, moving time. Built once per run and shared by all target distances.
struct EffortTrack {
    let origin: Int64
    let t: [Double]
    let d: [Double]
    let m: [Double]

    init?(_ samples: [EffortSample]) {
        guard let first = samples.first(where: { $0.distance.isFinite }) else { return nil }
        origin = first.time.milliseconds
        var t: [Double] = [], d: [Double] = [], m: [Double] = []
        t.reserveCapacity(samples.count)
        d.reserveCapacity(samples.count)
        m.reserveCapacity(samples.count)
        var maxDistance = -Double.infinity
        var moving = 0.0
        for s in samples where s.distance.isFinite {
            maxDistance = max(maxDistance, s.distance)
            if s.movingTime.isFinite { moving = s.movingTime }
            t.append(Double(s.time.milliseconds - first.time.milliseconds) / 1000)
            d.append(maxDistance)
            m.append(moving)
        }
        (self.t, self.d, self.m) = (t, d, m)
    }

    /// A point on the track: `fraction` of the way from sample `index` to sample `index + 1`.
    private struct Point {
        var index: Int
        var fraction: Double
    }

    private func value(_ a: [Double], at p: Point) -> Double {
        p.fraction == 0 ? a[p.index] : a[p.index] + p.fraction * (a[p.index + 1] - a[p.index])
    }

    /// Where the linear segment from `lower` to `lower + 1` reaches distance `x`, clamped into it.
    private func point(reaching x: Double, from lower: Int) -> Point {
        let span = d[lower + 1] - d[lower]
        guard span > 0 else { return Point(index: lower + 1, fraction: 0) }
        let f = min(max((x - d[lower]) / span, 0), 1)
        return f == 1 ? Point(index: lower + 1, fraction: 0) : Point(index: lower, fraction: f)
    }

    func bestEffort(for target: RecordDistance) -> BestEffort? {
        let length = target.meters
        let n = d.count
        guard length.isFinite, length > 0, n >= 2, d[n - 1] - d[0] >= length else { return nil }

        var best = Double.infinity
        var bestStart = Point(index: 0, fraction: 0)
        var bestEnd = Point(index: 0, fraction: 0)

        // elapsed(x) = t(x + length) − t(x) is piecewise linear in the start distance x, with breaks
        // only where the start or the end crosses a sample. Its minimum is therefore at a stretch
        // that starts exactly on a sample or ends exactly on one: pass 1 tries the first kind, pass 2
        // the second. Both pointers only move forward, so each pass is O(n).
        //
        // At a stop (several samples at one distance) pass 1 starts from each of them and pass 2
        // ends at each of them, so the best stretch starts when the runner left and ends when they
        // arrived: a stop before or after the stretch is never charged to it.

        // Pass 1: start on sample i, end interpolated in (j − 1, j], where j is the first sample at
        // least `length` further on.
        var j = 1
        for i in 0..<(n - 1) {
            let goal = d[i] + length
            j = max(j, i + 1)
            while j < n && d[j] < goal { j += 1 }
            if j == n { break }
            let end = point(reaching: goal, from: j - 1)
            let elapsed = value(t, at: end) - t[i]
            if elapsed > 0 && elapsed < best {
                (best, bestStart, bestEnd) = (elapsed, Point(index: i, fraction: 0), end)
            }
        }

        // Pass 2: end on sample k, start interpolated in [i, i + 1), where i is the last sample at
        // most `length` before it.
        var i = 0
        for k in 1..<n {
            let from = d[k] - length
            if from < d[0] { continue }
            while i + 1 < k && d[i + 1] <= from { i += 1 }
            let start = point(reaching: from, from: i)
            let elapsed = t[k] - value(t, at: start)
            if elapsed > 0 && elapsed < best {
                (best, bestStart, bestEnd) = (elapsed, start, Point(index: k, fraction: 0))
            }
        }

        guard best.isFinite else { return nil }
        let startSeconds = value(t, at: bestStart)
        let endSeconds = value(t, at: bestEnd)
        return BestEffort(
            distance: target,
            duration: best,
            start: Timestamp(milliseconds: origin + Int64((startSeconds * 1000).rounded())),
            end: Timestamp(milliseconds: origin + Int64((endSeconds * 1000).rounded())),
            movingTime: max(0, value(m, at: bestEnd) - value(m, at: bestStart))
        )
    }
}
