/// An alert the watcher raised: what, since when, and what was known at that moment.
public struct VitalsAlert: Sendable, Equatable {
    /// 1, 2, … in the order this watcher raised them; the shell gives each a UUID.
    public var number: Int
    public var kind: AlertKind
    /// The first out-of-range sample of the breach (for a manual alert: the request).
    public var firstOutOfRange: Timestamp
    /// The sample (or tick, or request) that confirmed it: the alert's time.
    public var raisedAt: Timestamp
    /// The last valid heart rate, and how it has been going.
    public var heartRate: Int?
    public var heartRateTime: Timestamp?
    public var trend: HeartRateTrend?
    public var position: AlertPosition?

    public init(number: Int, kind: AlertKind, firstOutOfRange: Timestamp, raisedAt: Timestamp, heartRate: Int? = nil,
                heartRateTime: Timestamp? = nil, trend: HeartRateTrend? = nil, position: AlertPosition? = nil) {
        self.number = number
        self.kind = kind
        self.firstOutOfRange = firstOutOfRange
        self.raisedAt = raisedAt
        self.heartRate = heartRate
        self.heartRateTime = heartRateTime
        self.trend = trend
        self.position = position
    }

    /// Seconds from the first out-of-range sample to the alert (≤ 5 is the promise).
    public var confirmationSeconds: Double { raisedAt.seconds(since: firstOutOfRange) }
}
