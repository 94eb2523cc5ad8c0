/// What a heart-rate strap says about skin contact (0x2A37 flag bits 1–2). The raw values are the
/// names the shared vectors and `pacerctl hr decode --json` use.
public enum SensorContact: String, Sendable, Equatable, CaseIterable {
    /// Field value 0 or 1: the strap cannot tell (bit 1 alone means nothing).
    case notSupported = "not_supported"
    /// Field value 2: the strap can tell, and it is not touching skin.
    case notDetected = "supported_not_detected"
    /// Field value 3: the strap is worn.
    case detected = "detected"

    init(flags: UInt8) {
        switch (flags >> 1) & 0b11 {
        case 0b10: self = .notDetected
        case 0b11: self = .detected
        default: self = .notSupported
        }
    }

    /// `HeartRateSample.contact`: nil when the strap cannot tell.
    public var isDetected: Bool? {
        switch self {
        case .notSupported: nil
        case .notDetected: false
        case .detected: true
        }
    }
}
