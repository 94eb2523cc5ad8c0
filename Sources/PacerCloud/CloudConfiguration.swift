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

/// SMTP relay for alert e-mails: plain SMTP to a local relay (the host's MTA does the rest), or
/// STARTTLS with the certificate checked and, optionally, AUTH PLAIN or LOGIN.
public struct MailSettings: Sendable {
    public enum Security: String, Sendable {
        /// No TLS: only for a relay on the same host or a trusted network. No password.
        case plain
        /// STARTTLS, required: a server that does not offer it gets nothing.
        case starttls
    }

    public struct Credentials: Sendable {
        public var username: String
        public var password: String

        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    public var host: String
    public var port: Int
    public var from: String
    public var security: Security
    /// AUTH with these after STARTTLS; never sent without TLS.
    public var credentials: Credentials?
    /// PEM file of the CAs the server's certificate must chain to; nil: the system's.
    public var trustRoots: String?

    public init(host: String, port: Int, from: String, security: Security = .plain, credentials: Credentials? = nil,
                trustRoots: String? = nil) {
        self.host = host
        self.port = port
        self.from = from
        self.security = security
        self.credentials = credentials
        self.trustRoots = trustRoots
    }
}
