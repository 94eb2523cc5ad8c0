/// What the heart-rate strap gives the pipeline right now. Only `.live` is a vital sign; every
/// other case describes the sensor, and must never be read as a heart rate.
public enum HeartRateReading: Sendable, Equatable {
    /// No strap connected.
    case disconnected
    /// Connected, but nothing to show: no notification since connecting, a fresh one without a
    /// heart rate (bpm 0 while contact is not denied), or one of those or a no-contact report
    /// that is older than the stale limit.
    case noData
    /// The latest notification, no older than the stale limit, says the strap is not on skin.
    case noContact(age: Double)
    /// The latest notification held a heart rate but is older than the stale limit (seconds).
    case stale(lastBpm: Int, age: Double)
    /// A fresh heart rate: the latest notification, `age` seconds old (≤ the stale limit).
    case live(bpm: Int, rrIntervalsMs: [Double], age: Double)
}
