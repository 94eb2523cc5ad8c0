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
        guard let ms = Timestamp.milliseconds(time) else {
            throw JSONInput.invalid("time", "'\(time)' is not an ISO-8601 time like 2026-05-10T07:30:00.000Z")
        }
        guard lat.isFinite, (-90...90).contains(lat) else { throw JSONInput.invalid("lat", "must be a latitude, -90...90") }
        guard lon.isFinite, (-180...180).contains(lon) else { throw JSONInput.invalid("lon", "must be a longitude, -180...180") }
        if let accuracy_m, !accuracy_m.isFinite || accuracy_m < 0 { throw JSONInput.invalid("accuracy_m", "must be ≥ 0") }
        if let speed_mps, !speed_mps.isFinite || speed_mps < 0 { throw JSONInput.invalid("speed_mps", "must be ≥ 0") }
        if let heart_rate, !(0...300).contains(heart_rate) { throw JSONInput.invalid("heart_rate", "must be 0...300") }
        if let run_id { _ = try Identifiers.runID(run_id) }
        return ms
    }
}
