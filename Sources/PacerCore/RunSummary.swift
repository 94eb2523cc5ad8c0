public struct RunSummary: Sendable, Equatable {
    /// The live distance, the one the runner heard, also what a finished run stores. Without
    /// Doppler a Rauch-Tung-Striebel smoother over the whole track was measured for recomputing it
    /// and was further from the truth on the tuning routes (README, "Receivers without Doppler
    /// speed"; tools/bench-accuracy's RTS columns), so it is not recomputed.
    public var distance: Double
    public var movingTime: Double
    public var elapsedTime: Double
    /// Over moving time; nil until some distance was run.
    public var averagePacePerKm: Double?
    public var maxSpeed: Double
    public var heartRateAverage: Double?
    public var heartRateMax: Int?
    public var startTime: Timestamp?
    public var endTime: Timestamp?

    public init(
        distance: Double, movingTime: Double, elapsedTime: Double, averagePacePerKm: Double?, maxSpeed: Double,
        heartRateAverage: Double? = nil, heartRateMax: Int? = nil, startTime: Timestamp? = nil, endTime: Timestamp? = nil
    ) {
        self.distance = distance
        self.movingTime = movingTime
        self.elapsedTime = elapsedTime
        self.averagePacePerKm = averagePacePerKm
        self.maxSpeed = maxSpeed
        self.heartRateAverage = heartRateAverage
        self.heartRateMax = heartRateMax
        self.startTime = startTime
        self.endTime = endTime
    }
}

/// How the tracker treated its GPS input.
public struct FixCounts: Sendable, Equatable {
    public var accepted = 0
    public var skipped: [FixSkipReason: Int] = [:]
    public var gatedPositions = 0
    public var timeJumps = 0
    public var bridgedGaps = 0

    public init() {}

    public func count(_ reason: FixSkipReason) -> Int { skipped[reason, default: 0] }
}
