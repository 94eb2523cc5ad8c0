/// The ranges every number and text from a device must be in, checked at the edge so that
/// nothing past it (the stores, the page, the e-mail) can meet a value it cannot hold or print.
/// Each refusal is a 400 naming the field. The ranges are documented in openapi.yaml.
enum DeviceInput {
    /// 1980-01-01T00:00:00Z: the GPS epoch's decade; earlier is a clock that was never set.
    static let earliestMs: Int64 = 315_532_800_000
    /// 2200-01-01T00:00:00Z: far beyond any real clock, still four digits of year when printed.
    static let latestMs: Int64 = 7_258_118_400_000
    static let timeRange = earliestMs...latestMs

    static let accuracyM = 0.0...100_000.0
    static let speedMps = 0.0...1_000.0
    static let heartRate = 0...300
    static let batteryPercent = 0...100
    /// Alert message numbers: 64 bits, stored as BIGINT in PostgreSQL.
    static let sequence = 0...Int.max
    /// A run's distance (m) and durations (s): far beyond any run, small enough for any column.
    static let distanceM = 0.0...100_000_000.0
    static let durationS = 0.0...100_000_000.0
    static let paceSPerKm = 0.0...1_000_000_000.0
    static let trendBpmPerMin = -10_000.0...10_000.0
    static let ageS = 0.0...10_000_000_000.0
    /// Longest free text in Unicode scalars (what JSON Schema's maxLength counts, so the spec
    /// can say it exactly): the SMS text and any other string field.
    static let maxTextLength = 4_096

    /// An ISO-8601 time from 1980 to 2200, in milliseconds.
    static func time(_ text: String, _ field: String) throws(APIError) -> Int64 {
        guard let ms = Timestamp.milliseconds(text), timeRange.contains(ms) else {
            throw JSONInput.invalid(field, "\(quoted(text)) is not an ISO-8601 time from 1980 to 2200 like 2026-05-10T07:30:00.000Z")
        }
        return ms
    }

    static func number(_ value: Double?, _ field: String, _ range: ClosedRange<Double>) throws(APIError) {
        guard let value else { return }
        guard value.isFinite, range.contains(value) else {
            throw JSONInput.invalid(field, "must be a number from \(printed(range.lowerBound)) to \(printed(range.upperBound))")
        }
    }

    static func integer(_ value: Int?, _ field: String, _ range: ClosedRange<Int>) throws(APIError) {
        guard let value else { return }
        guard range.contains(value) else { throw JSONInput.invalid(field, "must be a whole number from \(range.lowerBound) to \(range.upperBound)") }
    }

    /// Text the server stores or shows: no NUL (PostgreSQL's TEXT cannot hold it), bounded.
    /// (It is valid UTF-8 already: the body was checked before decoding.)
    static func text(_ value: String?, _ field: String, maxLength: Int = maxTextLength) throws(APIError) {
        guard let value else { return }
        guard value.unicodeScalars.count <= maxLength else { throw JSONInput.invalid(field, "is longer than \(maxLength) characters") }
        guard !value.utf8.contains(0) else { throw JSONInput.invalid(field, "contains a NUL character") }
    }

    /// At most 64 characters of `text`, quoted, for an error message: a refusal never echoes a
    /// long field back.
    static func quoted(_ text: some StringProtocol) -> String {
        let limit = 64
        var prefix = ""
        for (index, character) in text.enumerated() {
            if index == limit { return "'\(prefix)…' (\(text.utf8.count) bytes)" }
            prefix.append(character)
        }
        return "'\(prefix)'"
    }

    private static func printed(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
