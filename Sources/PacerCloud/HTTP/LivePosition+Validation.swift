import PacerContract

/// What the server checks of a live position (PacerContract.LivePosition); returns its time in milliseconds.
extension LivePosition {
    func validate() throws(APIError) -> Int64 {
        let ms = try DeviceInput.time(time, "time")
        guard lat.isFinite, (-90...90).contains(lat) else { throw JSONInput.invalid("lat", "must be a latitude, -90...90") }
        guard lon.isFinite, (-180...180).contains(lon) else { throw JSONInput.invalid("lon", "must be a longitude, -180...180") }
        try DeviceInput.number(accuracy_m, "accuracy_m", WireLimits.accuracyM)
        try DeviceInput.number(speed_mps, "speed_mps", WireLimits.speedMps)
        try DeviceInput.integer(heart_rate, "heart_rate", WireLimits.heartRate)
        if let run_id { _ = try Identifiers.runID(run_id) }
        return ms
    }
}
