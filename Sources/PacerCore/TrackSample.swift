/// The pipeline's state after one accepted GPS epoch: what the runner would hear at that moment.
public struct TrackSample: Sendable, Equatable {
    public var time: Timestamp
    /// Filtered position.
    public var coordinate: Coordinate
    /// Smoothed speed, m/s; 0 while not moving.
    public var speed: Double
    /// Distance run so far, metres.
    public var distance: Double
    public var moving: Bool
    /// Moving time so far, seconds.
    public var movingTime: Double
    /// Metres above sea level, to a tenth, from the receiver's 3D fix; nil without one.
    public var altitude: Double?

    public init(time: Timestamp, coordinate: Coordinate, speed: Double, distance: Double, moving: Bool, movingTime: Double,
                altitude: Double? = nil) {
        self.time = time
        self.coordinate = coordinate
        self.speed = speed
        self.distance = distance
        self.moving = moving
        self.movingTime = movingTime
        self.altitude = altitude
    }
}
