/// Speed from positions alone, for receivers that report no Doppler speed (issue #24).
///
/// A Kalman filter's speed |v| cuts tight corners (its velocity lags the turn, so the vector
/// shortens) and is biased upwards by noise. Instead, each fix-to-fix step is projected on the
/// direction of travel, and the projections are summed into a cumulative along-track distance
/// c(t). Position noise then telescopes out of c instead of adding up, and a bend costs nothing
/// as long as the direction is right. The speed is the least-squares slope of c over the fixes
/// since the last change of pace (at most `window` seconds); a change shows as the newest fixes
/// running off the line fitted to the older ones, which restarts the window there.
///
/// The direction comes from a constant-velocity filter whose position sigma follows the jitter
/// measured on c (twice it): responsive enough for hairpins, and its gate keeps outliers out of
/// both the direction and the sum. The direction of a step is the mean of the filter's direction
/// before and after that fix.
///
/// With `lag` > 0 each step waits for that many later accepted fixes, and its direction also
/// averages the filter's direction after each of them: a fixed-lag estimate that sees where a
/// bend goes instead of lagging it. The speed is then that many fixes late, so the tracker uses
/// it only for the speed it reports, never for motion or distance (see RunTracker).
///
/// Why this and not a coordinated-turn or plain constant-velocity filter: on simulated no-Doppler
/// routes (tools/bench-accuracy; README, "Receivers without Doppler speed") it kept the hairpin
/// course within 0.1 % where the plain filter loses 3.3 %, and had the larger share of steady
/// samples within ±5 % on every turning route. Causal: each output uses that fix and earlier ones.
struct AlongTrackSpeed: Sendable {
    struct Configuration: Sendable {
        /// Longest fit, seconds.
        var window = 30.0
        /// A change of pace restarts the fit when the newest fixes sit this many standard errors
        /// off the line through the older ones.
        var changeSigmas = 5.0
        /// How many of the newest fixes the change test looks at, at most.
        var changeSegmentMax = 10
        /// After a restart the speed is held until the fit has this many fixes: a slope through
        /// two or three is mostly noise (standing still, it flickers above a walking pace) or the
        /// edge of a multipath excursion.
        var minimumFitFixes = 4
        /// Position jitter along the track (m): first guess and floor of the running estimate.
        var initialJitter = 0.6
        var minimumJitter = 0.15
        /// The direction filter's position sigma is this many times the measured jitter...
        var directionSigmaPerJitter = 2.0
        /// ...but not below this (m).
        var minimumDirectionSigma = 0.5
        var directionAccelerationDensity = 1.0
        /// Accepted fixes a step waits for before it is projected (0: projected at once).
        var lag = 0
    }

    /// An accepted fix whose step is not projected yet, with the filter's direction (unit
    /// vectors) before and after it.
    private struct PendingStep: Sendable {
        var position: Coordinate
        var time: Double
        var isGap: Bool
        var before: (east: Double, north: Double)
        var after: (east: Double, north: Double)
    }

