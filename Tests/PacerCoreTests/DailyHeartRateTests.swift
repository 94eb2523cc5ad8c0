import Foundation
import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct DailyHeartRateTests {
    /// 2026-05-10T00:00:00Z.
    static let mayTenthMs: Int64 = 1_778_371_200_000

    static func at(hours: Double, minutesPastMidnight minutes: Double = 0) -> Timestamp {
        Timestamp(milliseconds: mayTenthMs + Int64((hours * 3_600 + minutes * 60) * 1_000))
    }

    @Test func countMinimumAndFifthPercentileAsResting() {
        var log = DailyHeartRate()
        // 200 readings: 10 at 48 (the lowest 5 %), 190 spread 60...79; one artefact at 41.
        for i in 0..<10 { log.add(bpm: 48, at: Self.at(hours: 8, minutesPastMidnight: Double(i)), utcOffsetSeconds: 0) }
        for i in 0..<190 { log.add(bpm: 60 + i % 20, at: Self.at(hours: 9, minutesPastMidnight: Double(i)), utcOffsetSeconds: 0) }
        log.add(bpm: 41, at: Self.at(hours: 10), utcOffsetSeconds: 0)
        let summary = try! #require(log.summaries.first)
        #expect(log.summaries.count == 1)
        #expect(summary == .init(date: "2026-05-10", count: 201, minBpm: 41, restingBpm: 48))
    }

    @Test func noRestingEstimateFromTooFewReadings() {
        var log = DailyHeartRate()
        for i in 0..<(DailyHeartRate.minReadingsForResting - 1) {
            log.add(bpm: 55 + i % 3, at: Self.at(hours: 12, minutesPastMidnight: Double(i) / 60), utcOffsetSeconds: 0)
        }
        #expect(log.summaries == [.init(date: "2026-05-10", count: DailyHeartRate.minReadingsForResting - 1, minBpm: 55, restingBpm: nil)])
        log.add(bpm: 70, at: Self.at(hours: 13), utcOffsetSeconds: 0)
        #expect(log.summaries.first?.restingBpm == 55)
    }

    /// 23:30 UTC is the next day in Rome (+2 h) and the same day in New York (−4 h).
    @Test func theLocalDateFollowsTheOffset() {
        var log = DailyHeartRate()
        log.add(bpm: 60, at: Self.at(hours: 23.5), utcOffsetSeconds: 7_200)
        log.add(bpm: 61, at: Self.at(hours: 23.5), utcOffsetSeconds: -14_400)
        log.add(bpm: 62, at: Self.at(hours: 1), utcOffsetSeconds: -14_400)
        #expect(log.summaries.map(\.date) == ["2026-05-09", "2026-05-10", "2026-05-11"])
        #expect(log.summaries.map(\.minBpm) == [62, 61, 60])
    }

    @Test func implausibleReadingsAreLeftOut() {
        var log = DailyHeartRate()
        log.add(bpm: 0, at: Self.at(hours: 1), utcOffsetSeconds: 0)
        log.add(bpm: HeartRateSample.maximumPlausibleBpm + 1, at: Self.at(hours: 1), utcOffsetSeconds: 0)
        #expect(log.summaries.isEmpty)
    }

    @Test func keepsTheNewestDaysOnly() {
        var log = DailyHeartRate()
        for day in 0..<(DailyHeartRate.maxDays + 5) { log.add(bpm: 50 + day, at: Self.at(hours: Double(24 * day)), utcOffsetSeconds: 0) }
        #expect(log.summaries.count == DailyHeartRate.maxDays)
        #expect(log.summaries.first?.minBpm == 55)
        // A reading of a day older than all kept is dropped rather than pushing a newer day out.
        log.add(bpm: 40, at: Self.at(hours: 0), utcOffsetSeconds: 0)
        #expect(log.summaries.count == DailyHeartRate.maxDays && log.summaries.first?.minBpm == 55)
        // A late reading of a kept day counts.
        log.add(bpm: 44, at: Self.at(hours: 24 * 5 + 3), utcOffsetSeconds: 0)
        #expect(log.summaries.first?.minBpm == 44)
    }

    @Test func unsentUntilAcceptedAndAgainOnceChanged() {
        var log = DailyHeartRate()
        log.add(bpm: 60, at: Self.at(hours: 10), utcOffsetSeconds: 0)
        log.add(bpm: 58, at: Self.at(hours: 34), utcOffsetSeconds: 0)
        let first = log.unsent(limit: 31)
        #expect(first.map(\.date) == ["2026-05-10", "2026-05-11"])
        #expect(log.unsent(limit: 1).map(\.date) == ["2026-05-11"])
        log.accepted(first)
        #expect(log.unsent(limit: 31).isEmpty)
        log.add(bpm: 57, at: Self.at(hours: 35), utcOffsetSeconds: 0)
        #expect(log.unsent(limit: 31) == [.init(date: "2026-05-11", count: 2, minBpm: 57, restingBpm: nil)])
    }

    @Test func survivesACodableRoundTrip() throws {
        var log = DailyHeartRate()
        for i in 0..<300 { log.add(bpm: 50 + (i * 7) % 40, at: Self.at(hours: 5, minutesPastMidnight: Double(i)), utcOffsetSeconds: 3_600) }
        log.accepted(log.unsent(limit: 1))
        log.add(bpm: 90, at: Self.at(hours: 30), utcOffsetSeconds: 3_600)
        let copy = try JSONDecoder().decode(DailyHeartRate.self, from: JSONEncoder().encode(log))
        #expect(copy == log)
        #expect(copy.unsent(limit: 31).map(\.date) == ["2026-05-11"])
    }
}
