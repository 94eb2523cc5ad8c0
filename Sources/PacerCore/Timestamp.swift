/// A point on the run's timeline: milliseconds since the Unix epoch, UTC.
///
/// GPS time is the timebase (never the system clock, which a Pi without a
/// real-time clock gets wrong at boot). Milliseconds are enough: receivers
/// deliver at most 10 Hz and gpsd reports milliseconds.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public init(seconds: Double) {
        self.milliseconds = Int64((seconds * 1000).rounded())
    }

    public var seconds: Double { Double(milliseconds) / 1000 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    /// Seconds from `earlier` to `self`.
    public func seconds(since earlier: Timestamp) -> Double {
        Double(milliseconds - earlier.milliseconds) / 1000
    }

    public func adding(seconds: Double) -> Timestamp {
        Timestamp(milliseconds: milliseconds + Int64((seconds * 1000).rounded()))
    }

    public var description: String { iso8601 }
}
