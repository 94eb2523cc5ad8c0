#if canImport(Glibc)
import Glibc
#endif

// The only two clocks the code reads, and the only place that calls clock_gettime
// (tools/lint-sources checks it).

/// CLOCK_MONOTONIC: the one clock for intervals and deadlines. It never jumps when the system
/// clock is set (a Pi without RTC sets it late, from NTP or GPS). The kernel stamps evdev key
/// events and sd_notify's MONOTONIC_USEC on it too.
public enum MonotonicTime {
    public static func nanoseconds() -> UInt64 {
        let now = read(CLOCK_MONOTONIC)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    public static func microseconds() -> UInt64 { nanoseconds() / 1_000 }

    /// The same reading as a `Duration`, the type of an evdev event's `time`.
    public static func now() -> Duration { .nanoseconds(Int64(nanoseconds())) }

    /// A non-negative duration as poll(2)'s millisecond timeout, saturating.
    public static func pollMilliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return Int32.max }
        return Int32(clamping: total.partialValue + attoseconds / 1_000_000_000_000_000)
    }
}

/// CLOCK_REALTIME: the date, only for what is shown or sent as one (a run's wall time, an alert's
/// time). It may be wrong until NTP or GPS has set it; never measure an interval with it.
public enum WallClock {
    /// Milliseconds since the Unix epoch.
    public static func milliseconds() -> Int64 {
        let now = read(CLOCK_REALTIME)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

private func read(_ clock: clockid_t) -> timespec {
    var now = timespec()
    clock_gettime(clock, &now)
    return now
}
