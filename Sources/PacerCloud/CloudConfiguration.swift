import CloudModel
import Foundation
import Threads

/// How a pacer-cloud instance runs; everything else is in the database.
public struct CloudConfiguration: Sendable {
    /// The base of alert page links ("https://cloud.example.org"), the only one: a request's Host
    /// header is never used, since the client chooses it. May be nil only on a loopback bind,
    /// where links name the bound address (`linkBase`).
    public var publicURL: String?
    /// Where alert e-mails go out; nil: no e-mail forwarding.
    public var mail: MailSettings?
    /// How often the outbox is looked at for due forwards (a new alert also wakes it).
    public var outboxPoll: Duration
    /// The longest wait between two attempts of one forward.
    public var retryMax: Duration
    /// Limits on alert pages and uploads (never on alerts).
    public var rateLimits: RateLimits
    /// Reverse proxies whose X-Forwarded-For is believed (IP addresses, normalized).
    public var trustedProxies: Set<String>
    /// How long a web session lasts.
    public var sessions: SessionSettings
    /// bcrypt's cost for new password hashes (`Passwords.defaultCost`).
    public var passwordCost: UInt8
    /// Dashboards, invitations and answers (issue 22).
    public var monitoring: MonitorSettings
    /// The run page's map tiles and script files.
    public var map: MapSettings
    /// Connection caps, client timeouts, long-polls and streams per device and session (issue 31).
    public var connections: ConnectionLimits = .defaults
    /// What this instance counts for `/metrics` (CloudMetrics: gauges other code updates too).
    public var metrics = CloudMetrics()
    /// Where `/metrics` is served: nowhere unless a token or a listen address is set.
    public var metricsAccess = MetricsSettings()
    /// Races' frames, position batches and spectator streams (#34).
    public var races = RaceSettings()

    public init(publicURL: String? = nil, mail: MailSettings? = nil, outboxPoll: Duration = .seconds(2), retryMax: Duration = .seconds(300),
                rateLimits: RateLimits = .defaults, trustedProxies: Set<String> = [], sessions: SessionSettings = .defaults,
                passwordCost: UInt8 = Passwords.defaultCost, monitoring: MonitorSettings = .defaults, map: MapSettings = .defaults) {
        self.monitoring = monitoring
        self.map = map
        self.sessions = sessions
        self.passwordCost = passwordCost
        self.publicURL = publicURL
        self.mail = mail
        self.outboxPoll = outboxPoll
        self.retryMax = retryMax
        self.rateLimits = rateLimits
        self.trustedProxies = trustedProxies
    }

    /// The base of alert page links for a server bound to `host`:`port`: the public URL (without
    /// a trailing slash), or on a loopback bind without one, http:// and the bound address.
    /// Throws when the public URL is no http(s) URL, or when it is missing on any other bind.
    public func linkBase(host: String, port: Int) throws(ConfigurationError) -> String {
        if let publicURL {
            guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                  url.host?.isEmpty == false, url.query == nil, url.fragment == nil, url.user == nil,
                  !publicURL.contains(where: { $0.isWhitespace || $0.isNewline }) else {
                throw ConfigurationError("--public-url '\(publicURL)' is not an http(s) URL like https://cloud.example.org")
            }
            return publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        }
        guard Self.isLoopback(host) else {
            throw ConfigurationError(
                "refusing to listen on \(host) without --public-url (public-url in the config file), e.g. --public-url https://cloud.example.org: "
                    + "it is not a loopback address, and alert page links are built only from the public URL, never from a request's Host header")
        }
        return "http://" + (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }

    /// 127.0.0.0/8, ::1 and localhost: only this machine can connect.
    static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        guard let address = ClientAddress.normalized(host) else { return false }
        return address == "::1" || (address.hasPrefix("127.") && !address.contains(":"))
    }
}

/// Web session lifetimes (OWASP ASVS 3.3.2): a session ends after `idle` without a request, and
/// after `absolute` however busy. README: Accounts.
public struct SessionSettings: Sendable, Equatable {
    public var idle: Duration
    public var absolute: Duration
    /// How long the links of confirmation and reset e-mails work.
    public var confirmLinkLifetime: Duration
    public var resetLinkLifetime: Duration

    public static let defaults = SessionSettings(idle: .seconds(30 * 60), absolute: .seconds(12 * 3600))

    /// Milliseconds since 1970 by the system's clock: what sessions and links expire by (tests
    /// pass their own).
    public static let systemClock: @Sendable () -> Int64 = { WallClock.milliseconds() }

    public init(idle: Duration, absolute: Duration, confirmLinkLifetime: Duration = .seconds(48 * 3600),
                resetLinkLifetime: Duration = .seconds(3600)) {
        self.idle = idle
        self.absolute = absolute
        self.confirmLinkLifetime = confirmLinkLifetime
        self.resetLinkLifetime = resetLinkLifetime
    }
}

/// A configuration pacer-cloud refuses to start with; the message says what to change.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
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

/// Where the run page's map tiles and its script libraries come from.
public struct MapSettings: Sendable {
    /// A Leaflet tile URL template ("https://tile.openstreetmap.org/{z}/{x}/{y}.png"); nil: no
    /// tiles, the track on a plain background.
    public var tileURL: String?
    /// The tiles' attribution, as plain text (their licence usually requires it).
    public var tileAttribution: String
    /// Where Debian's libjs-leaflet and libjs-chart.js put their files.
    public var assetsDirectory: String

    public static let defaultTileURL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    public static let defaultAttribution = "© OpenStreetMap contributors"
    public static let defaults = MapSettings(tileURL: defaultTileURL, tileAttribution: defaultAttribution,
                                             assetsDirectory: "/usr/share/javascript")

    public init(tileURL: String?, tileAttribution: String, assetsDirectory: String) {
        self.tileURL = tileURL
        self.tileAttribution = tileAttribution
        self.assetsDirectory = assetsDirectory
    }

    /// The template's problem, or nil when a browser can load tiles from it.
    public static func problem(tileURL: String) -> String? {
        guard let components = URLComponents(string: tileURL.replacingOccurrences(of: "{", with: "%7B").replacingOccurrences(of: "}", with: "%7D")),
              ["http", "https"].contains(components.scheme?.lowercased() ?? ""), let host = components.host, !host.isEmpty else {
            return "--tile-url '\(tileURL.prefix(120))' is not an http(s) URL template (or 'none')"
        }
        for field in ["{z}", "{x}", "{y}"] where !tileURL.contains(field) {
            return "--tile-url '\(tileURL.prefix(120))' has no \(field)"
        }
        return nil
    }

    /// What the page's Content-Security-Policy allows images from: the tile server's origin
    /// ({s} subdomains as a wildcard); nil with no tiles.
    var tileOrigin: String? {
        guard let tileURL, let schemeEnd = tileURL.range(of: "://") else { return nil }
        let rest = tileURL[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" }.replacingOccurrences(of: "{s}", with: "*")
        return tileURL[..<schemeEnd.upperBound].lowercased() + authority
    }
}
