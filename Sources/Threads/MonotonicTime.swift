#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC: the one clock for intervals and deadlines. It never jumps when the system
/// clock is set (a Pi without RTC sets it late, from NTP or GPS).
public enum MonotonicTime {
    public static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// A non-negative duration as poll(2)'s millisecond timeout, saturating.
    public static func pollMilliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return Int32.max }
        return Int32(clamping: total.partialValue + attoseconds / 1_000_000_000_000_000)
    }
}
