#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point on the WGS84 ellipsoid, degrees.
public struct Coordinate: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Distances on the WGS84 ellipsoid. A sphere is off by up to 0.3 % depending on latitude and
/// heading, which is more than the whole distance budget, so nothing in Pacer uses one.
public enum WGS84 {
    public static let semiMajorAxis = 6_378_137.0
    public static let flattening = 1 / 298.257_223_563
    public static let semiMinorAxis = semiMajorAxis * (1 - flattening)
    static let eccentricitySquared = flattening * (2 - flattening)

    /// Radii of curvature at a latitude: meridional (north-south) and prime vertical (east-west).
    /// Exact for the ellipsoid; a local tangent plane built from them is accurate to well under a
    /// millimetre over the few tens of metres between two fixes.
    public static func radiiOfCurvature(latitude: Double) -> (meridional: Double, primeVertical: Double) {
        let s = sin(latitude * .pi / 180)
        let w = (1 - eccentricitySquared * s * s).squareRoot()
        let n = semiMajorAxis / w
        return (n * (1 - eccentricitySquared) / (w * w), n)
    }

    /// East/north offset in metres of `point` from `origin`, on the tangent plane at their mid-latitude.
    public static func localOffset(of point: Coordinate, from origin: Coordinate) -> (east: Double, north: Double) {
        let midLat = (point.latitude + origin.latitude) / 2
        let (m, n) = radiiOfCurvature(latitude: midLat)
        var dLon = point.longitude - origin.longitude
        if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
        let east = dLon * .pi / 180 * n * cos(midLat * .pi / 180)
        let north = (point.latitude - origin.latitude) * .pi / 180 * m
        return (east, north)
    }

    /// The point `east`/`north` metres from `origin` (inverse of `localOffset` for short distances).
    public static func offsetting(_ origin: Coordinate, east: Double, north: Double) -> Coordinate {
        // Two passes so the mid-latitude radii match `localOffset` exactly.
        var lat = origin.latitude
        var result = origin
        for _ in 0..<2 {
            let midLat = (origin.latitude + lat) / 2
            let (m, n) = radiiOfCurvature(latitude: midLat)
            lat = origin.latitude + north / m * 180 / .pi
            var lon = origin.longitude + east / (n * cos(midLat * .pi / 180)) * 180 / .pi
            if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
            result = Coordinate(latitude: lat, longitude: lon)
        }
        return result
    }

    /// Geodesic distance in metres (Vincenty's inverse formula, sub-millimetre on the ellipsoid).
    /// Near-antipodal points, where the iteration may not converge, fall back to the local-plane
    /// estimate; a runner's fixes are never there.
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        if a == b { return 0 }
        let f = flattening
        let l = (b.longitude - a.longitude) * .pi / 180
        let u1 = atan((1 - f) * tan(a.latitude * .pi / 180))
        let u2 = atan((1 - f) * tan(b.latitude * .pi / 180))
        let sinU1 = sin(u1), cosU1 = cos(u1), sinU2 = sin(u2), cosU2 = cos(u2)
        var lambda = l
        for _ in 0..<200 {
            let sinLambda = sin(lambda), cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            let sinSigma = (t1 * t1 + t2 * t2).squareRoot()
            if sinSigma == 0 { return 0 }
            let cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            let sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            let cos2Alpha = 1 - sinAlpha * sinAlpha
            let cos2SigmaM = cos2Alpha != 0 ? cosSigma - 2 * sinU1 * sinU2 / cos2Alpha : 0
            let c = f / 16 * cos2Alpha * (4 + f * (4 - 3 * cos2Alpha))
            let previous = lambda
            lambda = l + (1 - c) * f * sinAlpha
                * (sigma + c * sinSigma * (cos2SigmaM + c * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-12 {
                let a2 = semiMajorAxis * semiMajorAxis, b2 = semiMinorAxis * semiMinorAxis
                let uSq = cos2Alpha * (a2 - b2) / b2
                let bigA = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
                let bigB = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
                let deltaSigma = bigB * sinSigma * (cos2SigmaM + bigB / 4
                    * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
                        - bigB / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
                return semiMinorAxis * bigA * (sigma - deltaSigma)
            }
        }
        let (e, n) = localOffset(of: b, from: a)
        return (e * e + n * n).squareRoot()
    }
}
