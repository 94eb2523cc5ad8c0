/// One point of a run as the personal-record sweep needs it: when, how far so far, how long moving so far.
///
/// Deliberately smaller than `TrackSample`: the Store can rebuild these from its sample rows without
/// positions or speeds, and the sweep touches nothing else.
public struct EffortSample: Sendable, Equatable {
    public var time: Timestamp
    /// Cumulative distance from the start of the run, metres.
    public var distance: Double
    /// Cumulative moving time from the start of the run, seconds.
    public var movingTime: Double

    public init(time: Timestamp, distance: Double, movingTime: Double) {
        self.time = time
        self.distance = distance
        self.movingTime = movingTime
    }

    public init(_ sample: TrackSample) {
        self.init(time: sample.time, distance: sample.distance, movingTime: sample.movingTime)
    }
}
