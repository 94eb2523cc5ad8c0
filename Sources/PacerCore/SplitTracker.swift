/// Cuts the distance/moving-time stream into fixed-length splits, interpolating the moment each
/// boundary was crossed between the two fixes around it.
struct SplitTracker: Sendable {
    let length: Double
    private var completed = 0
    private var boundaryMovingTime = 0.0
    private var boundaryDistance = 0.0

    init(length: Double) {
        self.length = max(1, length)
    }

    mutating func advance(
        from start: (distance: Double, movingTime: Double, time: Timestamp),
        to end: (distance: Double, movingTime: Double, time: Timestamp)
    ) -> [Split] {
        var splits: [Split] = []
        while end.distance >= Double(completed + 1) * length {
            let boundary = Double(completed + 1) * length
            let span = end.distance - start.distance
            let fraction = span > 0 ? min(1, max(0, (boundary - start.distance) / span)) : 1
            let movingAt = start.movingTime + fraction * (end.movingTime - start.movingTime)
            let timeAt = start.time.adding(seconds: fraction * end.time.seconds(since: start.time))
            completed += 1
            splits.append(Split(index: completed, distance: length, time: movingAt - boundaryMovingTime, endTime: timeAt))
            boundaryMovingTime = movingAt
            boundaryDistance = boundary
        }
        return splits
    }

    /// The final partial split, when at least 5 % of a split was run since the last boundary:
    /// the few metres after the last full split carry no pace worth reading.
    func finish(distance: Double, movingTime: Double, time: Timestamp) -> Split? {
        let remaining = distance - boundaryDistance
        guard remaining >= length * 0.05 else { return nil }
        return Split(index: completed + 1, distance: remaining, time: movingTime - boundaryMovingTime, endTime: time)
    }
}
