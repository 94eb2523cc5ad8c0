/// How many rows each table holds.
public struct StoreCounts: Sendable, Equatable {
    public var devices = 0
    public var chunks = 0
    public var runs = 0
    public var positions = 0
    public var alerts = 0
    public var alertMessages = 0
    public var outbox = 0
    public var accounts = 0
    public var sessions = 0
    public var accountTokens = 0
    public var linkCodes = 0
    public var notices = 0
    public var deviceStates = 0
    public var alertAnswers = 0
    public var trailPoints = 0

    public init() {}
}
