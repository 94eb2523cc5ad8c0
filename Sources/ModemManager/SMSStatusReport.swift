/// A status report the modem received for a message it sent.
public struct SMSStatusReport: Sendable, Equatable, CustomStringConvertible {
    public var state: SMSDeliveryState
    /// The recipient (TP-RA).
    public var number: String
    /// The TP-Message-Reference of the message it is about.
    public var reference: UInt32
    /// When the SMSC delivered the message or gave up (DischargeTimestamp, ISO 8601 as
    /// ModemManager writes it; empty when the report has none).
    public var dischargeTimestamp: String
    /// The report's own SMS object.
    public var path: String

    public init(state: SMSDeliveryState, number: String, reference: UInt32, dischargeTimestamp: String, path: String) {
        self.state = state
        self.number = number
        self.reference = reference
        self.dischargeTimestamp = dischargeTimestamp
        self.path = path
    }

    /// Numbers are personal: only their last three digits.
    public var description: String {
        "status report for …\(number.suffix(3)) (reference \(reference)): \(state)"
    }

    /// Whether it is about the message `receipt` stands for: the same reference, and the same
    /// number, which the network may write nationally (0347…) where it was sent internationally
    /// (+39347…), so the last nine digits decide.
    public func isAbout(reference other: UInt32, number sentTo: String) -> Bool {
        guard reference == other else { return false }
        let (mine, theirs) = (number.filter(\.isNumber), sentTo.filter(\.isNumber))
        if mine.isEmpty || theirs.isEmpty { return true }
        return mine.suffix(9) == theirs.suffix(9)
    }
}
