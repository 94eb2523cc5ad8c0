/// What the strap client reports, in order. A notification carries no time of its own: it is
/// stamped with CLOCK_MONOTONIC when the bus thread read it, for the daemon's timebase.
public enum StrapEvent: Sendable, Equatable {
    /// No bluetoothd on the bus, or no adapter: nothing can be found until that changes.
    case unavailable(reason: String)
    /// Looking for the paired strap (discovery on), which is not in range yet.
    case searching(StrapAddress)
    case connectFailed(StrapAddress, reason: String)
    /// Connected, services resolved and Heart Rate Measurement notifying.
    case connected(StrapAddress, name: String)
    /// One Heart Rate Measurement (0x2A37) value, exactly as the strap sent it.
    case notification(StrapAddress, value: [UInt8], receivedNs: UInt64)
    case battery(StrapAddress, percent: Int)
    case disconnected(StrapAddress, reason: String)
}
