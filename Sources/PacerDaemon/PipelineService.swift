import ServiceLifecycle
import Systemd

/// Owns the pipeline thread's lifetime in the service group: READY=1 once everything has started,
/// and on graceful shutdown STOPPING=1, then the run closed and its last batch written before
/// the process exits. It is first in the group, so it is shut down last, after the inputs.
struct PipelineService: Service {
    let pipeline: PipelineThread
    let notifier: ServiceNotifier
    let log: DaemonLog

    func run() async throws {
        notifier.send(.ready)
        log(.info, "daemon", "ready")
        // Returns when shutdown begins; throws only when the group is cancelled outright.
        try? await gracefulShutdown()
        notifier.send(.stopping, .status("Stopping: closing the run"))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            pipeline.queue.put(.shutdown(done: { done.resume() }))
        }
        log(.info, "daemon", "stopped")
    }
}

extension ServiceNotifier {
    /// sd_notify failures (a vanished NOTIFY_SOCKET) must not stop the daemon; there is nobody
    /// to tell but the journal, and the watchdog covers a manager that cannot hear us.
    func send(_ states: ServiceState...) {
        try? notify(states)
    }
}
