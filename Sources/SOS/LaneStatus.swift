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
    /// The newest alert's voice call (`[sos] call`), nil: none placed since pacerd started.
    public var call: LaneCallStatus? = nil
    /// The heart signal as the SOS rules see it: "live", "absent", or an abnormal reason
    /// (`AbnormalSignal`, e.g. "silent", "frozen").
    public var signal = "absent"
    /// The body's motion from the fixes: "at_pace", "slowing", "stopped", "unknown".
    public var motion = "unknown"
    /// "Are you OK?" waits for an answer.
    public var asking = false

    /// "server rejects alerts: 401", or nil.
    public var serverProblem: String? { serverRejects.map(LaneHealth.serverProblem) }
}

/// What the lane's thread publishes for readers that must not wait on its queue (`pacerctl
/// status` answers from the control service).
public final class LaneHealth: Sendable {
    private let rejects = Mutex<Int?>(nil)
    private let newestCall = Mutex<LaneCallStatus?>(nil)
    private let open = Mutex<Set<String>>([])

    public init() {}

    /// The HTTP status of the server's last refusal of an alert, until it accepts one.
    public var serverRejects: Int? { rejects.withLock { $0 } }
    /// "server rejects alerts: 401", or nil.
    public var serverProblem: String? { serverRejects.map(Self.serverProblem) }

    func setServerRejects(_ status: Int?) { rejects.withLock { $0 = status } }

    /// The newest alert's voice call, nil: none placed since pacerd started.
    public var call: LaneCallStatus? { newestCall.withLock { $0 } }

    func setCall(_ call: LaneCallStatus?) { newestCall.withLock { $0 = call } }

    /// The UUIDs of the alerts open now (monitors' answers are said again only while theirs is).
    public var openAlerts: Set<String> { open.withLock { $0 } }

    func setOpenAlerts(_ alerts: Set<String>) { open.withLock { $0 = alerts } }

    static func serverProblem(_ status: Int) -> String { "server rejects alerts: \(status)" }
}

/// An alert's voice call as `pacerctl sos` and `status` show it.
public struct LaneCallStatus: Sendable, Equatable {
    public var alertUUID: String
    /// "placing", "dialing", "ringing", "active", "held", "ended", "failed: …".
    public var state: String

    public init(alertUUID: String, state: String) {
        self.alertUUID = alertUUID
        self.state = state
    }
}
