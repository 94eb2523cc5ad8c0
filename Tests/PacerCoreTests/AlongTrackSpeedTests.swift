import Testing

@testable import PacerCore

/// A runner on a curving path, seen by a receiver without Doppler speed: positions with white
/// jitter (and an optional constant bias), no speed, no course.
struct CurvedRun {
    struct Leg {
        var seconds: Double
        var speed: Double
        /// Degrees per second, positive clockwise.
        var turnRate = 0.0
    }

    var legs: [Leg]
    var jitter = 0.5
    var period = 1.0
    var seed: UInt64 = 1
    var start = Coordinate(latitude: 45.4775, longitude: 9.2241)
    var startTime = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!

    struct Epoch {
        var time: Double
        var trueSpeed: Double
        var along: Double
        var fix: GPSFix
    }

    func build() -> [Epoch] {
        var random = SeededRandom(seed: seed)
        var epochs: [Epoch] = []
        var east = 0.0, north = 0.0, heading = 0.0, along = 0.0, t = 0.0
        let total = legs.reduce(0) { $0 + $1.seconds }
        let substeps = 100
        while t <= total + 1e-9 {
            let speed = leg(at: t).speed
            let e = east + random.gaussian() * jitter, n = north + random.gaussian() * jitter
            let position = WGS84.offsetting(start, east: e, north: n)
            epochs.append(Epoch(time: t, trueSpeed: speed, along: along, fix: GPSFix(
                time: startTime.adding(seconds: t), mode: .threeD, latitude: position.latitude,
                longitude: position.longitude, eph: 15)))
            // Walk the path in small steps so arcs are followed exactly enough.
            let h = period / Double(substeps)
            for k in 0..<substeps {
                let current = leg(at: t + Double(k) * h)
                let mid = heading + current.turnRate * .pi / 180 * h / 2
                east += current.speed * h * _sin(mid)
                north += current.speed * h * _cos(mid)
                along += current.speed * h
                heading += current.turnRate * .pi / 180 * h
            }
            t += period
        }
        return epochs
    }

    private func leg(at t: Double) -> Leg {
        var end = 0.0
        for leg in legs {
            end += leg.seconds
            if t < end - 1e-9 { return leg }
        }
        return legs.last!
    }
}

