import Synchronization

/// Counters of a `GPSDClient` since it was created.
public struct GPSDClientStatistics: Sendable, Equatable {
    /// Lines read from gpsd, delivered or not.
    public var linesReceived: UInt64
    /// Lines thrown away because the consumer was `bufferCapacity` events behind.
    public var linesDropped: UInt64
    /// Connections opened (the first one included).
    public var connections: UInt64
}

/// The counters, written by the client's thread and read from anywhere.
final class StatisticsCounters: Sendable {
    let linesReceived = Atomic<UInt64>(0)
    let linesDropped = Atomic<UInt64>(0)
    let connections = Atomic<UInt64>(0)

    var snapshot: GPSDClientStatistics {
        GPSDClientStatistics(
            linesReceived: linesReceived.load(ordering: .relaxed),
            linesDropped: linesDropped.load(ordering: .relaxed),
            connections: connections.load(ordering: .relaxed))
    }
}
