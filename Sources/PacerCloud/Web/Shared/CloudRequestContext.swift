import CloudModel
import Hummingbird

/// Per-request state of every route, and all a public route's handler gets. The identities here
/// are what the middleware found, if anything; only the identity contexts (`DeviceContext`,
/// `SignedInContext`) and the pages that show the same to everyone, signed in or not, read them.
public struct CloudRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The device the bearer token belongs to (`DeviceAuthenticator`).
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
}

/// A device route's context: the device its bearer token belongs to, always there. Made by
/// Hummingbird from the public context after `DeviceAuthenticator` ran (`DeviceAccess`).
struct DeviceContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let device: Device
    let peerAddress: String?

    /// The 401 a device route answers without a device (the authenticator refuses first: this
    /// is the route's own guarantee).
    init(context: CloudRequestContext) throws(APIError) {
        guard let device = context.device else { throw APIError(.unauthorized, "unauthorized", "this route needs Authorization: Bearer TOKEN") }
        coreContext = context.coreContext
        self.device = device
        peerAddress = context.peerAddress
    }

    var maxUploadSize: Int { CloudLimits.maxBodyBytes }
}

/// A signed-in page's context: the account and its live session, always there. Made by
/// Hummingbird from the public context after `SessionMiddleware` ran (`SignedInAccess`).
struct SignedInContext: ChildRequestContext {
    var coreContext: CoreRequestContextStorage
    let account: Account
    let session: StoredSession
    let peerAddress: String?

    /// Without both: 401, the page with the way to log in.
    init(context: CloudRequestContext) throws(WebRefusal) {
        guard let account = context.account, let session = context.session else { throw WebRefusal.signInFirst }
        coreContext = context.coreContext
        self.account = account
        self.session = session
        peerAddress = context.peerAddress
    }

    var maxUploadSize: Int { CloudLimits.maxBodyBytes }
}

enum CloudLimits {
    /// The largest request body: a chunk (or any JSON) over this is refused with 413.
    static let maxBodyBytes = 1 << 20
    /// Chunks per run (numbers 0..<this): 16 days at the device's 600 samples a chunk.
    static let maxChunksPerRun = 100_000
}
