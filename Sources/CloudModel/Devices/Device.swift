/// A device allowed to talk to the API. Its bearer token is never stored, only its SHA-256.
public struct Device: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    /// Where its alerts are e-mailed, if anywhere.
    public var email: String?
    /// Where its alerts are POSTed, if anywhere.
    public var webhook: String?
    public var createdAt: String
    /// Its token was revoked (`pacer-cloud device revoke`): it cannot authenticate any more.
    public var revoked = false
    /// The account it belongs to (`pacer-cloud device assign`), and with it its runs and alerts;
    /// nil for a device no account owns yet.
    public var accountID: String?
    /// When it last authenticated (milliseconds since 1970, to the minute); nil: not since schema 6.
    public var lastSeenMs: Int64?

    /// What a revoked device's token hash starts with: no SHA-256 in hex does.
    public static let revokedTokenMark = "revoked:"

    public init(id: String, name: String, email: String?, webhook: String?, createdAt: String) {
        self.id = id
        self.name = name
        self.email = email
        self.webhook = webhook
        self.createdAt = createdAt
    }
}