@Suite(.timeLimit(.minutes(10))) struct AlongTrackSpeedTests {
    /// The tracker's samples next to the truth of the same epochs.
    func track(_ epochs: [CurvedRun.Epoch]) -> (tracker: RunTracker, samples: [TrackSample]) {
        var tracker = RunTracker()
        let samples = tracker.run(epochs.map(\.fix)).samples
        #expect(samples.count == epochs.count)
        return (tracker, samples)
    }

    /// Distance from a plain constant-velocity Kalman filter's |v| on the same fixes (process
    /// noise 0.3, sigma eph/4 >= 3 m), integrated while above a walking pace: the yardstick.
    func plainFilterDistance(_ epochs: [CurvedRun.Epoch]) -> Double {
        var filter = PositionFilter(configuration: .init(accelerationDensity: 0.3, softGate: .infinity))
        var distance = 0.0, lastSpeed = 0.0
        for (i, epoch) in epochs.enumerated() {
            let position = Coordinate(latitude: epoch.fix.latitude!, longitude: epoch.fix.longitude!)
            if i == 0 {
                filter.restart(at: position, positionSigma: 15.0 / 4)
                continue
            }
            let dt = epoch.time - epochs[i - 1].time
            filter.predict(dt: dt)
            _ = filter.update(position: position, sigma: 15.0 / 4)
            filter.recenter()
            let speed = filter.speed > 0.5 ? filter.speed : 0
            distance += (lastSpeed + speed) / 2 * dt
            lastSpeed = speed
        }
        return distance
    }

    /// Share of samples whose true speed has not changed for `settle` seconds that are within 5 %.
    func steadyShare(_ epochs: [CurvedRun.Epoch], _ samples: [TrackSample], settle: Double = 10) -> Double {
        var steady = 0, within = 0
        for (i, epoch) in epochs.enumerated() {
            let window = epochs.filter { $0.time >= epoch.time - settle && $0.time <= epoch.time }
            guard window.allSatisfy({ $0.trueSpeed == epoch.trueSpeed }), epoch.trueSpeed > 0 else { continue }
            steady += 1
            if abs(samples[i].speed - epoch.trueSpeed) <= 0.05 * epoch.trueSpeed { within += 1 }
        }
        return Double(within) / Double(max(steady, 1))
    }

    @Test func hairpinsAreNotCutShort() {
        // Out and back eight times on a 200 m straight, turning on a 4 m radius at 3.5 m/s: a
        // filter whose velocity lags the turn counts the chord across each hairpin.
        let straight = CurvedRun.Leg(seconds: 57, speed: 3.5)
        let hairpin = CurvedRun.Leg(seconds: 4 * .pi / 3.5, speed: 3.5, turnRate: 3.5 / 4 * 180 / .pi)
        var legs = [CurvedRun.Leg(seconds: 10, speed: 0)]
        for _ in 0..<8 { legs += [straight, hairpin] }
        legs += [straight, CurvedRun.Leg(seconds: 10, speed: 0)]
        let epochs = CurvedRun(legs: legs, jitter: 0.4, seed: 21).build()
        let (tracker, samples) = track(epochs)
        let truth = epochs.last!.along
        let error = abs(tracker.summary.distance - truth) / truth
        let plainError = abs(plainFilterDistance(epochs) - truth) / truth
        // A 4 m radius is tighter than the routes' hairpins: within 2 %, and at least a point
        // better than the plain filter, which cuts each turn.
        #expect(error < 0.02)
        #expect(plainError - error > 0.01)
        #expect(steadyShare(epochs, samples) >= 0.9)
    }

    /// Relative distance errors (Pacer, plain filter) on a path that bends one way and the
    /// other, 8 degrees a second, at a trail pace.
    func windingTrail(jitter: Double, seed: UInt64) -> (error: Double, plainError: Double) {
        var legs: [CurvedRun.Leg] = []
        for k in 0..<20 { legs.append(.init(seconds: 30, speed: 2.6, turnRate: k % 2 == 0 ? 8 : -8)) }
        let epochs = CurvedRun(legs: legs, jitter: jitter, seed: seed).build()
        let (tracker, _) = track(epochs)
        let truth = epochs.last!.along
        return (abs(tracker.summary.distance - truth) / truth, abs(plainFilterDistance(epochs) - truth) / truth)
    }

    @Test(arguments: [22, 23, 24] as [UInt64])
    func windingTrailWithTypicalJitter(seed: UInt64) {
        let (error, plainError) = windingTrail(jitter: 0.4, seed: seed)
        #expect(error < 0.02)
        #expect(error < plainError)
    }

    @Test func windingTrailWithHeavyJitter() {
        // 0.8 m of jitter makes the direction noisy enough that projecting on it loses ~2 %,
        // more than the plain filter does here.
        withKnownIssue("issue #24: along-track steps lose ~2 % on winding paths with 0.8 m jitter") {
            let (error, plainError) = windingTrail(jitter: 0.8, seed: 23)
            #expect(error < 0.01)
            #expect(error < plainError)
        }
    }

    /// Speeds of a bare estimator over the fixes, one per epoch.
    func alongTrackSpeeds(_ epochs: [CurvedRun.Epoch], lag: Int) -> [Double] {
        var estimator = AlongTrackSpeed(configuration: .init(lag: lag))
        var speeds: [Double] = []
        for (i, epoch) in epochs.enumerated() {
            let position = Coordinate(latitude: epoch.fix.latitude!, longitude: epoch.fix.longitude!)
            if i == 0 {
                estimator.start(at: position, time: epoch.time)
                speeds.append(0)
            } else {
                speeds.append(estimator.update(position: position, time: epoch.time,
                                               dt: epoch.time - epochs[i - 1].time, isGap: false))
            }
        }
        return speeds
    }

    /// Share of epochs from `from` seconds on whose speed is within 5 % of the (constant) truth.
    func shareWithinFivePercent(_ epochs: [CurvedRun.Epoch], _ speeds: [Double], from: Double) -> Double {
        let scored = epochs.indices.filter { epochs[$0].time >= from }
        let within = scored.filter { abs(speeds[$0] - epochs[$0].trueSpeed) <= 0.05 * epochs[$0].trueSpeed }
        return Double(within.count) / Double(scored.count)
    }

    @Test func reportedSpeedFollowsBends() {
        // S-bends at a trail pace, 20 degrees a second for 6 s one way, then the other: the
        // undelayed direction lags each bend and projects the steps short. The speed the tracker
        // reports comes two fixes late, from directions that have seen where the bend goes.
        var legs: [CurvedRun.Leg] = []
        for k in 0..<40 { legs.append(.init(seconds: 6, speed: 2.6, turnRate: k % 2 == 0 ? 20 : -20)) }
        let epochs = CurvedRun(legs: legs, jitter: 0.3, seed: 28).build()
        let undelayed = shareWithinFivePercent(epochs, alongTrackSpeeds(epochs, lag: 0), from: 30)
        let reported = shareWithinFivePercent(epochs, track(epochs).samples.map(\.speed), from: 30)
        #expect(undelayed < 0.9)
        #expect(reported >= 0.95)
    }

    @Test func stopsAreHeardAndNotCounted() {
        let epochs = CurvedRun(legs: [
            .init(seconds: 120, speed: 3.0), .init(seconds: 30, speed: 0), .init(seconds: 120, speed: 3.0, turnRate: 2),
        ], seed: 24).build()
        let (tracker, samples) = track(epochs)
        // Standing from 120 s to 150 s: silent within 4 s of stopping, moving again within 4 s.
        for (i, epoch) in epochs.enumerated() where epoch.time >= 124 && epoch.time < 150 {
            #expect(!samples[i].moving, "t=\(epoch.time)")
        }
        for (i, epoch) in epochs.enumerated() where epoch.time >= 154 && epoch.time < 270 {
            #expect(samples[i].moving, "t=\(epoch.time)")
        }
        #expect(abs(tracker.summary.movingTime - 240) <= 4)
        #expect(abs(tracker.summary.distance - 720) / 720 < 0.02)
        // Each start costs a few metres: the speed is held at 0 until the new fit has 4 fixes.
        withKnownIssue("issue #24: ~1.3 % short on a 720 m run with two starts") {
            #expect(abs(tracker.summary.distance - 720) / 720 < 0.01)
        }
    }

    @Test func paceChangeIsFollowedWithinTenSeconds() {
        let epochs = CurvedRun(legs: [
            .init(seconds: 120, speed: 3.0), .init(seconds: 120, speed: 3.6), .init(seconds: 120, speed: 3.2),
        ], jitter: 0.5, seed: 25).build()
        let (_, samples) = track(epochs)
        #expect(steadyShare(epochs, samples) >= 0.95)
        // And it does not lag: 10 s after each change the speed is the new one.
        for (i, epoch) in epochs.enumerated() where [130.0, 250.0].contains(epoch.time) {
            #expect(abs(samples[i].speed - epoch.trueSpeed) <= 0.05 * epoch.trueSpeed, "t=\(epoch.time)")
        }
    }

    @Test func outlierIsIgnoredAndAGapResyncs() {
        var epochs = CurvedRun(legs: [.init(seconds: 300, speed: 3.2, turnRate: 1)], jitter: 0.4, seed: 26).build()
        let clean = track(epochs).tracker.summary.distance
        // One fix 40 m off...
        let moved = WGS84.offsetting(
            Coordinate(latitude: epochs[100].fix.latitude!, longitude: epochs[100].fix.longitude!), east: 40, north: 0)
        epochs[100].fix.latitude = moved.latitude
        epochs[100].fix.longitude = moved.longitude
        // ...and 15 s without a fix.
        epochs.removeAll { $0.time >= 200 && $0.time < 215 }
        let (tracker, samples) = track(epochs)
        #expect(tracker.counts.gatedPositions >= 1)
        #expect(tracker.counts.bridgedGaps == 1)
        #expect(abs(tracker.summary.distance - clean) < 5)
        for (i, epoch) in epochs.enumerated() where (95...110).contains(epoch.time) || epoch.time >= 225 {
            #expect(abs(samples[i].speed - 3.2) <= 0.05 * 3.2, "t=\(epoch.time)")
        }
    }

    @Test func isCausal() {
        let epochs = CurvedRun(legs: [.init(seconds: 60, speed: 3.0), .init(seconds: 60, speed: 3.5, turnRate: 5)],
                               seed: 27).build()
        let full = track(epochs).samples
        let cut = track(Array(epochs.prefix(70))).samples
        #expect(Array(full.prefix(70)) == cut)
    }
}
