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

/// The pipeline's own thread: it takes inputs from the queue in order, hands them to the run
/// session's executor (which writes to the store, an fsync every few seconds) and ticks once a
/// second. A thread of its own keeps those blocking writes out of the cooperative pool, which has
/// only two threads on this machine and on a Pi Zero 2.
final class PipelineThread: Sendable {
    let queue = InputQueue()
    /// CLOCK_MONOTONIC of the loop's last turn; the watchdog pings only while it moves.
    private let heartbeatNs = Atomic<UInt64>(0)
    static let tickNs: UInt64 = 1_000_000_000

    var lastTurnNs: UInt64 { heartbeatNs.load(ordering: .relaxed) }

    /// Starts the loop. The executor is built on the thread, from Sendable parts, and never
    /// leaves it; `onStatus` is called there whenever the status line changes.
    func start(configuration: PacerConfiguration, store: RunStore, log: DaemonLog, resumeCandidate: StoredRun?,
               onCue: @escaping @Sendable (Cue, UInt64) -> Void = { _, _ in },
               toSOS: @escaping @Sendable (LaneInput) -> Void = { _ in },
               sosIsAsking: @escaping @Sendable () -> Bool = { false },
               toUplink: @escaping @Sendable (Uplink.Input) -> Void = { _ in },
               heartRateOutsideRun: @escaping @Sendable (Int, Int64) -> Void = { _, _ in },
               onStatus: @escaping @Sendable (DaemonStatus) -> Void) {
        heartbeatNs.store(MonotonicTime.nanoseconds(), ordering: .relaxed)
        let queue = self.queue
        let heartbeat = self
        // Without its pipeline thread pacerd is nothing: failing to start it is fatal.
        try! DetachedThread.start {
            let executor = RunSessionExecutor(configuration: configuration, store: store, log: log, resumeCandidate: resumeCandidate,
                                              startedNs: MonotonicTime.nanoseconds())
            executor.onStatusChange = onStatus
            executor.onCue = onCue
            executor.toSOS = toSOS
            executor.sosIsAsking = sosIsAsking
            executor.toUplink = toUplink
            executor.heartRateOutsideRun = heartRateOutsideRun
            var loop = PipelineLoop(executor: executor, take: { queue.take(until: $0) }, clock: MonotonicTime.nanoseconds,
                                    heartbeat: { heartbeat.heartbeatNs.store($0, ordering: .relaxed) })
            while loop.turn() {}
        }
    }
}

/// The pipeline thread as a loop around the executor: it waits for an input, the next tick or a
/// held button's deadline, reads the clock once for each, and hands them over. The clock and the
/// wait are injected, so the order of inputs, buttons and ticks is tested without sleeping.
struct PipelineLoop {
    let executor: RunSessionExecutor
    /// The next input, or nil once the deadline (CLOCK_MONOTONIC ns) passed without one.
    let take: (UInt64) -> DaemonInput?
    /// CLOCK_MONOTONIC: the only clock the pipeline reads.
    let clock: () -> UInt64
    /// The loop turned at this time: the watchdog pings only while it turns.
    let heartbeat: (UInt64) -> Void
    private var nextTick: UInt64

    init(executor: RunSessionExecutor, take: @escaping (UInt64) -> DaemonInput?, clock: @escaping () -> UInt64, heartbeat: @escaping (UInt64) -> Void) {
        self.executor = executor
        self.take = take
        self.clock = clock
        self.heartbeat = heartbeat
        let now = clock()
        executor.tick(nowNs: now)
        nextTick = now + PipelineThread.tickNs
    }

    /// One turn: an input if one comes before the tick (or a held button's deadline), then the
    /// button and the tick if due. False once the shutdown was handled.
    mutating func turn() -> Bool {
        var running = true
        if let input = take(min(nextTick, executor.buttonDeadlineNs ?? .max)) {
            if case .shutdown = input { running = false }
            executor.handle(input, nowNs: clock())
        }
        let now = clock()
        executor.advanceButtons(nowNs: now)
        if now >= nextTick {
            executor.tick(nowNs: now)
            nextTick = now + PipelineThread.tickNs
        }
        heartbeat(now)
        return running
    }
}
