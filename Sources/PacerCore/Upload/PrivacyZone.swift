/// A circle the runner keeps private (home, work): no run point or live position inside it
/// leaves the device. Never applied to SOS alerts, which must say where the person is.
public struct PrivacyZone: Sendable, Equatable {
    public var center: Coordinate
    public var radiusMeters: Double

    public init(center: Coordinate, radiusMeters: Double) {
        self.center = center
        self.radiusMeters = radiusMeters
    }

    public func contains(_ point: Coordinate) -> Bool {
        WGS84.distance(center, point) <= radiusMeters
    }
}

extension Array where Element == PrivacyZone {
    public func hides(_ point: Coordinate) -> Bool {
        contains { $0.contains(point) }
    }
}
