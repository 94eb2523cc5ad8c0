/// The last known position, for alerts. Its time is on the same clock as the watcher's samples,
/// so an alert can say how old it is.
public struct AlertPosition: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var time: Timestamp
    /// gpsd's horizontal error estimate, metres, when it gave one.
    public var accuracyMeters: Double?
    /// The receiver's Doppler speed over ground, m/s, when it measured one (gpsd reports a course
    /// with it; without one its speed is derived from positions): the SOS rules' body motion.
    public var dopplerSpeed: Double?

    public init(latitude: Double, longitude: Double, time: Timestamp, accuracyMeters: Double? = nil, dopplerSpeed: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.time = time
        self.accuracyMeters = accuracyMeters
        self.dopplerSpeed = dopplerSpeed
    }

    /// The position of a usable fix (2D or 3D, with a time and coordinates), else nil.
    public init?(_ fix: GPSFix) {
        guard fix.mode == .twoD || fix.mode == .threeD, fix.status != .simulated,
              let time = fix.time, let latitude = fix.latitude, let longitude = fix.longitude,
              latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180
        else { return nil }
        let doppler = fix.track != nil ? fix.speed.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } : nil
        self.init(latitude: latitude, longitude: longitude, time: time, accuracyMeters: fix.eph, dopplerSpeed: doppler)
    }
}
