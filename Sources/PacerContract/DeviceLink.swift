/// `POST /v1/link` (openapi.yaml `DeviceLink`): the one-time code an account's "My devices"
/// page showed, typed on the device (`pacerctl cloud link URL CODE`), and the name the device
/// asks to be known by (nil: the cloud picks one).
public struct DeviceLinkRequest: Codable, Equatable, Sendable {
    public var code: String
    public var name: String?

    public init(code: String, name: String?) {
        self.code = code
        self.name = name
    }
}

/// The answer to a good code (openapi.yaml `DeviceLinkGrant`): the device's own bearer token
/// (shown only now; the cloud keeps its SHA-256), its name there, and the account it now
/// belongs to (display name, or the e-mail address when it has none).
public struct DeviceLinkGrant: Codable, Equatable, Sendable {
    public var token: String
    public var device: String
    public var account: String

    public init(token: String, device: String, account: String) {
        self.token = token
        self.device = device
        self.account = account
    }
}
