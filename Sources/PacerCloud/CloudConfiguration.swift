/// How a pacer-cloud instance runs; everything else is in the database.
public struct CloudConfiguration: Sendable {
    /// The base of alert page links ("https://cloud.example.org"); when nil, taken from the
    /// request's Host header as http://HOST.
    public var publicURL: String?
    /// Where alert e-mails go out; nil: no e-mail forwarding.
    public var mail: MailSettings?
    /// How often the outbox is looked at for due forwards (a new alert also wakes it).
    public var outboxPoll: Duration
    /// The longest wait between two attempts of one forward.
    public var retryMax: Duration

    public init(publicURL: String? = nil, mail: MailSettings? = nil, outboxPoll: Duration = .seconds(2), retryMax: Duration = .seconds(300)) {
        self.publicURL = publicURL
        self.mail = mail
        self.outboxPoll = outboxPoll
        self.retryMax = retryMax
    }
}

/// SMTP relay for alert e-mails: plain SMTP, no authentication (a local relay such as the
/// host's MTA does the rest).
public struct MailSettings: Sendable {
    public var host: String
    public var port: Int
    public var from: String

    public init(host: String, port: Int, from: String) {
        self.host = host
        self.port = port
        self.from = from
    }
}
