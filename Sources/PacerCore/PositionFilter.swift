#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fuses GPS positions with the receiver's Doppler velocity (when it has one) in a local tangent
/// plane that is re-centred on the estimate every epoch, so no projection error builds up over a
/// marathon. Positions whose innovation is far outside what the filter expects (multipath
/// excursions, jumps) are gated out; a run of them means the filter, not the fixes, is wrong, and
/// it restarts on the fixes.
struct PositionFilter: Sendable {
    struct Configuration: Sendable {
        /// Acceleration noise density, (m/s²)²·s: a runner changes speed by ~1 m/s within a second or two.
        var accelerationDensity = 0.6
        var minimumPositionSigma = 3.0
        /// Chi-square gate on the 2-D position innovation (2 degrees of freedom).
        var gate = 16.0
        /// Innovations beyond this (chi-square, 2 dof) get a proportionally smaller weight.
        var softGate = 4.0
        var restartAfterGatedFixes = 5
    }

    let configuration: Configuration
    private(set) var origin = Coordinate(latitude: 0, longitude: 0)
    private var east = AxisKalman(position: 0, velocity: 0, positionVariance: 0, velocityVariance: 0)
    private var north = AxisKalman(position: 0, velocity: 0, positionVariance: 0, velocityVariance: 0)
    private(set) var isInitialized = false
    private var gatedInARow = 0

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    var coordinate: Coordinate {
        WGS84.offsetting(origin, east: east.position, north: north.position)
    }

    var speed: Double { (east.velocity * east.velocity + north.velocity * north.velocity).squareRoot() }

    var velocity: (east: Double, north: Double) { (east.velocity, north.velocity) }

    mutating func restart(at position: Coordinate, positionSigma: Double) {
        origin = position
        let variance = max(positionSigma, configuration.minimumPositionSigma)
        east = AxisKalman(position: 0, velocity: 0, positionVariance: variance * variance, velocityVariance: 25)
        north = east
        isInitialized = true
        gatedInARow = 0
    }

    mutating func predict(dt: Double) {
        east.predict(dt: dt, accelerationDensity: configuration.accelerationDensity)
        north.predict(dt: dt, accelerationDensity: configuration.accelerationDensity)
    }

    /// Returns false when the fix was gated out as an outlier.
    mutating func update(position: Coordinate, sigma: Double) -> Bool {
        let (e, n) = WGS84.localOffset(of: position, from: origin)
        let r = max(sigma, configuration.minimumPositionSigma)
        let variance = r * r
        let ie = east.positionInnovation(e, variance: variance)
        let inn = north.positionInnovation(n, variance: variance)
        let distance2 = ie.innovation * ie.innovation / ie.variance + inn.innovation * inn.innovation / inn.variance
        if distance2 > configuration.gate {
            gatedInARow += 1
            if gatedInARow >= configuration.restartAfterGatedFixes {
                let velocity = (east.velocity, north.velocity)
                restart(at: position, positionSigma: r)
                east.velocity = velocity.0
                north.velocity = velocity.1
            }
            return false
        }
        gatedInARow = 0
        // Huber-style down-weighting: a fix well outside the expected spread (the rising edge of
        // a multipath excursion) still counts, but with the weight its surprise deserves, so it
        // pulls the track by metres instead of dragging the velocity along.
        let inflation = distance2 > configuration.softGate ? distance2 / configuration.softGate : 1
        east.updatePosition(e, variance: variance * inflation)
        north.updatePosition(n, variance: variance * inflation)
        return true
    }

    /// A Doppler velocity: speed over ground along the course (degrees true).
    mutating func update(speed: Double, course: Double, sigma: Double) {
        let radians = course * .pi / 180
        let variance = sigma * sigma
        east.updateVelocity(speed * sin(radians), variance: variance)
        north.updateVelocity(speed * cos(radians), variance: variance)
    }

    /// Moves the local origin onto the current estimate.
    mutating func recenter() {
        let here = coordinate
        let (de, dn) = WGS84.localOffset(of: here, from: origin)
        east.shiftOrigin(by: de)
        north.shiftOrigin(by: dn)
        origin = here
    }
}
