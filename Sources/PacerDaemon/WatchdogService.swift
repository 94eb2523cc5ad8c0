import ServiceLifecycle
import SOS
import Systemd
import Threads

/// WATCHDOG=1 at half of WatchdogSec, but only while the pipeline loop and the SOS lane's loop
/// keep turning (the pipeline at least once a second, the lane four times a second, inputs or
/// not). A stuck loop stops the pings and systemd restarts pacerd: an SOS lane that hangs must
/// not go unnoticed while the rest looks alive.
struct WatchdogService: Service {
    let pipeline: PipelineThread
    /// nil: the lane could not start (already logged as critical); only the pipeline is watched.
    let sos: SOSLane?
    let notifier: ServiceNotifier
    let log: DaemonLog
    /// A loop that has not turned for this long is stuck (three ticks).
    static let stuckAfterNs: UInt64 = 3 * PipelineThread.tickNs
    /// The lane ticks every 250 ms; 2 s without a turn is stuck (a delivery's work is on threads
    /// of its own, never on the lane's).
    static let laneStuckAfterNs: UInt64 = 2_000_000_000

    /// Which loop is stuck, worded for the journal; nil when both keep turning.
    static func stuck(nowNs: UInt64, pipelineTurnNs: UInt64, laneTurnNs: UInt64?) -> String? {
        let age = nowNs &- pipelineTurnNs
        if age >= stuckAfterNs { return "the pipeline loop has not turned for \(age / 1_000_000) ms" }
        if let laneTurnNs, case let laneAge = nowNs &- laneTurnNs, laneAge >= laneStuckAfterNs {
            return "the SOS lane has not turned for \(laneAge / 1_000_000) ms"
        }
        return nil
    }

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
            if let stuck = Self.stuck(nowNs: MonotonicTime.nanoseconds(), pipelineTurnNs: pipeline.lastTurnNs, laneTurnNs: sos?.lastTurnNs) {
                if !reportedStuck {
                    reportedStuck = true
                    log(.critical, "daemon", "\(stuck); withholding the watchdog ping so systemd restarts pacerd")
                }
            } else {
                notifier.send(.watchdog)
                reportedStuck = false
            }
            // Interrupted by shutdown: a 5 s nap must not hold up SIGTERM.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
