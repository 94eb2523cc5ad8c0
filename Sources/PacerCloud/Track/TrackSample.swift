/// One sample of a run's track as uploaded and served back.
public struct TrackSample: Sendable, Equatable, Codable {
    /// Milliseconds since the epoch (UTC).
    public var timeMs: Int64
    public var lat: Double
    public var lon: Double
    public var speedMps: Double
    public var distanceM: Double
    public var moving: Bool
    public var heartRate: Int?

    public init(timeMs: Int64, lat: Double, lon: Double, speedMps: Double, distanceM: Double, moving: Bool, heartRate: Int?) {
        self.timeMs = timeMs
        self.lat = lat
        self.lon = lon
        self.speedMps = speedMps
        self.distanceM = distanceM
        self.moving = moving
        self.heartRate = heartRate
    }
}
