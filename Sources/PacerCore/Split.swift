/// A completed split (every `splitDistanceMeters`) or the final partial one.
public struct Split: Sendable, Equatable {
    /// 1-based.
    public var index: Int
    public var distance: Double
    /// Moving time spent in this split, seconds.
    public var time: Double
    /// When the split ended (interpolated between fixes).
    public var endTime: Timestamp

    public init(index: Int, distance: Double, time: Double, endTime: Timestamp) {
        self.index = index
        self.distance = distance
        self.time = time
        self.endTime = endTime
    }

    /// Seconds per kilometre, nil for a zero-length split.
    public var pacePerKm: Double? { distance > 0 ? time / distance * 1000 : nil }
}

/// A lap, closed by the lap button (or at the end of the run once any lap was marked).
public struct Lap: Sendable, Equatable {
    public var index: Int
    public var distance: Double
    public var time: Double
    public var startTime: Timestamp
    public var endTime: Timestamp

    public init(index: Int, distance: Double, time: Double, startTime: Timestamp, endTime: Timestamp) {
        self.index = index
        self.distance = distance
        self.time = time
        self.startTime = startTime
        self.endTime = endTime
    }

    public var pacePerKm: Double? { distance > 0 ? time / distance * 1000 : nil }
}
