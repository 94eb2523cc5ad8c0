/// What the live gpsd client reports, in the order it happened. Instants are CLOCK_MONOTONIC
/// nanoseconds: the daemon's timebase carries GPS time forward between fixes on that clock, and
/// it never jumps when the system clock is set.
public enum GPSDEvent: Sendable, Equatable {
    /// A connection to gpsd is open and the WATCH request (JSON reports) was sent.
    case connected(atNs: UInt64)
    /// One line exactly as gpsd sent it, without its CR LF; decode it with `GPSDecoder`, as
    /// replay does, so live equals replay.
    case line(String, receivedNs: UInt64)
    /// gpsd cannot be reached (the first failed attempt) or the connection was lost. Reported
    /// once per loss, not per retry; the client keeps retrying until `.connected` follows.
    case disconnected(reason: String, atNs: UInt64)
    /// The consumer fell `bufferCapacity` events behind and `count` lines were thrown away at
    /// this point of the stream (counted since the previous report).
    case linesDropped(count: Int, atNs: UInt64)
}
