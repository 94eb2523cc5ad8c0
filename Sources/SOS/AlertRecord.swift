/// A stored alert with every delivery of every message, for status.
public struct AlertRecord: Sendable, Equatable {
    public var uuid: String
    public var kind: String
    public var test: Bool
    public var state: String
    public var raisedMs: Int64
    public var firstOutOfRangeMs: Int64?
    public var heartRate: Int?
    public var latitude: Double?
    public var longitude: Double?
    public var deliveries: [Delivery]
    /// When its voice call was placed (`[sos] call`), nil: none was.
    public var callPlacedMs: Int64? = nil
    /// The call's newest state: "placing", "dialing", "active", "terminated", "failed: …".
    public var callState: String? = nil
}
