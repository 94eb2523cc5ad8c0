import FoundationEssentials
import PacerCore

/// `PUT /v1/position`: where the runner is now. Never sent from inside a privacy zone.
public struct LivePosition: Sendable, Equatable, Encodable {
    public var time: String
    public var lat: Double
    public var lon: Double
    public var accuracy_m: Double?
    public var speed_mps: Double?
    public var heart_rate: Int?
    public var run_id: String?

    public init(time: Timestamp, latitude: Double, longitude: Double, accuracyMeters: Double?, speed: Double?, heartRate: Int?, runUUID: String?) {
        self.time = time.iso8601
        lat = latitude
        lon = longitude
        accuracy_m = accuracyMeters
        speed_mps = speed
        heart_rate = heartRate
        run_id = runUUID
    }

    public var json: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { [UInt8]($0) } ?? Array("{}".utf8)
    }
}
