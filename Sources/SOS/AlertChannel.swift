/// One way out for alert messages. `deliver` returns once the channel acknowledged the message
/// (SMS state SENT, a 2xx, exit status 0) or failed; it never throws past its timeout.
public protocol AlertChannel: Sendable {
    var name: AlertChannelName { get }
    /// What was acknowledged ("SENT as /org/…/SMS/3", "HTTP 201"), or why not.
    func deliver(_ delivery: Delivery, timeout: Duration) async -> Result<String, ChannelFailure>
}

/// Why one attempt did not go through; it is retried.
public struct ChannelFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// The server answered and refused (HTTP 4xx: a bad token, no such route): retries cannot
    /// help until someone fixes it, so status says so; they go on all the same.
    public var rejectedStatus: Int?
    public init(_ message: String, rejectedStatus: Int? = nil) {
        self.message = message
        self.rejectedStatus = rejectedStatus
    }
    public var description: String { message }
}
