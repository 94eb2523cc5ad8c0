import ModemManager

/// How an SMS's status report reads in status and in the journal.
public enum DeliveryReportText {
    /// For the journal: "delivered", "not delivered: error-not-obtainable", …
    public static func summary(_ state: SMSDeliveryState) -> String {
        switch state.outcome {
        case .delivered: "delivered"
        case .notDelivered: "not delivered: \(state)"
        case .stillTrying: "not delivered yet, the network is still trying (\(state))"
        case .completedUnconfirmed: "handed on by the network, delivery unconfirmed (\(state))"
        case .unknown: "a status report without a delivery state (\(state))"
        }
    }

    /// A delivery as `pacerctl sos` shows it: "pending", "replaced", "acknowledged" (HTTPS, hook),
    /// and for a text "sent", then "delivered" or "not delivered: <reason>" once its report says so.
    public static func status(_ delivery: Delivery) -> String {
        if delivery.replacedMs != nil { return "replaced" }
        guard delivery.acknowledgedMs != nil else { return "pending" }
        guard delivery.key.channel == .sms else { return "acknowledged" }
        guard let raw = delivery.reportState else { return "sent" }
        let state = SMSDeliveryState(rawValue: raw)
        switch state.outcome {
        case .delivered: return "delivered"
        case .notDelivered: return "not delivered: \(state)"
        case .stillTrying, .completedUnconfirmed, .unknown: return "sent"
        }
    }
}
