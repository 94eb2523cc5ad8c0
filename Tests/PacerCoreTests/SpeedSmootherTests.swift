import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct SpeedSmootherTests {
    @Test func averagesNoiseAtSteadySpeed() {
        var random = SeededRandom(seed: 7)
        var smoother = SpeedSmoother()
        var within = 0
        for i in 0..<300 {
            let out = smoother.add(time: Double(i), speed: 1.4 + random.gaussian() * 0.08)
            if i >= 20, abs(out.estimate - 1.4) <= 0.07 { within += 1 }
        }
        // Raw samples would be within ±5 % only ~62 % of the time.
        #expect(within >= 270)
    }

    @Test func oneBadSampleCannotMoveTheEstimate() {
        var smoother = SpeedSmoother()
        for i in 0..<20 { _ = smoother.add(time: Double(i), speed: 3.0) }
        let spike = smoother.add(time: 20, speed: 9.0)
        #expect(!spike.accepted)
        #expect(spike.estimate == 3.0)
        let after = smoother.add(time: 21, speed: 3.0)
        #expect(after.accepted && after.estimate == 3.0)
    }

    @Test func aStepChangeIsFollowedWithinTwoSamples() {
        var smoother = SpeedSmoother()
        for i in 0..<30 { _ = smoother.add(time: Double(i), speed: 3.0) }
        _ = smoother.add(time: 30, speed: 5.0)
        let second = smoother.add(time: 31, speed: 5.0)
        #expect(second.estimate == 5.0)
    }

    @Test func aSmallShiftIsFoundWithoutWaitingForTheWindow() {
        var random = SeededRandom(seed: 3)
        var smoother = SpeedSmoother()
        for i in 0..<30 { _ = smoother.add(time: Double(i), speed: 3.0 + random.gaussian() * 0.08) }
        var estimate = 0.0
        for i in 30..<40 { estimate = smoother.add(time: Double(i), speed: 3.3 + random.gaussian() * 0.08).estimate }
        // A fixed 30 s window would still read ~3.1 here.
        #expect(abs(estimate - 3.3) < 0.1)
    }
}
