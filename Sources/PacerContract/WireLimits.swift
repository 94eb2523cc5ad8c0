/// The ranges the cloud takes (openapi.yaml's description and schemas): a device that stays
/// inside them is never refused, and the cloud checks exactly these.
public enum WireLimits {
    /// A lowercase UUID ("0f8e…-…"): the ids of notices, planned sessions and runs.
    public static func isLowercaseUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == 0x2D else { return false }
            } else {
                guard (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) else { return false }
            }
        }
        return true
    }

    public static let accuracyM = 0.0...100_000.0
    /// Metres above sea level: below the Dead Sea to above any road or trail.
    public static let altitudeM = -1_000.0...10_000.0
    public static let speedMps = 0.0...1_000.0
    public static let heartRate = 0...300
    public static let batteryPercent = 0...100
    /// Alert message numbers: 64 bits, stored as BIGINT in PostgreSQL.
    public static let sequence = 0...Int.max
    /// A run's distance (m) and durations (s): far beyond any run, small enough for any column.
    public static let distanceM = 0.0...100_000_000.0
    public static let durationS = 0.0...100_000_000.0
    public static let paceSPerKm = 0.0...1_000_000_000.0
    public static let trendBpmPerMin = -10_000.0...10_000.0
    public static let ageS = 0.0...10_000_000_000.0
    /// Longest free text in Unicode scalars (what JSON Schema's maxLength counts, so the spec
    /// can say it exactly): the SMS text and any other string field.
    public static let maxTextLength = 4_096

    /// `POST /v1/alerts`: the most bytes one alert message's body may have (413 above; openapi.yaml
    /// `x-max-bytes`). The largest message the field limits allow is about 20 KB as pacerd writes it.
    public static let alertMessageMaxBytes = 64 * 1024
    /// `GET /v1/alerts?limit=`: the page's default and most (openapi.yaml's `limit` parameter).
    public static let alertsPageDefault = 20
    public static let alertsPageMax = 100

    /// At most 64 characters of `text`, quoted, for an error message: a refusal never echoes a
    /// long field back.
    public static func quoted(_ text: some StringProtocol) -> String {
        let limit = 64
        var prefix = ""
        for (index, character) in text.enumerated() {
            if index == limit { return "'\(prefix)…' (\(text.utf8.count) bytes)" }
            prefix.append(character)
        }
        return "'\(prefix)'"
    }
}
