import Hummingbird

/// Per-request state: the device the bearer token belongs to, once authenticated.
public struct CloudRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var device: Device?
    /// The signed-in account and its session, from the session cookie (`SessionMiddleware`).
    public var session: StoredSession?
    public var account: Account?
    /// The socket's remote address (nil in router tests, which have no socket).
    public let peerAddress: String?

    public init(source: Source) {
        coreContext = .init(source: source)
        device = nil
        session = nil
        account = nil
        peerAddress = source.channel.remoteAddress?.ipAddress
    }

    /// Bodies the API decodes (JSON) are small; chunks have their own 1 MiB limit.
    public var maxUploadSize: Int { CloudLimits.maxBodyBytes }

    /// The authenticated device; routes behind `DeviceAuthenticator` always have one.
    func requireDevice() throws -> Device {
        guard let device else { throw APIError(.unauthorized, "unauthorized", "this route needs Authorization: Bearer TOKEN") }
        return device
    }
}

enum CloudLimits {
    /// The largest request body: a chunk (or any JSON) over this is refused with 413.
    static let maxBodyBytes = 1 << 20
    /// Chunks per run (numbers 0..<this): 16 days at the device's 600 samples a chunk.
    static let maxChunksPerRun = 100_000
}
