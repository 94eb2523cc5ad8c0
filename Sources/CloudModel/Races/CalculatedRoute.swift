import PacerCore

/// A point of a race's path, degrees on WGS84.
public struct LatLon: Sendable, Hashable, Codable {
    public var lat: Double
    public var lon: Double

    public init(lat: Double, lon: Double) {
        self.lat = lat
        self.lon = lon
    }

    public init(_ coordinate: Coordinate) {
        self.init(lat: coordinate.latitude, lon: coordinate.longitude)
    }

    public var coordinate: Coordinate { Coordinate(latitude: lat, longitude: lon) }

    /// Within ±90° and ±180°, and finite.
    public var isValid: Bool { lat.isFinite && lon.isFinite && abs(lat) <= 90 && abs(lon) <= 180 }

    /// The geodesic distance to `other`, metres (WGS84).
    public func distanceM(to other: LatLon) -> Double { WGS84.distance(coordinate, other.coordinate) }
}

/// A path the system calculated over streets (`StreetRouter`): from the start through each stage
/// to the arrival, on the streets a runner may use.
public struct CalculatedRoute: Sendable, Equatable {
    /// The path, in order; consecutive points are distinct.
    public var points: [LatLon]
    /// Its length along the streets, metres (the sum of `legLengthsM`).
    public var lengthM: Double
    /// Each leg's length: from waypoint i to waypoint i+1.
    public var legLengthsM: [Double]
    /// Where each waypoint joined the streets: the end of the street nearest to it (a crossing or
    /// a street's end), which the path passes through.
    public var snapped: [LatLon]

    public init(points: [LatLon], lengthM: Double, legLengthsM: [Double], snapped: [LatLon]) {
        self.points = points
        self.lengthM = lengthM
        self.legLengthsM = legLengthsM
        self.snapped = snapped
    }

    /// A race's path: the start, up to 10 stages, the arrival.
    public static let maxWaypoints = 12
    /// A race's path is at most 50 km long.
    public static let maxLengthM = 50_000.0
    /// A waypoint further than this from every street cannot be routed from.
    public static let maxSnapDistanceM = 200.0

    /// How messages name waypoint `index` of `count`: "the start", "stage N", "the arrival".
    public static func waypointName(_ index: Int, of count: Int) -> String {
        index == 0 ? "the start" : index == count - 1 ? "the arrival" : "stage \(index)"
    }
}

/// Why a route could not be calculated. Every kind is the request's to change (a 4xx): `code`
/// for the API, `waypoint` the index (in the waypoints given) of the one at fault, if one is,
/// and `message` saying what is wrong and naming the waypoint or the limit.
/// `unavailable` and `noStreetData` say this server calculates no routes: draw the path or
/// upload a GPX.
public struct CalculatedRouteError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The store is SQLite: calculated routes need PostgreSQL with pgRouting.
        case unavailable = "calculated_route_unavailable"
        /// PostgreSQL, but no streets loaded (`pacer-cloud streets load`).
        case noStreetData = "no_street_data"
        /// Fewer than two waypoints, or more than `CalculatedRoute.maxWaypoints`.
        case waypointCount = "route_waypoint_count"
        /// A waypoint's latitude or longitude is out of range.
        case invalidWaypoint = "route_waypoint_invalid"
        /// A waypoint is more than `CalculatedRoute.maxSnapDistanceM` from every street.
        case farFromStreets = "route_waypoint_far_from_streets"
        /// No street path joins waypoint `waypoint - 1` to `waypoint`.
        case unconnected = "route_unconnected"
        /// The path (or even the straight line through the waypoints) is over the limit.
        case tooLong = "route_too_long"
    }

    public var kind: Kind
    public var waypoint: Int?
    public var message: String

    public init(_ kind: Kind, waypoint: Int? = nil, _ message: String) {
        self.kind = kind
        self.waypoint = waypoint
        self.message = message
    }

    public var code: String { kind.rawValue }
    public var description: String { message }
}
