import PacerCore

/// `[upload]` and `[[privacy_zone]]`: the cloud service runs, positions and alerts go to.
public struct UploadConfiguration: Sendable, Equatable {
    /// "https://pacer.example.org"; nil: nothing is uploaded.
    public var url: String?
    /// The device's bearer token for the service.
    public var token: String?
    /// PEM file of the CA to trust for the service (nil: the system's store).
    public var caFile: String?
    /// A client certificate and key (PEM), for a service that authenticates devices by them.
    public var clientCertificate: String?
    public var clientKey: String?
    /// Plain http://, and only to a loopback address (a local test server).
    public var allowPlainHTTP = false
    /// While a run records and the network is there: the live position every this many seconds
    /// (0: never).
    public var livePositionEverySeconds = 30.0
    /// While the cloud answers: what it has for the device is fetched every this many seconds,
    /// and the device's state (heartbeat) sent every `stateEverySeconds` and on a change.
    public var syncEverySeconds = 60.0
    public var stateEverySeconds = 60.0
    /// false: the sync channel is off (a server that only takes uploads and alerts): nothing is
    /// fetched, no heartbeat is sent and monitors' answers are not asked for.
    public var sync = true
    /// Circles no run point or live position leaves the device from (never applied to alerts).
    public var privacyZones: [PrivacyZone] = []

    public init() {}

    /// http://127.x.x.x, http://[::1] or http://localhost.
    public static func isLoopback(_ url: String) -> Bool {
        let rest = url.drop(while: { $0 != "/" }).dropFirst(2)
        let host = rest.hasPrefix("[") ? String(rest.prefix { $0 != "]" }) + "]" : String(rest.prefix { $0 != "/" && $0 != ":" })
        return host == "localhost" || host == "[::1]" || host.hasPrefix("127.")
    }
}
