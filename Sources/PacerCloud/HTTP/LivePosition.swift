/// The device's live position (`PUT /v1/position`).
struct LivePosition: Codable, Equatable, Sendable {
    var time: String
    var lat: Double
    var lon: Double
    var accuracy_m: Double?
    var speed_mps: Double?
    var heart_rate: Int?
    var run_id: String?

    func validate() throws(APIError) -> Int64 {
        let ms = try DeviceInput.time(time, "time")
        guard lat.isFinite, (-90...90).contains(lat) else { throw JSONInput.invalid("lat", "must be a latitude, -90...90") }
        guard lon.isFinite, (-180...180).contains(lon) else { throw JSONInput.invalid("lon", "must be a longitude, -180...180") }
        try DeviceInput.number(accuracy_m, "accuracy_m", DeviceInput.accuracyM)
        try DeviceInput.number(speed_mps, "speed_mps", DeviceInput.speedMps)
        try DeviceInput.integer(heart_rate, "heart_rate", DeviceInput.heartRate)
        if let run_id { _ = try Identifiers.runID(run_id) }
        return ms
    }
}
