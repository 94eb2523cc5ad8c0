import ModemManager

/// Text messages through ModemManager: acknowledged once Sms.Send returned and the message's
/// State is SENT.
public struct SMSChannel: AlertChannel {
    public let name = AlertChannelName.sms
    let sender: SMSSender

    public init(sender: SMSSender) {
        self.sender = sender
    }

    public func deliver(_ delivery: Delivery, timeout: Duration) async -> Result<String, ChannelFailure> {
        do {
            let receipt = try await sender.send(text: delivery.sms, to: delivery.key.target, timeout: timeout)
            return .success("SENT through \(receipt.modem) (reference \(receipt.reference))")
        } catch {
            return .failure(ChannelFailure("\(error)"))
        }
    }
}
