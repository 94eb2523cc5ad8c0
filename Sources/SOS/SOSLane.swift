import PacerCore
import Synchronization
import Threads

#if canImport(Glibc)
import Glibc
#endif

/// The SOS lane: its own thread, its own queue, its own SQLite file. Strap notifications reach it
/// straight from the strap client, not through the run pipeline, so an alert never waits behind
/// a run's batch commit, speech or an upload. On an alert it records (fsync, waited for at most
/// 200 ms), then starts every channel at once, then retries each until acknowledged, across restarts.
public final class SOSLane: Sendable {
    public let queue = BlockingQueue<LaneInput>()
    /// Read without a round trip through the queue.
    public let health = LaneHealth()
    static let tickNs: UInt64 = 250_000_000
    /// "Are you OK?" is waiting for an answer: the pipeline then gives a button press to the lane
    /// (`.answer`) instead of starting a lap.
    private let asking = Atomic<Bool>(false)
    /// CLOCK_MONOTONIC of the loop's last turn; 0 while the lane is not running.
    private let heartbeatNs = Atomic<UInt64>(0)

    public init() {}

    /// When the lane's loop last turned (it turns at least every tick), or nil when it is not
    /// running: the watchdog pings only while it keeps turning.
    public var lastTurnNs: UInt64? {
        let ns = heartbeatNs.load(ordering: .relaxed)
        return ns == 0 ? nil : ns
    }

    public var isAsking: Bool { asking.load(ordering: .acquiring) }

    public func put(_ input: LaneInput) { queue.put(input) }

    /// Starts the lane's thread. `caller` places the voice call of `settings.call`. `onCue` speaks (raised, sent, sensor warnings); `onTiming` sees
    /// each alert's stage times (tools/bench-sos).
    public func start(settings: LaneSettings, store: AlertStore?, channels: [any AlertChannel], caller: AlertCaller? = nil, log: @escaping LaneLog,
                      onCue: @escaping @Sendable (Cue, UInt64) -> Void = { _, _ in },
                      onTiming: @escaping @Sendable (AlertTiming) -> Void = { _ in }) throws(ThreadStartError) {
        let (queue, health) = (self.queue, self.health)
        try DetachedThread.start { [self] in
            let lane = LaneState(settings: settings, store: store, channels: channels, caller: caller, queue: queue, health: health, log: log, onCue: onCue,
                                 onTiming: onTiming, onAsking: { self.asking.store($0, ordering: .releasing) })
            lane.resumeOwedDeliveries()
            var loop = LaneLoop(lane: lane, take: { queue.take(until: $0) }, heartbeat: { self.heartbeatNs.store($0, ordering: .relaxed) })
            while loop.turn() {}
        }
    }
}

/// The lane's thread as a loop around `LaneState`: it waits for an input or the next tick,
/// reads the clocks, and hands the input over. Time and the wait are injected, so the order of
/// inputs and ticks is tested without sleeping.
struct LaneLoop {
    let lane: LaneState
    /// The next input, or nil once the deadline (CLOCK_MONOTONIC ns) passed without one.
    let take: (UInt64) -> LaneInput?
    /// The loop turned at this time (0: it stopped): the watchdog pings only while it turns.
    let heartbeat: (UInt64) -> Void
    /// At most this many queued inputs go in before a tick: a flood cannot hold the tick off.
    let drainLimit: Int
    private var nextTick: UInt64

    init(lane: LaneState, take: @escaping (UInt64) -> LaneInput?, heartbeat: @escaping (UInt64) -> Void, drainLimit: Int = 256) {
        self.lane = lane
        self.take = take
        self.heartbeat = heartbeat
        self.drainLimit = drainLimit
        nextTick = lane.clock().monotonicNs + SOSLane.tickNs
    }

    /// One turn: an input if one comes before the tick (or a held button's deadline), then the
    /// tick or the button if due. False once the shutdown was handled.
    mutating func turn() -> Bool {
        heartbeat(lane.clock().monotonicNs)
        // A held button may be due before the tick: its very long press is not late by up to a tick.
        if let input = take(min(nextTick, lane.buttonDeadlineNs ?? .max)), !carryOut(input) { return false }
        var now = lane.clock()
        if now.monotonicNs >= nextTick {
            // What already waits in the queue (samples that arrived during a long input, a
            // cancel's store write) goes in before the tick judges silence: else those on-time
            // notifications look missing (found by tools/bench-sos-path).
            var drained = 0
            while drained < drainLimit, let waiting = take(0) {
                guard carryOut(waiting) else { return false }
                drained += 1
            }
            now = lane.clock()
            lane.tick(now: now)
            nextTick = now.monotonicNs + SOSLane.tickNs
        } else if let due = lane.buttonDeadlineNs, now.monotonicNs >= due {
            lane.advanceButtons(now: now)
        }
        return true
    }

    /// Hands one input to the lane, with the clocks read for it; false once it was the shutdown.
    private func carryOut(_ input: LaneInput) -> Bool {
        guard case .shutdown(let done) = input else {
            lane.handle(input, now: lane.clock())
            return true
        }
        heartbeat(0)
        lane.shutDown()
        done()
        return false
    }
}

extension LaneClock {
    /// The lane thread's one reading of both clocks for an input.
    static func read() -> LaneClock {
        LaneClock(monotonicNs: MonotonicTime.nanoseconds(), wallMs: WallClock.milliseconds())
    }
}

/// The journal, without the daemon's types: priority, message, fields.
public typealias LaneLog = @Sendable (LaneLogLevel, String, [String: String]) -> Void

public enum LaneLogLevel: Sendable {
    case critical, error, warning, notice, info
}

/// One alert's way from the confirming sample to the first dispatch, CLOCK_MONOTONIC ns.
public struct AlertTiming: Sendable, Equatable {
    public var alertUUID: String
    public var kind: AlertKind
    /// Receipt of the sample (or request) that confirmed it.
    public var confirmingNs: UInt64
    /// The alert committed to SQLite (nil: the write failed and it went out from memory).
    public var recordedNs: UInt64?
    /// The first channel attempt started.
    public var firstDispatchNs: UInt64?
    /// Seconds from the first out-of-range sample to the confirming one.
    public var confirmationSeconds: Double
}
