import PacerConfig
import PacerCore
import PacerSession
import SOS
import Uplink
import Store
import Synchronization
import Threads

#if canImport(Glibc)
import Glibc
#endif

/// The pipeline's own thread: it takes inputs from the queue in order, feeds them to the
/// RunController (which writes to the store, an fsync every few seconds) and ticks once a second.
/// A thread of its own keeps those blocking writes out of the cooperative pool, which has only
/// two threads on this machine and on a Pi Zero 2.
final class PipelineThread: Sendable {
    let queue = InputQueue()
    /// CLOCK_MONOTONIC of the loop's last turn; the watchdog pings only while it moves.
    private let heartbeatNs = Atomic<UInt64>(0)
    static let tickNs: UInt64 = 1_000_000_000

    var lastTurnNs: UInt64 { heartbeatNs.load(ordering: .relaxed) }

    /// Starts the loop. The controller is built on the thread, from Sendable parts, and never
    /// leaves it; `onStatus` is called there whenever the status line changes.
    func start(configuration: PacerConfiguration, store: RunStore, log: DaemonLog, resumeCandidate: StoredRun?,
               onCue: @escaping @Sendable (Cue, UInt64) -> Void = { _, _ in },
               toSOS: @escaping @Sendable (LaneInput) -> Void = { _ in },
               sosIsAsking: @escaping @Sendable () -> Bool = { false },
               toUplink: @escaping @Sendable (Uplink.Input) -> Void = { _ in },
               onStatus: @escaping @Sendable (DaemonStatus) -> Void) {
        heartbeatNs.store(MonotonicTime.nanoseconds(), ordering: .relaxed)
        let queue = self.queue
        let heartbeat = self
        // Without its pipeline thread pacerd is nothing: failing to start it is fatal.
        try! DetachedThread.start {
            // The clock is read here, in the loop, and nowhere in the controller.
            let controller = RunController(configuration: configuration, store: store, log: log, resumeCandidate: resumeCandidate,
                                           startedNs: MonotonicTime.nanoseconds())
            controller.onStatusChange = onStatus
            controller.onCue = onCue
            controller.toSOS = toSOS
            controller.sosIsAsking = sosIsAsking
            controller.toUplink = toUplink
            controller.tick(nowNs: MonotonicTime.nanoseconds())
            var nextTick = MonotonicTime.nanoseconds() + Self.tickNs
            var running = true
            while running {
                if let input = queue.take(until: min(nextTick, controller.buttonDeadlineNs ?? .max)) {
                    if case .shutdown = input { running = false }
                    controller.handle(input, nowNs: MonotonicTime.nanoseconds())
                }
                let now = MonotonicTime.nanoseconds()
                controller.advanceButtons(nowNs: now)
                if now >= nextTick {
                    controller.tick(nowNs: now)
                    nextTick = now + Self.tickNs
                }
                heartbeat.heartbeatNs.store(now, ordering: .relaxed)
            }
        }
    }
}
