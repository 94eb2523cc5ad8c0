/// A run's summary as the device PUTs it (`PUT /v1/runs/{run_id}`).
struct RunSummary: Codable, Equatable, Sendable {
    var start_time: String
    var end_time: String
    var distance_m: Double
    var moving_time_s: Double
    var elapsed_time_s: Double
    var avg_pace_s_per_km: Double?
    var max_speed_mps: Double?
    var hr_avg: Double?
    var hr_max: Int?
    var chunks: Int
    var state: String

    /// Checks what decoding cannot; returns start_time in milliseconds.
    func validate() throws(APIError) -> Int64 {
        guard let start = Timestamp.milliseconds(start_time) else {
            throw JSONInput.invalid("start_time", "'\(start_time)' is not an ISO-8601 time like 2026-05-10T07:30:00.000Z")
        }
        guard let end = Timestamp.milliseconds(end_time) else {
            throw JSONInput.invalid("end_time", "'\(end_time)' is not an ISO-8601 time like 2026-05-10T07:30:00.000Z")
        }
        guard end >= start else { throw JSONInput.invalid("end_time", "is before start_time") }
        for (name, value) in [("distance_m", distance_m), ("moving_time_s", moving_time_s), ("elapsed_time_s", elapsed_time_s)] {
            guard value.isFinite, value >= 0 else { throw JSONInput.invalid(name, "must be a number ≥ 0") }
        }
        for (name, value) in [("avg_pace_s_per_km", avg_pace_s_per_km), ("max_speed_mps", max_speed_mps), ("hr_avg", hr_avg)] {
            if let value, !value.isFinite || value < 0 { throw JSONInput.invalid(name, "must be a number ≥ 0 or null") }
        }
        if let hr_max, !(0...300).contains(hr_max) { throw JSONInput.invalid("hr_max", "must be 0...300 or null") }
        guard (0...100_000).contains(chunks) else { throw JSONInput.invalid("chunks", "must be 0...100000") }
        guard state == "finished" || state == "interrupted" else {
            throw JSONInput.invalid("state", "'\(state)' is not 'finished' or 'interrupted'")
        }
        return start
    }
}
