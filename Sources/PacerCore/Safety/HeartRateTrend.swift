/// Where the heart rate has been going over the last half minute, for the alert's content.
public struct HeartRateTrend: Sendable, Equatable {
    public enum Direction: String, Sendable, Equatable {
        case rising, falling, steady
    }

    /// Beats per minute per minute, from the mean of the window's first few seconds to that of
    /// its last few.
    public var bpmPerMinute: Double
    public var minimum: Int
    public var maximum: Int
    /// Seconds the samples span.
    public var seconds: Double

    public init(bpmPerMinute: Double, minimum: Int, maximum: Int, seconds: Double) {
        self.bpmPerMinute = bpmPerMinute
        self.minimum = minimum
        self.maximum = maximum
        self.seconds = seconds
    }

    public var direction: Direction {
        bpmPerMinute >= 5 ? .rising : bpmPerMinute <= -5 ? .falling : .steady
    }

    /// From valid samples, oldest first; nil with fewer than two spanning a second or more.
    public init?(_ samples: some Collection<HeartRateSample>) {
        guard let first = samples.first, let last = samples.max(by: { $0.time < $1.time }) else { return nil }
        let span = last.time.seconds(since: first.time)
        guard span >= 1 else { return nil }
        let edge = min(5, span / 3)
        let head = samples.filter { $0.time.seconds(since: first.time) <= edge }
        let tail = samples.filter { last.time.seconds(since: $0.time) <= edge }
        let mean = { (s: [HeartRateSample]) in Double(s.reduce(0) { $0 + $1.bpm }) / Double(s.count) }
        let headTime = head.reduce(0.0) { $0 + $1.time.seconds(since: first.time) } / Double(head.count)
        let tailTime = tail.reduce(0.0) { $0 + $1.time.seconds(since: first.time) } / Double(tail.count)
        let dt = tailTime - headTime
        self.init(bpmPerMinute: dt > 0 ? (mean(tail) - mean(head)) / dt * 60 : 0,
                  minimum: samples.map(\.bpm).min() ?? 0, maximum: samples.map(\.bpm).max() ?? 0, seconds: span)
    }
}
