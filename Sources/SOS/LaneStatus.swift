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
}
