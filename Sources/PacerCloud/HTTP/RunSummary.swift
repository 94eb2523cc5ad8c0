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
        let start = try DeviceInput.time(start_time, "start_time")
        // An end before the start is kept as sent: a Pi without a real-time clock can step its
        // clock back mid-run, and a refused summary would leave the run incomplete for good.
        _ = try DeviceInput.time(end_time, "end_time")
        try DeviceInput.number(distance_m, "distance_m", DeviceInput.distanceM)
        try DeviceInput.number(moving_time_s, "moving_time_s", DeviceInput.durationS)
        try DeviceInput.number(elapsed_time_s, "elapsed_time_s", DeviceInput.durationS)
        try DeviceInput.number(avg_pace_s_per_km, "avg_pace_s_per_km", DeviceInput.paceSPerKm)
        try DeviceInput.number(max_speed_mps, "max_speed_mps", DeviceInput.speedMps)
        try DeviceInput.number(hr_avg, "hr_avg", 0...Double(DeviceInput.heartRate.upperBound))
        try DeviceInput.integer(hr_max, "hr_max", DeviceInput.heartRate)
        try DeviceInput.integer(chunks, "chunks", 0...CloudLimits.maxChunksPerRun)
        guard state == "finished" || state == "interrupted" else {
            throw JSONInput.invalid("state", "\(DeviceInput.quoted(state)) is not 'finished' or 'interrupted'")
        }
        return start
    }
}
