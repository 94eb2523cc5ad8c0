import FoundationEssentials
import Gzip
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
        let texts = TrackUploadFormat.chunks(samples: samples, heartRate: heartRate, hiding: zones)
        var chunks: [[UInt8]] = []
        for text in texts { chunks.append(try Gzip.compress(Array(text.utf8))) }
        let summary = RunSummaryBody(
            start_time: run.startTime.iso8601, end_time: run.endTime?.iso8601, distance_m: run.distance, moving_time_s: run.movingTime,
            elapsed_time_s: run.elapsedTime, avg_pace_s_per_km: run.averagePacePerKm, max_speed_mps: run.maxSpeed,
            hr_avg: run.heartRateAverage, hr_max: run.heartRateMax, chunks: chunks.count,
            state: run.state == .interrupted ? "interrupted" : "finished")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Plain numbers and strings: encoding cannot fail.
        let json = (try? encoder.encode(summary)).map { [UInt8]($0) } ?? Array("{}".utf8)
        return RunPackage(chunks: chunks, summary: json, trackBytes: texts.reduce(0) { $0 + $1.utf8.count })
    }
}

/// `PUT /v1/runs/{run_id}`: the run is complete once this and all its chunks are there.
struct RunSummaryBody: Encodable {
    var start_time: String
    var end_time: String?
    var distance_m: Double
    var moving_time_s: Double
    var elapsed_time_s: Double
    var avg_pace_s_per_km: Double?
    var max_speed_mps: Double
    var hr_avg: Double?
    var hr_max: Int?
    var chunks: Int
    var state: String
}
