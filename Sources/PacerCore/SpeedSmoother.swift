/// Smooths a stream of speed measurements with an adaptive window.
///
/// A fixed window (or a Kalman filter with fixed process noise) must trade lag against noise:
/// long enough to beat Doppler noise at walking pace, it lags 10-20 s behind every change of
/// pace in an interval session. Instead this keeps the mean of the samples since the last
/// detected change of speed, capped at `maxWindow` seconds:
/// - a single sample far from the mean is held back as a suspect (one bad fix cannot move the
///   estimate); a second one on the same side confirms a step change and restarts the window;
/// - smaller shifts are found by a two-segment test over the window (mean of the last few
///   samples against the rest, in units of the measured noise), which restarts the window too.
/// Causal: each output uses only that sample and earlier ones.
struct SpeedSmoother: Sendable {
    struct Configuration: Sendable {
        var maxWindow = 30.0
        /// Deviation (m/s) below which a sample is never a suspect, whatever the noise estimate.
        var suspectFloor = 0.45
        var suspectSigmas = 5.0
        /// Two-segment test threshold, in standard errors.
        var shiftSigmas = 4.5
        /// Longest recent segment the shift test looks at.
        var shiftSegmentMax = 10
        var initialSigma = 0.15
        var minimumSigma = 0.04
    }

    struct Output: Sendable, Equatable {
        var estimate: Double
        /// False when the sample was held back as a suspect.
        var accepted: Bool
    }

    private(set) var configuration: Configuration
    private var times: [Double] = []
    private var values: [Double] = []
    private var pending: (time: Double, value: Double)?
    private var lastAccepted: Double?
    private(set) var sigma: Double

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.sigma = configuration.initialSigma
        times.reserveCapacity(64)
        values.reserveCapacity(64)
    }

    var isEmpty: Bool { values.isEmpty }

    var estimate: Double? { values.isEmpty ? nil : mean(values[...]) }

    mutating func reset() {
        times.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        pending = nil
        lastAccepted = nil
    }

    mutating func add(time: Double, speed: Double) -> Output {
        guard !values.isEmpty else {
            append(time, speed)
            return Output(estimate: speed, accepted: true)
        }
        let current = mean(values[...])
        let deviation = speed - current
        let suspectThreshold = max(configuration.suspectFloor, configuration.suspectSigmas * sigma)
        if abs(deviation) > suspectThreshold {
            if let held = pending, (held.value - current) * deviation > 0,
                abs(speed - held.value) <= suspectThreshold
            {
                // Two in a row on the same side: the speed really changed.
                times.removeAll(keepingCapacity: true)
                values.removeAll(keepingCapacity: true)
                append(held.time, held.value)
                append(time, speed)
                pending = nil
                return Output(estimate: mean(values[...]), accepted: true)
            }
            pending = (time, speed)
            return Output(estimate: current, accepted: false)
        }
        pending = nil
        updateSigma(with: speed)
        append(time, speed)
        trim(before: time - configuration.maxWindow)
        restartAtShift()
        return Output(estimate: mean(values[...]), accepted: true)
    }

    private mutating func append(_ time: Double, _ value: Double) {
        times.append(time)
        values.append(value)
        lastAccepted = value
    }

    /// Noise from successive differences, which a slow trend barely affects; jumps are left out
    /// so a change of pace does not inflate it.
    private mutating func updateSigma(with value: Double) {
        guard let previous = lastAccepted else { return }
        let d = value - previous
        guard abs(d) < 4 * sigma * 1.4142 else { return }
        let variance = sigma * sigma * 0.97 + 0.03 * d * d / 2
        sigma = max(configuration.minimumSigma, variance.squareRoot())
    }

    private mutating func trim(before cutoff: Double) {
        var drop = 0
        while drop < times.count - 1, times[drop] < cutoff { drop += 1 }
        if drop > 0 {
            times.removeFirst(drop)
            values.removeFirst(drop)
        }
    }

    private mutating func restartAtShift() {
        let n = values.count
        guard n >= 4 else { return }
        var total = 0.0
        for v in values { total += v }
        var tail = 0.0
        var bestStatistic = 0.0
        var bestSplit = 0
        let longest = min(configuration.shiftSegmentMax, n - 2)
        for j in 1...longest {
            tail += values[n - j]
            guard j >= 2 else { continue }
            let after = tail / Double(j)
            let before = (total - tail) / Double(n - j)
            let standardError = sigma * (1 / Double(j) + 1 / Double(n - j)).squareRoot()
            let statistic = abs(after - before) / standardError
            if statistic > bestStatistic {
                bestStatistic = statistic
                bestSplit = n - j
            }
        }
        if bestStatistic > configuration.shiftSigmas {
            times.removeFirst(bestSplit)
            values.removeFirst(bestSplit)
        }
    }

    private func mean(_ slice: ArraySlice<Double>) -> Double {
        var sum = 0.0
        for v in slice { sum += v }
        return sum / Double(slice.count)
    }
}
