import Threads

/// CLOCK_MONOTONIC in nanoseconds: the one clock the daemon reads for intervals.
enum Monotonic {
    static func nanoseconds() -> UInt64 { MonotonicTime.nanoseconds() }
}
