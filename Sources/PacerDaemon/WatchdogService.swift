import ServiceLifecycle
import Systemd

/// WATCHDOG=1 at half of WatchdogSec, but only while the pipeline loop keeps turning (it turns at
/// least once a second, fixes or not). A stuck loop stops the pings and systemd restarts pacerd.
struct WatchdogService: Service {
    let pipeline: PipelineThread
    let notifier: ServiceNotifier
    let log: DaemonLog
    /// A loop that has not turned for this long is stuck (three ticks).
    static let stuckAfterNs: UInt64 = 3 * PipelineThread.tickNs

    func run() async throws {
        let interval: Duration
        do {
            guard let half = try Watchdog.pingInterval() else { return }
            interval = half
        } catch {
            log(.warning, "daemon", "the watchdog settings from systemd are unusable (\(error)); not pinging")
            return
        }
        var reportedStuck = false
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let age = Monotonic.nanoseconds() &- pipeline.lastTurnNs
            if age < Self.stuckAfterNs {
                notifier.send(.watchdog)
                reportedStuck = false
            } else if !reportedStuck {
                reportedStuck = true
                log(.critical, "daemon", "the pipeline loop has not turned for \(age / 1_000_000) ms; withholding the watchdog ping so systemd restarts pacerd")
            }
            // Interrupted by shutdown: a 5 s nap must not hold up SIGTERM.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
