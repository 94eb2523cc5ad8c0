/// Fixed-decimal formatting without Foundation: `format(45.5, decimals: 7)` is `"45.5000000"`.
/// Rounds half away from zero at the last decimal; never prints `-0`, exponents, `nan` or `inf`.
public enum FixedDecimal {
    private static let powersOfTen: [Double] = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9]

    /// The largest magnitude formatted; beyond it (or for non-finite values) `format` returns nil.
    public static let limit = 1e15

    /// `value` with exactly `decimals` (0…9) digits after the point, or nil when `value` is not
    /// finite or its magnitude is `limit` or more.
    public static func format(_ value: Double, decimals: Int) -> String? {
        guard let (negative, whole, fraction) = split(value, decimals: decimals) else { return nil }
        return render(negative: negative, whole: whole, fraction: fraction, decimals: decimals)
    }

    /// `value` × 10^decimals rounded exactly as `format` rounds it, so a number stored as this
    /// integer prints back with the same digits. nil where `format` gives nil.
    public static func scaled(_ value: Double, decimals: Int) -> Int64? {
        guard let (negative, whole, fraction) = split(value, decimals: decimals) else { return nil }
        let magnitude = Int64(whole) * Int64(powersOfTen[decimals]) + Int64(fraction)
        return negative ? -magnitude : magnitude
    }

    /// Sign, integer part and rounded fraction scaled by 10^decimals (always < 10^decimals).
    public static func split(_ value: Double, decimals: Int) -> (negative: Bool, whole: UInt64, fraction: UInt64)? {
        precondition((0...9).contains(decimals), "FixedDecimal: decimals must be 0...9")
        guard value.isFinite, value.magnitude < limit else { return nil }
        let magnitude = value.magnitude
        let wholePart = magnitude.rounded(.towardZero)
        let scale = powersOfTen[decimals]
        // `magnitude - wholePart` is exact, so the fraction only meets one rounding (the product).
        var fraction = UInt64(((magnitude - wholePart) * scale).rounded(.toNearestOrAwayFromZero))
        var whole = UInt64(wholePart)
        if fraction >= UInt64(scale) {
            fraction -= UInt64(scale)
            whole += 1
        }
        return (value < 0 && (whole != 0 || fraction != 0), whole, fraction)
    }

    public static func render(negative: Bool, whole: UInt64, fraction: UInt64, decimals: Int) -> String {
        var text = negative ? "-" : ""
        text += String(whole)
        if decimals > 0 {
            text += "."
            let digits = String(fraction)
            if digits.count < decimals { text += String(repeating: "0", count: decimals - digits.count) }
            text += digits
        }
        return text
    }
}
