/// Which battery `pacerd` watches (`[power] battery`): a power supply under
/// /sys/class/power_supply.
public enum BatteryMonitoring: Sendable, Equatable {
    /// The first supply whose type is Battery; none found means no monitoring.
    case automatic
    /// This supply by its sysfs name, e.g. "BAT0" or "axp20x-battery".
    case supply(String)
    /// No battery monitoring (a device on mains or a power bank that reports nothing).
    case disabled
}
