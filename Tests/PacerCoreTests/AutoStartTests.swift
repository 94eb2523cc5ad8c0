import Foundation
import Testing
@testable import PacerCore

private let t0 = Timestamp(iso8601: "2026-05-10T07:30:00.000Z")!

private func at(_ seconds: Double) -> Timestamp { t0.adding(seconds: seconds) }

extension AutoStartDetector {
    /// Feeds (seconds after t0, speed) pairs; returns the starts reported.
    mutating func feed(_ samples: [(Double, Double)]) -> [AutoStart] {
        samples.compactMap { ingest(time: at($0.0), speed: $0.1) }
    }
}

/// `seconds` of fixes at `period` from `from`, all at `speed`.
private func steady(from: Double, seconds: Double, speed: Double, period: Double = 1) -> [(Double, Double)] {
    stride(from: from, to: from + seconds, by: period).map { ($0, speed) }
}

@Suite(.timeLimit(.minutes(10))) struct AutoStartTests {
    @Test func defaultsMatchTheConfigFile() {
        let defaults = AutoStartConfiguration()
        #expect(defaults.minimumSpeed == 1.5)
        #expect(defaults.sustainedSeconds == 15)
    }

    @Test func startsOnceMovementHasLastedTheSustainedTime() {
        var detector = AutoStartDetector()
        let standing = steady(from: 0, seconds: 20, speed: 0.1)
        #expect(detector.feed(standing).isEmpty)
        // Running from 20 s: the fix at 35 s completes 15 s of movement.
        var starts: [AutoStart] = []
        for sample in steady(from: 20, seconds: 15, speed: 3.0) {
            starts += detector.feed([sample])
        }
        #expect(starts.isEmpty)
        #expect(detector.feed([(35, 3.0)]) == [AutoStart(time: at(35), movingSince: at(20))])
        #expect(!detector.isArmed)
    }

    @Test func startsOnlyOnceUntilReset() {
        var detector = AutoStartDetector()
        let starts = detector.feed(steady(from: 0, seconds: 120, speed: 3.0))
        #expect(starts == [AutoStart(time: at(15), movingSince: at(0))])
        detector.reset()
        #expect(detector.isArmed)
        #expect(detector.feed(steady(from: 120, seconds: 60, speed: 3.0)) == [AutoStart(time: at(135), movingSince: at(120))])
    }

    @Test func oneFastFixWhileStandingStartsNothing() {
        var detector = AutoStartDetector()
        var samples = steady(from: 0, seconds: 300, speed: 0.2)
        // Jumps of one epoch, now and then.
        for i in stride(from: 7, to: 300, by: 13) { samples[i].1 = 4.0 }
        #expect(detector.feed(samples).isEmpty)
        #expect(detector.isArmed)
    }

    @Test func oneSlowFixWhileRunningDoesNotDelayTheStart() {
        var detector = AutoStartDetector()
        var samples = steady(from: 0, seconds: 10, speed: 0) + steady(from: 10, seconds: 30, speed: 3.0)
        samples[17].1 = 0.2  // a Doppler dropout at 17 s
        #expect(detector.feed(samples) == [AutoStart(time: at(25), movingSince: at(10))])
    }

    @Test func twoSlowFixesInARowStartTheCountAgain() {
        var detector = AutoStartDetector()
        var samples = steady(from: 0, seconds: 40, speed: 3.0)
        samples[10].1 = 0.3
        samples[11].1 = 0.3
        #expect(detector.feed(samples) == [AutoStart(time: at(27), movingSince: at(12))])
    }

    @Test func twoFastFixesInARowWhileStandingStartNothing() {
        var detector = AutoStartDetector()
        var samples = steady(from: 0, seconds: 120, speed: 0.1)
        for i in stride(from: 5, to: 120, by: 4) {
            samples[i].1 = 3.0
            samples[i + 1].1 = 3.0
        }
        // Half the epochs are fast, but never for long.
        #expect(detector.feed(samples).isEmpty)
    }

    @Test func walkingBelowTheThresholdStartsNothing() {
        var random = SeededRandom(seed: 11)
        var detector = AutoStartDetector()
        // An ordinary walk (1.3 m/s) with Doppler noise, for ten minutes.
        let samples = (0..<600).map { (Double($0), 1.3 + random.gaussian() * 0.1) }
        #expect(detector.feed(samples).isEmpty)
    }

    @Test func noisyRunningStartsWithinTwoSecondsOfTheSustainedTime() {
        var random = SeededRandom(seed: 12)
        var detector = AutoStartDetector()
        let samples = (0..<600).map { i in (Double(i), i < 60 ? abs(random.gaussian() * 0.15) : 2.2 + random.gaussian() * 0.15) }
        let starts = detector.feed(samples)
        #expect(starts.count == 1)
        if let start = starts.first {
            #expect(start.time >= at(75) && start.time <= at(77))
            #expect(start.movingSince >= at(60) && start.movingSince <= at(62))
        }
    }

    @Test func aVehicleIsNotARun() {
        var detector = AutoStartDetector()
        #expect(detector.feed(steady(from: 0, seconds: 120, speed: 15)).isEmpty)
    }

    @Test func aGapInTheFixesStartsTheCountAgain() {
        var detector = AutoStartDetector()
        // 10 s of running, 7 s without a fix (a tunnel), then running again.
        let samples = steady(from: 0, seconds: 11, speed: 3.0) + steady(from: 17, seconds: 30, speed: 3.0)
        #expect(detector.feed(samples) == [AutoStart(time: at(32), movingSince: at(17))])
    }

    @Test func aGapUpToTheLimitIsBridged() {
        var detector = AutoStartDetector()
        let samples = steady(from: 0, seconds: 11, speed: 3.0) + steady(from: 15, seconds: 30, speed: 3.0)
        #expect(detector.feed(samples) == [AutoStart(time: at(15), movingSince: at(0))])
    }

    @Test func timeGoingBackwardsStartsTheCountAgain() {
        var detector = AutoStartDetector()
        #expect(detector.feed(steady(from: 1000, seconds: 10, speed: 3.0)).isEmpty)
        // The receiver's time jumps back (a rollover fixed): the 10 s before say nothing.
        #expect(detector.feed(steady(from: 0, seconds: 30, speed: 3.0)) == [AutoStart(time: at(15), movingSince: at(0))])
    }

    @Test func slowSamplingStartsOnceTheFixesSpanTheSustainedTime() {
        var detector = AutoStartDetector()
        let samples = steady(from: 0, seconds: 60, speed: 2.5, period: 2.5)
        #expect(detector.feed(samples) == [AutoStart(time: at(15), movingSince: at(0))])
    }

    @Test func severalReportsOfOneEpochCountOnceAndTheLatestWins() {
        var detector = AutoStartDetector()
        var starts: [AutoStart] = []
        for second in 0..<30 {
            // gpsd's first TPV of an epoch (from GGA) may carry a stale speed; RMC's follows.
            starts += detector.feed([(Double(second), 0.0), (Double(second), 3.0)])
        }
        #expect(starts == [AutoStart(time: at(15), movingSince: at(0))])
    }

    @Test func afterARunEndedWhileMovingANewStartWaitsForStillness() {
        var detector = AutoStartDetector()
        #expect(detector.feed(steady(from: 0, seconds: 20, speed: 3.0)).count == 1)
        detector.reset(untilStill: true)
        #expect(!detector.isArmed)
        // Still running after the stop: no new run.
        #expect(detector.feed(steady(from: 20, seconds: 100, speed: 3.0)).isEmpty)
        // Standing 15 s arms it again; running again starts a run.
        #expect(detector.feed(steady(from: 120, seconds: 16, speed: 0.1)).isEmpty)
        #expect(detector.isArmed)
        #expect(detector.feed(steady(from: 136, seconds: 30, speed: 3.0)) == [AutoStart(time: at(151), movingSince: at(136))])
    }

    @Test func onlyUsableFixesCount() {
        var detector = AutoStartDetector()
        func fix(_ second: Double, mode: GPSFix.Mode = .threeD, status: GPSFix.Status = .unknown, time: Bool = true, speed: Double? = 3.0) -> GPSFix {
            GPSFix(time: time ? at(second) : nil, mode: mode, status: status, latitude: 45.5, longitude: 9.2, speed: speed)
        }
        for second in 0..<60 {
            let s = Double(second)
            #expect(detector.ingest(fix(s, mode: .noFix)) == nil)
            #expect(detector.ingest(fix(s, status: .simulated)) == nil)
            #expect(detector.ingest(fix(s, time: false)) == nil)
            #expect(detector.ingest(fix(s, speed: nil)) == nil)
            #expect(detector.ingest(time: at(s), speed: .nan) == nil)
        }
        #expect(detector.isArmed)
        #expect(detector.ingest(fix(100, mode: .twoD)) == nil)
        var start: AutoStart?
        for second in 101...115 { start = start ?? detector.ingest(fix(Double(second))) }
        #expect(start == AutoStart(time: at(115), movingSince: at(100)))
    }

    @Test func configuredThresholdsAreUsed() {
        var detector = AutoStartDetector(configuration: .init(minimumSpeed: 1.0, sustainedSeconds: 5))
        #expect(detector.feed(steady(from: 0, seconds: 20, speed: 1.2)) == [AutoStart(time: at(5), movingSince: at(0))])
    }

    // MARK: Simulated receivers (../shared/data/sim)

    /// Each epoch's time and speed from a gpsd JSON log, through `ingest(_: GPSFix)`.
    private func firstStart(in name: String) throws -> (start: AutoStart?, firstFix: Timestamp?)? {
        let path = SimData.directory + "/\(name).gpsd.jsonl"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var detector = AutoStartDetector()
        var firstFix: Timestamp?
        for line in text.split(whereSeparator: \.isNewline) {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["class"] as? String == "TPV"
            else { continue }
            let fix = GPSFix(
                time: (object["time"] as? String).flatMap(Timestamp.init(iso8601:)),
                mode: GPSFix.Mode(rawValue: object["mode"] as? Int ?? 0) ?? .notSeen,
                latitude: object["lat"] as? Double, longitude: object["lon"] as? Double,
                speed: object["speed"] as? Double)
            if firstFix == nil, fix.mode != .notSeen, fix.mode != .noFix { firstFix = fix.time }
            if let start = detector.ingest(fix) { return (start, firstFix) }
        }
        return (nil, firstFix)
    }

    // These three are skipped, saying so, in a clone without ../shared/data beside it.
    @Test(.enabled(if: SimData.isAvailable, SimData.unavailable), arguments: ["standstill-1", "walk-1"])
    func simulatedStandingAndWalkingStartNothing(name: String) throws {
        let result = try #require(try firstStart(in: name), "\(name).gpsd.jsonl is missing from ../shared/data/sim")
        #expect(result.start == nil)
    }

    /// Runs that begin with a stop (truth: moving from `movingFrom` s) start 15-17 s later.
    @Test(.enabled(if: SimData.isAvailable, SimData.unavailable), arguments: [
        ("city-10k-1", 20.0), ("city-10k-1-nosog", 20.0), ("hairpins-1", 20.0), ("marathon-1", 30.0),
        ("track-intervals-1", 60.0), ("trail-5k-1", 15.0),
    ])
    func simulatedRunsStartSoonAfterTheRunnerSetsOff(name: String, movingFrom: Double) throws {
        let result = try #require(try firstStart(in: name), "\(name).gpsd.jsonl is missing from ../shared/data/sim")
        let start = try #require(result.start)
        let firstFix = try #require(result.firstFix)
        let setOff = firstFix.adding(seconds: movingFrom)
        #expect(start.time.seconds(since: setOff) >= 15 && start.time.seconds(since: setOff) <= 17, "\(name): \(start)")
    }

    @Test(.enabled(if: SimData.isAvailable, SimData.unavailable))
    func aColdStartWhileRunningStartsFifteenSecondsAfterTheFirstFix() throws {
        let result = try #require(try firstStart(in: "coldstart-1"), "coldstart-1.gpsd.jsonl is missing from ../shared/data/sim")
        let start = try #require(result.start)
        let firstFix = try #require(result.firstFix)
        #expect(start.time.seconds(since: firstFix) >= 15 && start.time.seconds(since: firstFix) <= 17)
    }
}

/// ../shared/data/sim beside the repository (or under PACER_SHARED_DATA, as DaemonFixture's).
private enum SimData {
    static let directory: String = {
        if let data = ProcessInfo.processInfo.environment["PACER_SHARED_DATA"] { return data + "/sim" }
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/PacerCoreTests/AutoStartTests.swift
        return parts.joined(separator: "/") + "/../shared/data/sim"
    }()

    static var isAvailable: Bool { FileManager.default.fileExists(atPath: directory) }
    static let unavailable: Comment = "needs ../shared/data/sim beside the repository"
}
