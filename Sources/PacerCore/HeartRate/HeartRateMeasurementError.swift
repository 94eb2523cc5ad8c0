/// Why a Heart Rate Measurement (0x2A37) value was rejected. `description` is the `reason` that
/// `pacerctl hr decode` prints and the daemon logs.
public enum HeartRateMeasurementError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No flags byte at all.
    case empty
    /// Shorter than its flags byte and heart-rate field (2 bytes, or 3 when flag bit 0 says uint16).
    case truncatedHeartRate(length: Int, needed: Int)
    /// Flag bit 3 announces Energy Expended, but its two bytes are not all there.
    case truncatedEnergyExpended(length: Int, needed: Int)
    /// Flag bit 4 announces RR intervals, but not even one complete interval (2 bytes) follows.
    case missingRRInterval

    public var description: String {
        switch self {
        case .empty:
            "empty value: not even a flags byte"
        case .truncatedHeartRate(let length, let needed):
            "too short for its heart-rate field: \(length) byte\(length == 1 ? "" : "s"), the flags need \(needed)"
        case .truncatedEnergyExpended(let length, let needed):
            "energy-expended flag set but the field is cut short: \(length) bytes, the flags need \(needed)"
        case .missingRRInterval:
            // Worded as in the shared vectors (Nordic's onInvalidDataReceived case).
            "RR-interval flag set but no RR-interval present"
        }
    }
}
