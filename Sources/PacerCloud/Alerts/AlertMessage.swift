/// One SOS message as pacerd POSTs it (README "SOS", Sources/SOS/AlertBody.swift): the alert,
/// its follow-ups, the all clear or the cancel. Only what the server acts on is required; the
/// message is stored as received.
struct AlertMessage: Codable, Equatable, Sendable {
    struct HeartRate: Codable, Equatable, Sendable {
        var bpm: Int?
        var trend: String?
        var trend_bpm_per_min: Double?
        var min_30s: Int?
        var max_30s: Int?
        var threshold_bpm: Int?
    }

    struct Position: Codable, Equatable, Sendable {
        var lat: Double
        var lon: Double
        var time: String?
        var age_s: Double?
        var accuracy_m: Double?
    }

    var alert_id: String
    var sequence: Int
    var type: String
    var test: Bool
    var kind: String
    var time: String
    var raised_at: String?
    var first_out_of_range: String?
    var device: String?
    var run_id: String?
    var heart_rate: HeartRate?
    var position: Position?
    var battery_percent: Int?
    var sms: String?

    static let types = ["alert", "follow_up", "resolved", "cancelled"]

    func validate() throws(APIError) {
        _ = try Identifiers.alertID(alert_id)
        guard sequence >= 0 else { throw JSONInput.invalid("sequence", "must be ≥ 0") }
        guard Self.types.contains(type) else {
            throw JSONInput.invalid("type", "'\(type)' is not one of \(Self.types.joined(separator: ", "))")
        }
        guard !kind.isEmpty, kind.count <= 64 else { throw JSONInput.invalid("kind", "must be 1 to 64 characters") }
        guard Timestamp.milliseconds(time) != nil else { throw JSONInput.invalid("time", "'\(time)' is not an ISO-8601 time") }
        if let position {
            guard position.lat.isFinite, (-90...90).contains(position.lat) else { throw JSONInput.invalid("position.lat", "must be -90...90") }
            guard position.lon.isFinite, (-180...180).contains(position.lon) else {
                throw JSONInput.invalid("position.lon", "must be -180...180")
            }
        }
    }
}
