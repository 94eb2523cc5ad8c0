import PacerContract

/// What the server checks of a run's summary (PacerContract.RunSummaryBody).
extension RunSummaryBody {
    /// Checks what decoding cannot; returns start_time in milliseconds.
    func validate() throws(APIError) -> Int64 {
        let start = try DeviceInput.time(start_time, "start_time")
        // An end before the start is kept as sent: a Pi without a real-time clock can step its
        // clock back mid-run, and a refused summary would leave the run incomplete for good.
        _ = try DeviceInput.time(end_time, "end_time")
        try DeviceInput.number(distance_m, "distance_m", WireLimits.distanceM)
        try DeviceInput.number(moving_time_s, "moving_time_s", WireLimits.durationS)
        try DeviceInput.number(elapsed_time_s, "elapsed_time_s", WireLimits.durationS)
        try DeviceInput.number(avg_pace_s_per_km, "avg_pace_s_per_km", WireLimits.paceSPerKm)
        try DeviceInput.number(max_speed_mps, "max_speed_mps", WireLimits.speedMps)
        try DeviceInput.number(hr_avg, "hr_avg", 0...Double(WireLimits.heartRate.upperBound))
        try DeviceInput.integer(hr_max, "hr_max", WireLimits.heartRate)
        try DeviceInput.integer(chunks, "chunks", 0...CloudLimits.maxChunksPerRun)
        if let planned_session_id, !WireLimits.isLowercaseUUID(planned_session_id) {
            throw JSONInput.invalid("planned_session_id", "\(WireLimits.quoted(planned_session_id)) is not a session id (a lowercase UUID)")
        }
        try DeviceInput.text(workout_name, "workout_name", maxLength: PlanSteps.maxNameLength)
        guard Self.states.contains(state) else {
            throw JSONInput.invalid("state", "\(WireLimits.quoted(state)) is not 'finished' or 'interrupted'")
        }
        return start
    }
}
