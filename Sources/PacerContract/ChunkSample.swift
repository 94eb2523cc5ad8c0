/// One line of a track chunk: one sample of a run as uploaded and served back, in the units of
/// the wire (`time_ms,lat,lon,speed_mps,distance_m,moving,hr`).
public struct ChunkSample: Sendable, Equatable {
    /// Milliseconds since the epoch (UTC).
    public var timeMs: Int64
    public var lat: Double
    public var lon: Double
    public var speedMps: Double
    /// The run's distance so far.
    public var distanceM: Double
    public var moving: Bool
    /// Beats per minute; nil (an empty field) when there is no reading for this sample.
    public var heartRate: Int?
    /// Metres above sea level; nil (no eighth field, or an empty one) when not known.
    public var altitudeM: Double?

    public init(timeMs: Int64, lat: Double, lon: Double, speedMps: Double, distanceM: Double, moving: Bool, heartRate: Int?,
                altitudeM: Double? = nil) {
        self.timeMs = timeMs
        self.lat = lat
        self.lon = lon
        self.speedMps = speedMps
        self.distanceM = distanceM
        self.moving = moving
        self.heartRate = heartRate
        self.altitudeM = altitudeM
    }
}
