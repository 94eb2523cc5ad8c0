/// A message to forward (webhook POST or e-mail), kept until delivered so a restart continues.
public struct OutboxItem: Sendable, Equatable {
    public var id: Int64
    public var channel: String
    public var target: String
    public var payload: String
    public var attempts: Int
    public var deliveredMs: Int64?
    public var lastError: String?
    /// The webhook secret of the item's device: webhooks are signed with it (`WebhookSignature`).
    public var signingSecret: String?

    public init(id: Int64, channel: String, target: String, payload: String, attempts: Int, deliveredMs: Int64?, lastError: String?,
                signingSecret: String? = nil) {
        self.id = id
        self.channel = channel
        self.target = target
        self.payload = payload
        self.attempts = attempts
        self.deliveredMs = deliveredMs
        self.lastError = lastError
        self.signingSecret = signingSecret
    }
}

/// An e-mail for the outbox: sent by the forwarder like alert e-mails, retried until delivered.
public struct OutboxMail: Sendable, Equatable {
    public var to: String
    /// `Forwarding.Email` as JSON.
    public var payload: String

    public init(to: String, payload: String) {
        self.to = to
        self.payload = payload
    }
}
