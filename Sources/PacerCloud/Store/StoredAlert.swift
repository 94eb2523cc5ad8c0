/// An alert and its newest message.
public struct StoredAlert: Sendable, Equatable {
    public var alertID: String
    public var device: String
    public var secret: String
    public var state: AlertState
    public var kind: String
    public var test: Bool
    public var createdMs: Int64
    public var latestSequence: Int
    /// The newest message's JSON, as received.
    public var latestJSON: String

    public init(alertID: String, device: String, secret: String, state: AlertState, kind: String, test: Bool,
                createdMs: Int64, latestSequence: Int, latestJSON: String) {
        self.alertID = alertID
        self.device = device
        self.secret = secret
        self.state = state
        self.kind = kind
        self.test = test
        self.createdMs = createdMs
        self.latestSequence = latestSequence
        self.latestJSON = latestJSON
    }
}
