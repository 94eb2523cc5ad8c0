/// A person's account: what they log in with, and the name and timezone their pages and their
/// devices use. The password is never stored, only its bcrypt hash (`Passwords`).
public struct Account: Sendable, Equatable {
    public var id: String
    /// Normalised (`EmailAddress.normalized`): the unique key people log in with.
    public var email: String
    /// Whether the address was confirmed (its link followed, or `pacer-cloud user confirm`).
    public var confirmed: Bool
    public var displayName: String
    /// An IANA zone name ("Europe/Rome").
    public var timezone: String
    public var createdAt: String
    /// The runner's maximum heart rate, which the zones of the run pages use; nil: not set
    /// (`HeartRateZones.defaultMaximum` then).
    public var maxHeartRate: Int?
    /// Kilometres or miles, on every page and e-mail and on the device (its sync profile).
    public var units: DistanceUnit

    public init(id: String, email: String, confirmed: Bool, displayName: String, timezone: String, createdAt: String,
                maxHeartRate: Int? = nil, units: DistanceUnit = .km) {
        self.maxHeartRate = maxHeartRate
        self.units = units
        self.id = id
        self.email = email
        self.confirmed = confirmed
        self.displayName = displayName
        self.timezone = timezone
        self.createdAt = createdAt
    }
}

/// An account as the store holds it: with its password hash, which only log-in reads.
public struct StoredAccount: Sendable, Equatable {
    public var account: Account
    public var passwordHash: String

    public init(account: Account, passwordHash: String) {
        self.account = account
        self.passwordHash = passwordHash
    }
}
