import PacerCore

/// `PUT /v1/position` (openapi.yaml `Position`): where the runner is now. The device never
/// sends one from inside a privacy zone; the cloud keeps the newest per device.
public struct LivePosition: Codable, Equatable, Sendable {
    public var time: String
    public var lat: Double
    public var lon: Double
    public var accuracy_m: Double?
    public var speed_mps: Double?
    public var heart_rate: Int?
    public var run_id: String?

    public init(time: String, lat: Double, lon: Double, accuracy_m: Double?, speed_mps: Double?, heart_rate: Int?, run_id: String?) {
        self.time = time
        self.lat = lat
        self.lon = lon
        self.accuracy_m = accuracy_m
        self.speed_mps = speed_mps
        self.heart_rate = heart_rate
        self.run_id = run_id
    }

    /// The device's: a fix's time and place, the run's UUID when one is recording.
    public init(time: Timestamp, latitude: Double, longitude: Double, accuracyMeters: Double?, speed: Double?, heartRate: Int?, runUUID: String?) {
        self.init(time: time.iso8601, lat: latitude, lon: longitude, accuracy_m: accuracyMeters, speed_mps: speed, heart_rate: heartRate,
                  run_id: runUUID)
    }
}
