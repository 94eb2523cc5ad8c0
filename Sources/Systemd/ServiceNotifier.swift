internal import CSystemd
import Threads

#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how the service is doing (sd_notify(3)): READY, STATUS, WATCHDOG, STOPPING,
/// RELOADING. Each call sends one datagram to `$NOTIFY_SOCKET`; with no such variable (not
/// started by systemd, or not Type=notify) every call does nothing and succeeds.
public struct ServiceNotifier: Sendable {
    public init() {}

    /// Whether a service manager is listening. sd_notify reads the variable on each call, so
    /// this is only a hint, e.g. to skip building STATUS text nobody receives.
    public var isEnabled: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends all `states` in one datagram, so they reach systemd together (READY with a STATUS).
    public func notify(_ states: ServiceState...) throws(SystemdError) {
        try notify(states)
    }

    public func notify(_ states: [ServiceState]) throws(SystemdError) {
        guard !states.isEmpty else { return }
        // unset_environment 0: the daemon keeps notifying for its whole life.
        let result = sd_notify(0, ServiceState.datagram(states))
        if result < 0 { throw SystemdError(operation: "sd_notify", returned: result) }
    }

    public func ready(status: String? = nil) throws(SystemdError) {
        try notify(status.map { [.ready, .status($0)] } ?? [.ready])
    }

    public func status(_ text: String) throws(SystemdError) { try notify(.status(text)) }

    public func watchdog() throws(SystemdError) { try notify(.watchdog) }

    public func stopping(status: String? = nil) throws(SystemdError) {
        try notify(status.map { [.stopping, .status($0)] } ?? [.stopping])
    }

    /// Call `ready()` when the reload is done.
    public func reloading() throws(SystemdError) {
        try notify(.reloading(monotonicMicroseconds: MonotonicTime.microseconds()))
    }
}
