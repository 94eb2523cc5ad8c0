/// A message the modem accepted: ModemManager reported it SENT (the network took it; delivery to
/// the phone is another matter, reported only by a status report).
public struct SMSReceipt: Sendable, Equatable, CustomStringConvertible {
    /// The modem it went through.
    public var modem: String
    /// The SMS object ModemManager made for it (deleted again once sent).
    public var message: String
    public var number: String
    /// The TP-Message-Reference of its last part, as the network acknowledged it.
    public var reference: UInt32
    /// From looking for a modem to ModemManager's SENT.
    public var elapsed: Duration

    public init(modem: String, message: String, number: String, reference: UInt32, elapsed: Duration) {
        self.modem = modem
        self.message = message
        self.number = number
        self.reference = reference
        self.elapsed = elapsed
    }

    public var description: String {
        "SMS to \(number) sent through \(modem) (reference \(reference)) in \(elapsed)"
    }
}
