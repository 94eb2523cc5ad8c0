/// One message to one target on one channel, as stored.
public struct Delivery: Sendable, Equatable, Hashable {
    public struct Key: Sendable, Equatable, Hashable, CustomStringConvertible {
        public var messageID: Int64
        public var channel: AlertChannelName
        public var target: String

        public init(messageID: Int64, channel: AlertChannelName, target: String) {
            self.messageID = messageID
            self.channel = channel
            self.target = target
        }

        public var description: String { "\(channel.rawValue):\(target)#\(messageID)" }
    }

    public var key: Key
    public var alertUUID: String
    public var kind: String
    public var test: Bool
    public var sequence: Int
    public var type: String
    public var sms: String
    public var body: String
    public var attempts: Int
    public var lastError: String?
    public var acknowledgedMs: Int64?
    /// A newer follow-up took its place before it was sent: it never will be.
    public var replacedMs: Int64? = nil
    /// SMS only: the MMSmsDeliveryState of the newest status report (`SMSDeliveryState`), and
    /// when it came. Information only: the outbox never sees it.
    public var reportState: UInt32? = nil
    public var reportedMs: Int64? = nil
}
