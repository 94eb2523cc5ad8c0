/// A signed-in browser: the SHA-256 of the cookie's id (the id itself is never stored, so a
/// stolen database signs nobody in), its CSRF token, and the times expiry is judged by.
public struct StoredSession: Sendable, Equatable {
    public var idHash: String
    public var accountID: String
    /// The token every form of this session carries (`CSRF`).
    public var csrf: String
    public var createdMs: Int64
    public var seenMs: Int64

    public init(idHash: String, accountID: String, csrf: String, createdMs: Int64, seenMs: Int64) {
        self.idHash = idHash
        self.accountID = accountID
        self.csrf = csrf
        self.createdMs = createdMs
        self.seenMs = seenMs
    }
}

/// A single-use token of an e-mailed link, by its SHA-256.
public struct AccountToken: Sendable, Equatable {
    public var hash: String
    public var accountID: String
    /// `AccountToken.confirm` or `.reset`.
    public var purpose: String
    public var expiresMs: Int64

    public init(hash: String, accountID: String, purpose: String, expiresMs: Int64) {
        self.hash = hash
        self.accountID = accountID
        self.purpose = purpose
        self.expiresMs = expiresMs
    }

    public static let confirm = "confirm"
    public static let reset = "reset"
}
