/// How many rows each table holds.
public struct StoreCounts: Sendable, Equatable {
    public var devices = 0
    public var chunks = 0
    public var runs = 0
    public var positions = 0
    public var alerts = 0
    public var alertMessages = 0
    public var outbox = 0

    public init() {}
}
