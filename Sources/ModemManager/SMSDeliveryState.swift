/// MMSmsDeliveryState: what a status report says of a sent message (3GPP TS 23.040 TP-Status,
/// and 3GPP2's cause codes from 0x200). Unknown values keep their number.
public struct SMSDeliveryState: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    public static let completedReceived = SMSDeliveryState(rawValue: 0x00)
    /// ModemManager's value while no status report was read.
    public static let unknown = SMSDeliveryState(rawValue: 0x100)

    /// What the report means for the person the message was for.
    public enum Outcome: Sendable, Equatable {
        /// The phone has it.
        case delivered
        /// The SMSC is done with it but cannot confirm the phone has it (forwarded, replaced).
        case completedUnconfirmed
        /// A temporary error; the SMSC is still trying: another report may follow.
        case stillTrying
        /// The SMSC gave up: it will not arrive.
        case notDelivered
        case unknown
    }

    public var outcome: Outcome {
        switch rawValue {
        case 0x00: .delivered
        case 0x01...0x1F: .completedUnconfirmed
        case 0x20...0x3F, 0x300...0x3FF: .stillTrying
        // 0x40…: permanent errors; 0x60…: temporary errors after which the SMSC stops trying.
        case 0x40...0x7F, 0x200...0x2FF: .notDelivered
        default: .unknown
        }
    }

    /// No other report will follow: the message is delivered, or never will be.
    public var isFinal: Bool {
        switch outcome {
        case .delivered, .completedUnconfirmed, .notDelivered: true
        case .stillTrying, .unknown: false
        }
    }

    /// ModemManager's names (mm_sms_delivery_state_get_string), e.g. "error-not-obtainable".
    public var description: String {
        if let name = Self.names[rawValue] { return name }
        switch rawValue {
        case 0x200...0x2FF: return "cdma-error-0x\(String(rawValue, radix: 16))"
        case 0x300...0x3FF: return "cdma-temporary-error-0x\(String(rawValue, radix: 16))"
        default: return "0x\(String(rawValue, radix: 16))"
        }
    }

    private static let names: [UInt32: String] = [
        0x00: "completed-received", 0x01: "completed-forwarded-unconfirmed", 0x02: "completed-replaced-by-sc",
        0x20: "temporary-error-congestion", 0x21: "temporary-error-sme-busy", 0x22: "temporary-error-no-response-from-sme",
        0x23: "temporary-error-service-rejected", 0x24: "temporary-error-qos-not-available", 0x25: "temporary-error-in-sme",
        0x40: "error-remote-procedure", 0x41: "error-incompatible-destination", 0x42: "error-connection-rejected",
        0x43: "error-not-obtainable", 0x44: "error-qos-not-available", 0x45: "error-no-interworking-available",
        0x46: "error-validity-period-expired", 0x47: "error-deleted-by-originating-sme", 0x48: "error-deleted-by-sc-administration",
        0x49: "error-message-does-not-exist",
        0x60: "temporary-fatal-error-congestion", 0x61: "temporary-fatal-error-sme-busy", 0x62: "temporary-fatal-error-no-response-from-sme",
        0x63: "temporary-fatal-error-service-rejected", 0x64: "temporary-fatal-error-qos-not-available", 0x65: "temporary-fatal-error-in-sme",
        0x100: "unknown",
    ]
}
