/// One alert message to record, with what to create if it is the first of its alert.
public struct AlertMessageInput: Sendable {
    public var device: String
    public var alertID: String
    public var sequence: Int
    public var type: String
    public var kind: String
    public var test: Bool
    /// The message's JSON as received.
    public var json: String
    public var receivedMs: Int64
    /// The page secret, used only when this message creates the alert.
    public var newSecret: String
    /// Outbox items to add when (and only when) the message is new; their payload is completed
    /// with the alert's secret by `payload(secret)`.
    public var forward: [ForwardTarget]

    public init(device: String, alertID: String, sequence: Int, type: String, kind: String, test: Bool, json: String,
                receivedMs: Int64, newSecret: String, forward: [ForwardTarget]) {
        self.device = device
        self.alertID = alertID
        self.sequence = sequence
        self.type = type
        self.kind = kind
        self.test = test
        self.json = json
        self.receivedMs = receivedMs
        self.newSecret = newSecret
        self.forward = forward
    }
}

/// Where a new alert message is forwarded: a channel ("webhook", "email") and its target.
public struct ForwardTarget: Sendable {
    public var channel: String
    public var target: String
    /// Makes the payload once the alert's page secret is known (it may be the stored one).
    public var payload: @Sendable (_ secret: String) -> String

    public init(channel: String, target: String, payload: @escaping @Sendable (_ secret: String) -> String) {
        self.channel = channel
        self.target = target
        self.payload = payload
    }
}

/// What recording an alert message did.
public enum AlertRecordResult: Sendable, Equatable {
    /// A message not seen before, stored (and forwarded).
    case created(secret: String)
    /// This (alert_id, sequence) was already stored: nothing changed.
    case repeated(secret: String)
    /// This (alert_id, sequence) was already stored with a different body: nothing changed.
    case conflict(secret: String)

    public var secret: String {
        switch self {
        case .created(let secret), .repeated(let secret), .conflict(let secret): secret
        }
    }
}
