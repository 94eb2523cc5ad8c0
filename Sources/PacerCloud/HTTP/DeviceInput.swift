import PacerContract

/// The ranges every number and text from a device must be in, checked at the edge so that
/// nothing past it (the stores, the page, the e-mail) can meet a value it cannot hold or print.
/// Each refusal is a 400 naming the field. The ranges are the contract's (PacerContract.WireLimits,
/// documented in openapi.yaml).
enum DeviceInput {
    /// An ISO-8601 time from 1980 to 2200, in milliseconds.
    static func time(_ text: String, _ field: String) throws(APIError) -> Int64 {
        guard let ms = WireTime.milliseconds(text), WireTime.range.contains(ms) else {
            throw JSONInput.invalid(field, "\(WireLimits.quoted(text)) is not an ISO-8601 time from 1980 to 2200 like 2026-05-10T07:30:00.000Z")
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
    static func text(_ value: String?, _ field: String, maxLength: Int = WireLimits.maxTextLength) throws(APIError) {
        guard let value else { return }
        guard value.unicodeScalars.count <= maxLength else { throw JSONInput.invalid(field, "is longer than \(maxLength) characters") }
        guard !value.utf8.contains(0) else { throw JSONInput.invalid(field, "contains a NUL character") }
    }

    private static func printed(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
