import ModemManager

/// Text messages through ModemManager: acknowledged once Sms.Send returned and the message's
/// State is SENT. With `reports`, every text asks for a status report and its report is watched
/// for `reportWatch`; each report goes to `onReport` (the lane's queue). A report is information
/// for status only: the acknowledgement, and so retries, never wait for it.
public struct SMSChannel: AlertChannel {
    public let name = AlertChannelName.sms
    let sender: SMSSender
    let reports: SMSDeliveryReports?
    let onReport: @Sendable (Delivery, SMSStatusReport) -> Void
    /// How long a text's report is waited for. An SMSC retries an absent phone for hours or days;
    /// a report after this is of no use to someone in need of help now.
    public static let reportWatch: Duration = .seconds(4 * 3600)

    public init(sender: SMSSender, reports: SMSDeliveryReports? = nil, onReport: @escaping @Sendable (Delivery, SMSStatusReport) -> Void = { _, _ in }) {
        self.sender = sender
        self.reports = reports
        self.onReport = onReport
    }

    public func deliver(_ delivery: Delivery, timeout: Duration) async -> Result<String, ChannelFailure> {
        // Alongside the send, not before it: the alert's first dispatch must not wait for a bus
        // connection of the reports' own (a report comes seconds after SENT at the earliest).
        async let listening = listen()
        do {
            let receipt = try await sender.send(text: delivery.sms, to: delivery.key.target, timeout: timeout, deliveryReport: reports != nil)
            let watched = await listening
            if watched, let reports {
                let onReport = self.onReport
                reports.watch(receipt, for: Self.reportWatch) { onReport(delivery, $0) }
            }
            return .success("SENT through \(receipt.modem) (reference \(receipt.reference))" + (watched ? ", status report requested" : ""))
        } catch {
            return .failure(ChannelFailure("\(error)"))
        }
    }

    /// Whether reports are listened to; without them a text goes all the same.
    private func listen() async -> Bool {
        guard let reports else { return false }
        do {
            try await reports.listen()
            return true
        } catch {
            return false
        }
    }
}
