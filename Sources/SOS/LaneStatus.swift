import Synchronization

/// `pacerctl sos status`: what is watched and what was sent.
public struct LaneStatus: Sendable {
    public var monitoring: Bool
    public var lastHeartRate: Int?
    public var lastHeartRateAgeSeconds: Double?
    public var faults: [String]
    public var openAlerts: [String]
    public var channels: [String]
    public var recent: [AlertRecord]
    /// Set when the SOS store could not be read.
    public var storeProblem: String?
    /// The server's last refusal of an alert (HTTP 4xx), until it accepts one.
    public var serverRejects: Int?

    /// "server rejects alerts: 401", or nil.
    public var serverProblem: String? { serverRejects.map(LaneHealth.serverProblem) }
}

/// What the lane's thread publishes for readers that must not wait on its queue (`pacerctl
/// status` answers from the control service).
public final class LaneHealth: Sendable {
    private let rejects = Mutex<Int?>(nil)

    public init() {}

    /// The HTTP status of the server's last refusal of an alert, until it accepts one.
    public var serverRejects: Int? { rejects.withLock { $0 } }
    /// "server rejects alerts: 401", or nil.
    public var serverProblem: String? { serverRejects.map(Self.serverProblem) }

    func setServerRejects(_ status: Int?) { rejects.withLock { $0 = status } }

    static func serverProblem(_ status: Int) -> String { "server rejects alerts: \(status)" }
}
