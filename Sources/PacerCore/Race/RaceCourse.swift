/// A race's course: the path a runner follows from the start line (its first point) to the
/// arrival (its last point), with the stages (intermediate waypoints) marked on it, and the
/// distance along it at every point.
///
/// Plain values only (arrays of latitudes and longitudes, in degrees): the cloud draws or
/// calculates the course and the same arrays travel to the device through the sync channel, so
/// both ends build the same course from them. Distances are geodesic (WGS84), as everywhere in
/// Pacer. The path may pass the same place more than once (out-and-back legs, laps): progress is
/// found near the runner's previous progress (RaceProgressTracker), never by the nearest point.
public struct RaceCourse: Sendable, Equatable {
    /// The most points a course may have: a 50 km course drawn every 2.5 m; keeps a course's
    /// memory (and the sync channel's payload) bounded on the device.
    public static let maxPoints = 20_000
    /// R-CLOUD-6: at most 10 stages between the start and the arrival...
    public static let maxStages = 10
    /// ...and at most 50 km.
    public static let maxLength = 50_000.0

    public let latitudes: [Double]
    public let longitudes: [Double]
    /// The stages as indices into the path, in order, strictly between the start (0) and the
    /// arrival (last index): an index rather than a coordinate, since an out-and-back course
    /// passes a stage's place twice.
    public let stages: [Int]
    /// Metres along the course at each point; the first is 0, the last is `length`.
    public let cumulativeDistance: [Double]

    public var length: Double { cumulativeDistance[cumulativeDistance.count - 1] }
    public var pointCount: Int { latitudes.count }
    public func point(_ index: Int) -> Coordinate { Coordinate(latitude: latitudes[index], longitude: longitudes[index]) }
    /// Metres along the course at each stage.
    public var stageDistances: [Double] { stages.map { cumulativeDistance[$0] } }

    public init(latitudes: [Double], longitudes: [Double], stages: [Int] = []) throws(RaceCourseError) {
        guard latitudes.count == longitudes.count else {
            throw .mismatchedArrays(latitudes: latitudes.count, longitudes: longitudes.count)
        }
        guard latitudes.count >= 2 else { throw .tooFewPoints(latitudes.count) }
        guard latitudes.count <= Self.maxPoints else { throw .tooManyPoints(latitudes.count, limit: Self.maxPoints) }
        for i in latitudes.indices {
            let lat = latitudes[i], lon = longitudes[i]
            guard lat.isFinite, lon.isFinite, abs(lat) <= 90, abs(lon) <= 180 else { throw .invalidPoint(index: i) }
        }
        guard stages.count <= Self.maxStages else { throw .tooManyStages(stages.count, limit: Self.maxStages) }
        var previous = 0
        for stage in stages {
            guard stage > previous, stage < latitudes.count - 1 else { throw .invalidStage(index: stage) }
            previous = stage
        }
        var cumulative = [0.0]
        cumulative.reserveCapacity(latitudes.count)
        for i in 1..<latitudes.count {
            let a = Coordinate(latitude: latitudes[i - 1], longitude: longitudes[i - 1])
            let b = Coordinate(latitude: latitudes[i], longitude: longitudes[i])
            cumulative.append(cumulative[i - 1] + WGS84.distance(a, b))
        }
        let length = cumulative[cumulative.count - 1]
        guard length > 0 else { throw .zeroLength }
        guard length <= Self.maxLength else { throw .tooLong(length, limit: Self.maxLength) }
        self.latitudes = latitudes
        self.longitudes = longitudes
        self.stages = stages
        cumulativeDistance = cumulative
    }

    public init(points: [Coordinate], stages: [Int] = []) throws(RaceCourseError) {
        try self.init(latitudes: points.map(\.latitude), longitudes: points.map(\.longitude), stages: stages)
    }
}

/// Why a course was refused; each message names the limit, as the organiser must fix the course.
public enum RaceCourseError: Error, Sendable, Equatable, CustomStringConvertible {
    case mismatchedArrays(latitudes: Int, longitudes: Int)
    case tooFewPoints(Int)
    case tooManyPoints(Int, limit: Int)
    case invalidPoint(index: Int)
    case tooManyStages(Int, limit: Int)
    case invalidStage(index: Int)
    case zeroLength
    case tooLong(Double, limit: Double)

    public var description: String {
        switch self {
        case .mismatchedArrays(let lat, let lon):
            "the course has \(lat) latitudes but \(lon) longitudes"
        case .tooFewPoints(let n):
            "a course needs at least 2 points (a start and an arrival), this one has \(n)"
        case .tooManyPoints(let n, let limit):
            "a course has at most \(limit) points, this one has \(n)"
        case .invalidPoint(let i):
            "point \(i) of the course is not a latitude/longitude in degrees"
        case .tooManyStages(let n, let limit):
            "a course has at most \(limit) stages between the start and the arrival, this one has \(n)"
        case .invalidStage(let i):
            "stage at point \(i) is not strictly between the start, the previous stage and the arrival"
        case .zeroLength:
            "the course has no length: all its points are the same place"
        case .tooLong(let length, let limit):
            "a course is at most \(Int(limit / 1000)) km long, this one is \(FixedDecimal.format(length / 1000, decimals: 2) ?? "?") km"
        }
    }
}
