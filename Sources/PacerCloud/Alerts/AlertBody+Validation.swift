import PacerContract
import PacerCore

/// What the server checks of an SOS message (PacerContract.AlertBody) before it stores it as received.
extension AlertBody {
    /// Checks every field the server reads or shows. Kinds are checked by shape, not against a
    /// list, so a newer device's kind (`hr_signal_lost`) reaches an older server. Times are
    /// never a reason to refuse an SOS: one this server cannot place (a clock never set, a GPS
    /// week rollover) is kept as data and shown as the device's text.
    func validate() throws(APIError) {
        _ = try Identifiers.alertID(alert_id)
        try DeviceInput.integer(sequence, "sequence", WireLimits.sequence)
        guard Self.types.contains(type) else {
            throw JSONInput.invalid("type", "\(WireLimits.quoted(type)) is not one of \(Self.types.joined(separator: ", "))")
        }
        guard Self.isKind(kind) else {
            throw JSONInput.invalid("kind", "\(WireLimits.quoted(kind)) is not a kind: a lowercase letter, then up to 39 of a-z, 0-9, _")
        }
        let times: [(String, String?)] = [("time", time), ("raised_at", raised_at), ("first_out_of_range", first_out_of_range),
                                          ("position.time", position?.time)]
        for (field, value) in times {
            try DeviceInput.text(value, field, maxLength: 64)
        }
        try DeviceInput.text(device, "device", maxLength: 256)
        try DeviceInput.text(run_id, "run_id", maxLength: 64)
        try DeviceInput.text(sms, "sms")
        try DeviceInput.text(wearer, "wearer", maxLength: WearerName.maxLength)
        if let heart_rate {
            try DeviceInput.integer(heart_rate.bpm, "heart_rate.bpm", WireLimits.heartRate)
            try DeviceInput.text(heart_rate.trend, "heart_rate.trend", maxLength: 64)
            try DeviceInput.number(heart_rate.trend_bpm_per_min, "heart_rate.trend_bpm_per_min", WireLimits.trendBpmPerMin)
            try DeviceInput.integer(heart_rate.min_30s, "heart_rate.min_30s", WireLimits.heartRate)
            try DeviceInput.integer(heart_rate.max_30s, "heart_rate.max_30s", WireLimits.heartRate)
            try DeviceInput.integer(heart_rate.threshold_bpm, "heart_rate.threshold_bpm", WireLimits.heartRate)
        }
        if let position {
            guard position.lat.isFinite, (-90...90).contains(position.lat) else { throw JSONInput.invalid("position.lat", "must be -90...90") }
            guard position.lon.isFinite, (-180...180).contains(position.lon) else {
                throw JSONInput.invalid("position.lon", "must be -180...180")
            }
            try DeviceInput.number(position.age_s, "position.age_s", WireLimits.ageS)
            try DeviceInput.number(position.accuracy_m, "position.accuracy_m", WireLimits.accuracyM)
        }
        try DeviceInput.integer(battery_percent, "battery_percent", WireLimits.batteryPercent)
    }

    /// The message's time in milliseconds when it is a time from 1980 to 2200, else nil.
    static func placedTime(_ text: String?) -> Int64? {
        guard let text, let ms = WireTime.milliseconds(text), WireTime.range.contains(ms) else { return nil }
        return ms
    }
}
