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

    /// Checks every field the server reads or shows. Kinds are checked by shape, not against a
    /// list, so a newer device's kind (`hr_signal_lost`) reaches an older server. Times are
    /// never a reason to refuse an SOS: one this server cannot place (a clock never set, a GPS
    /// week rollover) is kept as data and shown as the device's text.
    func validate() throws(APIError) {
        _ = try Identifiers.alertID(alert_id)
        try DeviceInput.integer(sequence, "sequence", DeviceInput.sequence)
        guard Self.types.contains(type) else {
            throw JSONInput.invalid("type", "\(DeviceInput.quoted(type)) is not one of \(Self.types.joined(separator: ", "))")
        }
        guard Self.isKind(kind) else {
            throw JSONInput.invalid("kind", "\(DeviceInput.quoted(kind)) is not a kind: a lowercase letter, then up to 39 of a-z, 0-9, _")
        }
        let times: [(String, String?)] = [("time", time), ("raised_at", raised_at), ("first_out_of_range", first_out_of_range),
                                          ("position.time", position?.time)]
        for (field, value) in times {
            try DeviceInput.text(value, field, maxLength: 64)
        }
        try DeviceInput.text(device, "device", maxLength: 256)
        try DeviceInput.text(run_id, "run_id", maxLength: 64)
        try DeviceInput.text(sms, "sms")
        if let heart_rate {
            try DeviceInput.integer(heart_rate.bpm, "heart_rate.bpm", DeviceInput.heartRate)
            try DeviceInput.text(heart_rate.trend, "heart_rate.trend", maxLength: 64)
            try DeviceInput.number(heart_rate.trend_bpm_per_min, "heart_rate.trend_bpm_per_min", DeviceInput.trendBpmPerMin)
            try DeviceInput.integer(heart_rate.min_30s, "heart_rate.min_30s", DeviceInput.heartRate)
            try DeviceInput.integer(heart_rate.max_30s, "heart_rate.max_30s", DeviceInput.heartRate)
            try DeviceInput.integer(heart_rate.threshold_bpm, "heart_rate.threshold_bpm", DeviceInput.heartRate)
        }
        if let position {
            guard position.lat.isFinite, (-90...90).contains(position.lat) else { throw JSONInput.invalid("position.lat", "must be -90...90") }
            guard position.lon.isFinite, (-180...180).contains(position.lon) else {
                throw JSONInput.invalid("position.lon", "must be -180...180")
            }
            try DeviceInput.number(position.age_s, "position.age_s", DeviceInput.ageS)
            try DeviceInput.number(position.accuracy_m, "position.accuracy_m", DeviceInput.accuracyM)
        }
        try DeviceInput.integer(battery_percent, "battery_percent", DeviceInput.batteryPercent)
    }

    /// `^[a-z][a-z0-9_]{0,39}$`.
    static func isKind(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...40).contains(bytes.count), (0x61...0x7A).contains(bytes[0]) else { return false }
        return bytes.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }
    }

    /// The message's time in milliseconds when it is a time from 1980 to 2200, else nil.
    static func placedTime(_ text: String?) -> Int64? {
        guard let text, let ms = Timestamp.milliseconds(text), DeviceInput.timeRange.contains(ms) else { return nil }
        return ms
    }
}