    let configuration: Configuration
    private var direction: PositionFilter
    private var lastPosition: Coordinate?
    private var along = 0.0
    private var times: [Double] = []
    private var cumulative: [Double] = []
    private var pending: [PendingStep] = []
    private(set) var jitter: Double
    private(set) var speed = 0.0

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        direction = PositionFilter(configuration: PositionFilter.Configuration(
            accelerationDensity: configuration.directionAccelerationDensity,
            minimumPositionSigma: configuration.minimumDirectionSigma,
            softGate: .infinity))
        jitter = configuration.initialJitter
        times.reserveCapacity(64)
        cumulative.reserveCapacity(64)
        pending.reserveCapacity(configuration.lag + 1)
    }

    /// The first fix, or a fresh start.
    mutating func start(at position: Coordinate, time: Double) {
        direction.restart(at: position, positionSigma: directionSigma)
        lastPosition = position
        along = 0
        times.removeAll(keepingCapacity: true)
        cumulative.removeAll(keepingCapacity: true)
        times.append(time)
        cumulative.append(0)
        pending.removeAll(keepingCapacity: true)
        speed = 0
    }

    /// A fix `dt` seconds after the previous one; `isGap` after an outage. Returns the speed (m/s).
    mutating func update(position: Coordinate, time: Double, dt: Double, isGap: Bool) -> Double {
        guard let last = lastPosition, direction.isInitialized else {
            start(at: position, time: time)
            return speed
        }
        let before = Self.unit(direction.velocity)
        direction.predict(dt: dt)
        let accepted = direction.update(position: position, sigma: directionSigma)
        direction.recenter()
        // A gated fix (an outlier) adds no step: the next good one is measured from the last good one.
        guard accepted else { return speed }
        pending.append(PendingStep(position: position, time: time, isGap: isGap, before: before,
                                   after: Self.unit(direction.velocity)))
        guard pending.count > configuration.lag else { return speed }
        let step = pending.removeFirst()
        var east = step.before.east + step.after.east, north = step.before.north + step.after.north
        for later in pending {
            east += later.after.east
            north += later.after.north
        }
        let (ue, un) = Self.unit((east, north))
        let (de, dn) = WGS84.localOffset(of: step.position, from: last)
        lastPosition = step.position
        along += de * ue + dn * un
        if step.isGap, let t = times.last, let c = cumulative.last {
            times = [t]
            cumulative = [c]
        }
        times.append(step.time)
        cumulative.append(along)
        if !step.isGap { updateJitter() }
        while times.count > 2, times[times.count - 1] - times[0] > configuration.window {
            times.removeFirst()
            cumulative.removeFirst()
        }
        restartAtChange()
        if times.count >= configuration.minimumFitFixes {
            speed = max(0, Self.slope(times[...], cumulative[...]))
        }
        return speed
    }

    private var directionSigma: Double { configuration.directionSigmaPerJitter * jitter }

    /// The unit vector along `v` (zero for a zero vector).
    private static func unit(_ v: (east: Double, north: Double)) -> (east: Double, north: Double) {
        let m = (v.east * v.east + v.north * v.north).squareRoot()
        return m > 1e-6 ? (v.east / m, v.north / m) : (0, 0)
    }

    /// Jitter from second differences of c (white noise gives them 6 σ²); a trend barely moves
    /// them, and jumps (changes of pace, outliers) are left out.
    private mutating func updateJitter() {
        let n = cumulative.count
        guard n >= 3 else { return }
        let d = cumulative[n - 1] - 2 * cumulative[n - 2] + cumulative[n - 3]
        guard abs(d) < 4 * jitter * 6.0.squareRoot() else { return }
        let variance = 0.97 * jitter * jitter + 0.03 * d * d / 6
        jitter = max(configuration.minimumJitter, variance.squareRoot())
    }

    private mutating func restartAtChange() {
        let n = times.count
        guard n >= 4 else { return }
        var best = 0.0
        var cut = 0
        for j in 1...min(configuration.changeSegmentMax, n - 3) {
            let head = n - j
            let fit = Self.line(times[..<head], cumulative[..<head])
            var residual = 0.0
            for i in head..<n { residual += cumulative[i] - (fit.mean + fit.slope * (times[i] - fit.meanTime)) }
            let statistic = abs(residual / Double(j)) / (jitter * (1 / Double(j) + 1 / Double(head)).squareRoot())
            if statistic > best {
                best = statistic
                cut = head - 1
            }
        }
        if best > configuration.changeSigmas {
            times.removeFirst(cut)
            cumulative.removeFirst(cut)
        }
    }

    private static func slope(_ t: ArraySlice<Double>, _ c: ArraySlice<Double>) -> Double {
        t.count < 2 ? 0 : line(t, c).slope
    }

    /// Least-squares line through (t, c): its slope and the point of means it passes through.
    private static func line(_ t: ArraySlice<Double>, _ c: ArraySlice<Double>)
        -> (slope: Double, meanTime: Double, mean: Double)
    {
        let count = Double(t.count)
        var st = 0.0, sc = 0.0
        for (a, b) in zip(t, c) {
            st += a
            sc += b
        }
        let tm = st / count, cm = sc / count
        var num = 0.0, den = 0.0
        for (a, b) in zip(t, c) {
            num += (a - tm) * (b - cm)
            den += (a - tm) * (a - tm)
        }
        return (den > 0 ? num / den : 0, tm, cm)
    }
}
