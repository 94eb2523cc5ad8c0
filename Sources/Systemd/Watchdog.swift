internal import CSystemd

/// The service watchdog (WatchdogSec=), as systemd hands it over in `WATCHDOG_USEC` and
/// `WATCHDOG_PID` (sd_watchdog_enabled(3)).
public enum Watchdog {
    /// How often systemd expects WATCHDOG=1, or nil when no watchdog applies to this process
    /// (no WATCHDOG_USEC, or WATCHDOG_PID names another process). Throws when the variables are
    /// malformed.
    public static func interval() throws(SystemdError) -> Duration? {
        var usec: UInt64 = 0
        let result = sd_watchdog_enabled(0, &usec)
        if result < 0 { throw SystemdError(operation: "sd_watchdog_enabled", returned: result) }
        guard result > 0 else { return nil }
        return .microseconds(usec)
    }

    /// Half the interval, as sd_watchdog_enabled(3) recommends, so one late tick is not fatal.
    public static func pingInterval() throws(SystemdError) -> Duration? {
        try interval().map { $0 / 2 }
    }
}
