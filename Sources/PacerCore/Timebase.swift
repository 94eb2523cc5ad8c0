/// One timebase for every sample: GPS time where a fix gives it, carried forward between fixes on
/// the monotonic clock. A Pi often has no real-time clock, so the system clock can be years off at
/// boot; GPS time is right, and the monotonic clock never jumps.
///
/// Pure: the caller reads the monotonic clock and passes nanoseconds in.
public struct Timebase: Sendable, Equatable {
    private var anchor: (gps: Timestamp, monotonicNs: UInt64)?

    public init() {}

    public var isSynchronized: Bool { anchor != nil }

    /// A fix with GPS time `time` arrived at `monotonicNs`.
    public mutating func synchronize(gps time: Timestamp, monotonicNs: UInt64) {
        anchor = (time, monotonicNs)
    }

    /// The time on the GPS timeline at `monotonicNs`, or nil before the first fix.
    public func time(atMonotonic monotonicNs: UInt64) -> Timestamp? {
        guard let anchor else { return nil }
        let elapsedMs = (Int64(bitPattern: monotonicNs &- anchor.monotonicNs)) / 1_000_000
        return Timestamp(milliseconds: anchor.gps.milliseconds + elapsedMs)
    }

    public static func == (a: Timebase, b: Timebase) -> Bool {
        a.anchor?.gps == b.anchor?.gps && a.anchor?.monotonicNs == b.anchor?.monotonicNs
    }
}
