import PacerCore
import Testing

/// The heart signal and the body's motion judged together (#30), on injected time: a body moving
/// north at a given speed (Doppler fixes at 1 Hz) and a strap whose readings the test writes.
@Suite(.timeLimit(.minutes(10))) struct VitalsWatcherCollapseTests {
    typealias T = VitalsWatcherTests

    /// What the strap sends at a second: a reading, or nothing.
    enum Beat {
        case bpm(Int)
        case noContact
        case zeroWithContact
        case frozen(Int, rr: [Double])
        case silent
    }

    struct Trace {
        var events: [(Double, SafetyEvent)] = []
        var alerts: [(Double, VitalsAlert)] { T.alerts(events) }
        var asks: [Double] { events.compactMap { if case .askAreYouOK = $0.1 { $0.0 } else { nil } } }
        var warnings: [(Double, SensorWarning)] { events.compactMap { if case .warning(let w) = $0.1 { ($0.0, w) } else { nil } } }
    }

    /// Runs `seconds` seconds of a body (speed at each second; nil: no fix) and a heart.
    static func run(_ w: inout VitalsWatcher, _ seconds: ClosedRange<Int>, every interval: Double = 1,
                    speed: (Double) -> Double?, heart: (Double) -> Beat) -> Trace {
        var trace = Trace()
        var latitude = 45.0
        var s = Double(seconds.lowerBound)
        while s <= Double(seconds.upperBound) {
            if s == s.rounded(), let v = speed(s) {
                latitude += v / 111_000
                w.observe(position: T.fix(s, latitude: latitude, speed: v))
            }
            trace.events += w.advance(to: T.t(s)).map { (s, $0) }
            let sample: HeartRateSample? = switch heart(s) {
            case .bpm(let bpm): T.sample(s, bpm)
            case .noContact: HeartRateSample(time: T.t(s), bpm: 0, contact: false)
            case .zeroWithContact: HeartRateSample(time: T.t(s), bpm: 0, contact: true)
            case .frozen(let bpm, let rr): HeartRateSample(time: T.t(s), bpm: bpm, rrIntervalsMs: rr, contact: true)
            case .silent: nil
            }
            if let sample { trace.events += w.ingest(sample).map { (s, $0) } }
            s += interval
        }
        return trace
    }

    // MARK: Collapses

    /// A walker at 58 bpm whose heart stops: no fall of 30 bpm was possible, but the signal and
    /// the walk end together: asked at once, alerted when the countdown ends.
    @Test(arguments: [Beat.noContact, .zeroWithContact, .silent])
    func anArrestFromALowRateWhileWalkingIsCaught(after: Beat) {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...180, speed: { $0 < 121 ? 1.4 : 0 }, heart: { $0 < 120 ? .bpm(58) : after })
        #expect(trace.alerts.count == 1)
        #expect(trace.alerts.first.map { $0.0 - 121 <= 15 } == true, "\(trace.alerts.map(\.0))")
        #expect(trace.asks.first.map { $0 - 121 <= 5 } == true, "asked within 5 s: \(trace.asks)")
    }

    /// A fall of a third of the wearer's own rate (70 to 44 over 25 s), then no signal, while
    /// standing: strong evidence, so the alert goes out at once, with no question.
    @Test func aSlowFallThenNoSignalIsStrongEvidence() {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...200, speed: { _ in 0 }, heart: { s in
            s < 100 ? .bpm(70) : s < 125 ? .bpm(70 - Int((s - 100) * 26 / 25)) : .noContact
        })
        #expect(trace.asks.isEmpty)
        #expect(trace.alerts.map(\.1.kind) == [.hrSignalLost])
        #expect(trace.alerts.first?.1.firstOutOfRange == T.t(125))
        #expect(trace.alerts.first.map { $0.0 - 125 <= 5 } == true)
    }

    /// The recovery after a run (170 to 135 in 40 s) is no fall of a third: taking the strap off
    /// then is asked about, never alerted at once.
    @Test func theRecoveryAfterARunIsNoEvidence() {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...100, speed: { $0 < 40 ? 3.5 : 0 }, heart: { s in
            s < 40 ? .bpm(170) : s < 80 ? .bpm(170 - Int((s - 40) * 35 / 40)) : .noContact
        })
        #expect(trace.asks.count == 1, "stopped 40 s before the signal turned: within collapse_window_s, asked")
        #expect(trace.alerts.allSatisfy { $0.1.kind == .noSignalNoMotion && $0.0 >= trace.asks[0] + 10 }, "never at once")
    }

    /// The strap repeats its last value and RR after the heart stopped.
    @Test func aFrozenStrapIsAnAbnormalSignal() {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...150, speed: { $0 < 101 ? 1.4 : 0 }, heart: { s in
            s < 100 ? .bpm(64) : .frozen(64, rr: [937])
        })
        #expect(trace.alerts.count == 1)
        #expect(trace.alerts.first.map { $0.0 - 101 <= 15 } == true, "\(trace.alerts.map(\.0))")
        // The first repeat of the value and the intervals (at 101) is of the reading at 100.
        #expect(w.signal(at: T.t(150)) == .abnormal(.frozen, since: T.t(100)))
    }

    /// Ventricular fibrillation read as 255-300 bpm: abnormal (never ignored), arrhythmic (strong
    /// evidence), so when the body stops the alert goes out at once.
    @Test func readingsAbove250AreAbnormalAndStrongEvidence() {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...150, speed: { $0 < 104 ? 3.0 : 0 }, heart: { s in
            s < 100 ? .bpm(150) : .bpm(255 + Int(s * 7) % 46)
        })
        #expect(trace.alerts.map(\.1.kind) == [.hrSignalLost])
        #expect(trace.asks.isEmpty)
        #expect(trace.alerts.first.map { $0.0 - 104 <= 5 } == true, "\(trace.alerts.map(\.0))")
        if case .abnormal(let reason, _) = w.signal(at: T.t(150)) { #expect(reason == .implausible) } else { Issue.record("not abnormal") }
    }

    /// Chaotic readings (values that jump as no rhythm does) with losses, the body stopping.
    @Test func chaoticReadingsAreStrongEvidence() {
        var w = VitalsWatcher(rules: T.rules())
        let values = [210, 160, 285, 190, 250, 170, 300, 230, 155, 265]
        let trace = Self.run(&w, 0...150, speed: { $0 < 104 ? 3.0 : 0 }, heart: { s in
            s < 100 ? .bpm(150) : Int(s) % 4 == 3 ? .silent : .bpm(values[Int(s) % values.count])
        })
        #expect(trace.alerts.map(\.1.kind) == [.hrSignalLost])
        #expect(trace.alerts.first.map { $0.0 - 104 <= 5 } == true, "\(trace.alerts.map(\.0))")
    }

    /// No fix (indoors, a tunnel): the body cannot be seen, so even strong evidence asks first.
    @Test func withoutAFixStrongEvidenceAsks() {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...200, speed: { _ in nil }, heart: { s in
            s < 100 ? .bpm(70) : s < 125 ? .bpm(70 - Int((s - 100) * 26 / 25)) : .noContact
        })
        #expect(trace.asks.first.map { $0 - 125 <= 5 } == true, "\(trace.asks)")
        #expect(trace.alerts.map(\.1.kind) == [.hrSignalLost])
        #expect(trace.alerts.first.map { $0.0 - 125 <= 15 } == true)
    }

    // MARK: Strap faults while moving

    /// A strap slipping (half the rate), browning out, falling silent, contact flickering: while
    /// the runner keeps running at pace, never an alert, and the warning is said once.
    @Test(arguments: ["slip", "brownout", "flicker", "silent"])
    func aStrapFaultWhileRunningNeverAlerts(fault: String) {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...400, speed: { _ in 3.5 }, heart: { s in
            guard s >= 100 else { return .bpm(150) }
            switch fault {
            case "slip": return s < 160 ? .bpm(75) : .noContact
            case "brownout": return Int(s) % 3 == 0 ? .silent : Int(s) % 3 == 1 ? .zeroWithContact : .bpm([45, 180, 20, 230, 95, 140][Int(s) % 6])
            case "flicker": return Int(s) % 4 == 0 ? .noContact : .bpm(150)
            default: return .silent
            }
        })
        #expect(trace.alerts.isEmpty)
        #expect(trace.asks.isEmpty)
        let abnormal = trace.warnings.filter { $0.1.fault == .abnormal }
        #expect(abnormal.count <= 1, "said once: \(abnormal.map(\.0))")
        if fault == "slip" || fault == "silent" { #expect(abnormal.count == 1) }
    }

    /// The end of a tachycardia (alerted), then a 5 s radio gap while running: nothing more.
    @Test func aGapAfterATachycardiaWhileRunningIsNoCollapse() {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...300, speed: { _ in 3.5 }, heart: { s in
            s < 100 ? .bpm(160) : s < 160 ? .bpm(215) : s < 170 ? .bpm(165) : s < 175 ? .silent : .bpm(160)
        })
        #expect(trace.alerts.map(\.1.kind) == [.hrHigh])
    }

    /// A second strap joins (unwetted, reading low) and the first stops: the two are never mixed.
    @Test func twoStrapsAreNeverMixed() {
        var w = VitalsWatcher(rules: T.rules())
        var events: [SafetyEvent] = []
        var latitude = 45.0
        for s in 0..<300 {
            latitude += 3.5 / 111_000
            w.observe(position: T.fix(Double(s), latitude: latitude, speed: 3.5))
            events += w.advance(to: T.t(Double(s)))
            if s < 200 {
                var a = T.sample(Double(s), 150)
                a.strap = "A"
                events += w.ingest(a)
            }
            if s >= 150 {
                var b = T.sample(Double(s) + 0.5, s < 180 ? 60 : 150)
                b.strap = "B"
                events += w.ingest(b)
            }
        }
        #expect(events.allSatisfy { if case .alert = $0 { false } else { true } })
        #expect(w.signal(at: T.t(299)) == .live(bpm: 150))
    }

    // MARK: Breaches

    /// A real tachycardia with one flickering no-contact notification: still confirmed within
    /// 5 s of its first sample (the flicker keeps the history).
    @Test func aBreachsHistorySurvivesOneFlicker() {
        var w = VitalsWatcher(rules: T.rules())
        let trace = Self.run(&w, 0...120, speed: { _ in 3.0 }, heart: { s in
            s < 100 ? .bpm(170) : s == 102 ? .noContact : .bpm(215)
        })
        #expect(trace.alerts.map(\.1.kind) == [.hrHigh])
        #expect(trace.alerts.first?.1.firstOutOfRange == T.t(100))
        #expect(trace.alerts.first.map { $0.0 - 100 <= 5 } == true, "\(trace.alerts.map(\.0))")
    }

    // MARK: A cancel never blinds

    @Test func aCancelledCollapseReArmsOnceTheSignalIsBack() {
        var w = VitalsWatcher(rules: T.rules())
        var trace = Self.run(&w, 0...40, speed: { $0 < 11 ? 1.4 : 0 }, heart: { $0 < 10 ? .bpm(60) : .noContact })
        #expect(trace.alerts.count == 1)
        #expect(w.cancel(at: T.t(41)).count == 1)
        // Still lying there with no signal: the runner said it was a false alarm; quiet.
        trace = Self.run(&w, 42...100, speed: { _ in 0 }, heart: { _ in .noContact })
        #expect(trace.alerts.isEmpty && trace.asks.isEmpty)
        // The strap back on, a walk, then a second collapse: raised again.
        trace = Self.run(&w, 101...250, speed: { $0 < 201 ? 1.4 : 0 }, heart: { $0 < 200 ? .bpm(60) : .noContact })
        #expect(trace.alerts.count == 1, "\(trace.events.map(\.1))")
        #expect(trace.alerts.first.map { $0.0 - 201 <= 15 } == true)
    }

    @Test func aCancelledBreachReArmsOnceBackInRange() {
        var w = VitalsWatcher(rules: T.rules())
        var trace = Self.run(&w, 0...30, speed: { _ in 3.0 }, heart: { $0 < 10 ? .bpm(170) : .bpm(215) })
        #expect(trace.alerts.count == 1)
        #expect(w.cancel(at: T.t(31)).count == 1)
        trace = Self.run(&w, 32...60, speed: { _ in 3.0 }, heart: { _ in .bpm(215) })
        #expect(trace.alerts.isEmpty, "the same breach going on stays cancelled")
        trace = Self.run(&w, 61...100, speed: { _ in 3.0 }, heart: { $0 < 70 ? .bpm(180) : .bpm(215) })
        #expect(trace.alerts.map(\.1.kind) == [.hrHigh], "a new breach after 9 s in range")
        #expect(trace.alerts.first?.1.firstOutOfRange == T.t(70))
    }

    // MARK: Silence at 4 Hz

    /// At 4 Hz a strap is silent after 2 s (not 4.5), so a lost signal has room within the 5 s.
    @Test func silenceScalesWithTheStrapsInterval() {
        var w = VitalsWatcher(rules: T.rules())
        var s = 0.0
        while s < 10 {
            _ = w.ingest(T.sample(s, 120))
            s += 0.25
        }
        // The last notification at 9.75.
        #expect(w.signal(at: T.t(11.7)) == .live(bpm: 120))
        #expect(w.signal(at: T.t(11.75)) == .abnormal(.silent, since: T.t(10)))
    }

    /// Motion comes from the fixes alone, and a hand pause or no run at all changes nothing.
    @Test func motionIsJudgedFromFixes() {
        var motion = BodyMotion()
        for s in 0..<20 { motion.observe(.init(time: T.t(Double(s)), coordinate: Coordinate(latitude: 45, longitude: 9), dopplerSpeed: 3.2)) }
        #expect(motion.state(at: T.t(19)) == .atPace)
        for s in 20..<23 { motion.observe(.init(time: T.t(Double(s)), coordinate: Coordinate(latitude: 45, longitude: 9), dopplerSpeed: 1.2)) }
        #expect(motion.state(at: T.t(22)) == .slowing)
        for s in 23..<26 { motion.observe(.init(time: T.t(Double(s)), coordinate: Coordinate(latitude: 45, longitude: 9), dopplerSpeed: 0.1)) }
        #expect(motion.state(at: T.t(25)) == .stopped)
        #expect(motion.state(at: T.t(31)) == .unknown)
        // Without Doppler: from the positions, 2.8 m/s north.
        var positional = BodyMotion()
        for s in 0..<20 {
            positional.observe(.init(time: T.t(Double(s)), coordinate: Coordinate(latitude: 45 + Double(s) * 2.8 / 111_132, longitude: 9), dopplerSpeed: nil))
        }
        #expect(positional.state(at: T.t(19)) == .atPace)
        #expect(abs(positional.speed - 2.8) < 0.1)
    }
}
