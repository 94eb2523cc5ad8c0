import FoundationEssentials
import Gzip
import PacerContract
import PacerCore
import Store

/// A finished run as it is uploaded: its track in gzipped chunks (privacy zones cut out) and
/// its summary, made once and kept in the outbox, so every retry sends the same bytes.
public struct RunPackage: Sendable {
    public var chunks: [[UInt8]]
    public var summary: [UInt8]
    /// Before gzip, for the record.
    public var trackBytes: Int

    public static func make(_ run: StoredRun, samples: [TrackSample], heartRate: [HeartRateSample], zones: [PrivacyZone]) throws(Gzip.Failure) -> RunPackage {
        let texts = TrackChunkFormat.chunks(samples: samples, heartRate: heartRate, hiding: zones)
        var chunks: [[UInt8]] = []
        for text in texts { chunks.append(try Gzip.compress(Array(text.utf8))) }
        // A stored run that is not recording has an end; should one lack it, the end is what its
        // elapsed time says (the contract requires end_time, so nil would be refused for good).
        let end = run.endTime ?? run.startTime.adding(seconds: run.elapsedTime)
        let summary = RunSummaryBody(
            start_time: run.startTime.iso8601, end_time: end.iso8601, distance_m: run.distance, moving_time_s: run.movingTime,
            elapsed_time_s: run.elapsedTime, avg_pace_s_per_km: run.averagePacePerKm, max_speed_mps: run.maxSpeed,
            hr_avg: run.heartRateAverage, hr_max: run.heartRateMax, chunks: chunks.count,
            state: run.state == .interrupted ? "interrupted" : "finished",
            planned_session_id: run.followed?.plannedSessionID,
            // A workout file's name may be longer than the contract takes: a longer one would be refused for good.
            workout_name: run.followed.map { String($0.name.unicodeScalars.prefix(PlanSteps.maxNameLength)) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Plain numbers and strings: encoding cannot fail.
        let json = (try? encoder.encode(summary)).map { [UInt8]($0) } ?? Array("{}".utf8)
        return RunPackage(chunks: chunks, summary: json, trackBytes: texts.reduce(0) { $0 + $1.utf8.count })
    }
}
