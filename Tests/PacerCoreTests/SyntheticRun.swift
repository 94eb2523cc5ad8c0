@testable import PacerCore

/// Deterministic pseudo-random numbers (SplitMix64) so every test run sees the same noise.
struct SeededRandom {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Standard normal (Box-Muller).
    mutating func gaussian() -> Double {
        let u1 = max(uniform(), 1e-12), u2 = uniform()
        return (-2 * _log(u1)).squareRoot() * _cos(2 * .pi * u2)
    }
}

@inline(__always) func _log(_ x: Double) -> Double { Glibc.log(x) }
@inline(__always) func _cos(_ x: Double) -> Double { Glibc.cos(x) }

#if canImport(Glibc)
import Glibc
#endif

/// Builds GPS fixes for a runner moving along a heading at piecewise-constant speeds, with a
/// receiver-like noise model: slowly wandering bias, per-epoch jitter, Doppler noise.
struct SyntheticRun {
    struct Leg {
        var seconds: Double
        var speed: Double
    }

    var start = Coordinate(latitude: 45.4775, longitude: 9.2241)
    var startTime = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!
    var heading = 60.0
    var legs: [Leg]
    var period = 1.0
    var jitter = 0.5
    var biasSigma = 3.0
    var dopplerSigma = 0.1
    var reportsDoppler = true
    var seed: UInt64 = 1
    /// Epoch indices at which no fix is produced (outages).
    var outage: Range<Double>? = nil
    /// Extra periods drawn uniformly in 1...2.5 s instead of `period`.
    var irregular = false

    /// The fixes and the true distance run between the first and last fix.
    func build() -> (fixes: [GPSFix], trueDistance: Double, trueMovingTime: Double) {
        var random = SeededRandom(seed: seed)
        var fixes: [GPSFix] = []
        var t = 0.0
        var along = 0.0
        var biasE = random.gaussian() * biasSigma, biasN = random.gaussian() * biasSigma
        let total = legs.reduce(0) { $0 + $1.seconds }
        var firstAlong: Double?
        var lastAlong = 0.0
        var movingTime = 0.0
        var lastFixT: Double?
        let rad = heading * .pi / 180
        while t <= total {
            let speed = speedAt(t)
            if outage?.contains(t) != true {
                // Bias wanders by centimetres per epoch, as real receivers' does.
                biasE = biasE * 0.999 + random.gaussian() * biasSigma * 0.045
                biasN = biasN * 0.999 + random.gaussian() * biasSigma * 0.045
                let e = along * _sin(rad) + biasE + random.gaussian() * jitter
                let n = along * _cos(rad) + biasN + random.gaussian() * jitter
                let position = WGS84.offsetting(start, east: e, north: n)
                let doppler = max(0, speed + random.gaussian() * dopplerSigma)
                fixes.append(GPSFix(
                    time: startTime.adding(seconds: t), mode: .threeD, status: .unknown,
                    latitude: position.latitude, longitude: position.longitude,
                    speed: reportsDoppler ? doppler : nil, track: reportsDoppler ? heading : nil, eph: 15))
                if firstAlong == nil { firstAlong = along }
                if let previous = lastFixT, speed > 0 { movingTime += t - previous }
                lastAlong = along
                lastFixT = t
            }
            let step = irregular ? 1 + 1.5 * random.uniform() : period
            // Integrate exactly over the step (speeds are piecewise constant per leg).
            var remaining = step
            var cursor = t
            while remaining > 1e-9 {
                let legEnd = legEndAfter(cursor)
                let chunk = min(remaining, legEnd - cursor)
                along += speedAt(cursor) * chunk
                cursor += chunk
                remaining -= chunk
            }
            t += step
        }
        return (fixes, lastAlong - (firstAlong ?? 0), movingTime)
    }

    private func speedAt(_ t: Double) -> Double {
        var end = 0.0
        for leg in legs {
            end += leg.seconds
            if t < end { return leg.speed }
        }
        return legs.last?.speed ?? 0
    }

    private func legEndAfter(_ t: Double) -> Double {
        var end = 0.0
        for leg in legs {
            end += leg.seconds
            if t < end - 1e-9 { return end }
        }
        return .infinity
    }
}

@inline(__always) func _sin(_ x: Double) -> Double { Glibc.sin(x) }

extension RunTracker {
    /// Feeds all fixes and the finish; returns every event in order.
    mutating func run(_ fixes: [GPSFix]) -> [TrackerEvent] {
        var events: [TrackerEvent] = []
        for fix in fixes { events += ingest(fix) }
        events += finish()
        return events
    }
}

extension Array where Element == TrackerEvent {
    var samples: [TrackSample] { compactMap { if case .sample(let s) = $0 { s } else { nil } } }
    var splits: [Split] { compactMap { if case .split(let s) = $0 { s } else { nil } } }
    var warnings: [TrackerWarning] { compactMap { if case .warning(let w) = $0 { w } else { nil } } }
}

func fix(_ time: String, lat: Double? = 45.4775, lon: Double? = 9.2241, mode: GPSFix.Mode = .threeD,
         status: GPSFix.Status = .unknown, speed: Double? = 0, track: Double? = 0) -> GPSFix {
    GPSFix(time: Timestamp(iso8601: time), mode: mode, status: status, latitude: lat, longitude: lon,
           speed: speed, track: track, eph: 15)
}
