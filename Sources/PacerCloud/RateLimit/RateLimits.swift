/// pacer-cloud's limits (README: Rate limits). Alerts are never limited: an SOS must always get
/// through. nil turns a limit off.
public struct RateLimits: Sendable, Equatable {
    /// Alert pages (`GET /a/{secret}`) per client address. The page refreshes itself every 10 s,
    /// so 60 a minute lets ten people behind one address watch it, while guessing secrets (192
    /// random bits) runs at one a second instead of thousands.
    public var alertPagePerAddress: RateLimit?
    /// Uploads (`PUT` of chunks, summaries and the position) per device. A device coming back
    /// from 24 h offline sends ~150 chunks, their summaries and a position as fast as answers
    /// come: all of that fits in the burst of 600, and 10 a second refill it.
    public var uploadPerDevice: RateLimit?
    /// Uploads per client address, before the token is looked at (so guessed tokens are limited
    /// too); twice a device's, since several devices may share an address behind a NAT.
    public var uploadPerAddress: RateLimit?
    /// Log-in attempts per account (by the address typed, whether or not it has an account):
    /// 10, then one every 90 s. Guessing one person's password from many addresses stays slow.
    public var loginPerAccount: RateLimit?
    /// Log-in attempts per client address: the same, so one address cannot try a common
    /// password against many accounts.
    public var loginPerAddress: RateLimit?
    /// Device link attempts (`POST /v1/link`) per client address: 10, then one a minute. A
    /// person mistyping a code has tries to spare; guessing 40-bit codes gets nowhere.
    public var linkPerAddress: RateLimit?

    public static let defaults = RateLimits(
        alertPagePerAddress: RateLimit(burst: 60, period: .seconds(60)),
        uploadPerDevice: RateLimit(burst: 600, period: .seconds(60)),
        uploadPerAddress: RateLimit(burst: 1200, period: .seconds(60)))

    public init(alertPagePerAddress: RateLimit?, uploadPerDevice: RateLimit?, uploadPerAddress: RateLimit?,
                loginPerAccount: RateLimit? = RateLimit(burst: 10, period: .seconds(900)),
                loginPerAddress: RateLimit? = RateLimit(burst: 10, period: .seconds(900)),
                linkPerAddress: RateLimit? = RateLimit(burst: 10, period: .seconds(600))) {
        self.alertPagePerAddress = alertPagePerAddress
        self.uploadPerDevice = uploadPerDevice
        self.uploadPerAddress = uploadPerAddress
        self.loginPerAccount = loginPerAccount
        self.loginPerAddress = loginPerAddress
        self.linkPerAddress = linkPerAddress
    }
}
