import PacerCore
import Synchronization
import Threads

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
            var nextTick = MonotonicTime.nanoseconds() + Self.tickNs
            /// Hands one input to the lane; false once it was the shutdown.
            func carryOut(_ input: LaneInput) -> Bool {
                guard case .shutdown(let done) = input else {
                    lane.handle(input)
                    return true
                }
                self.heartbeatNs.store(0, ordering: .relaxed)
                lane.shutDown()
                done()
                return false
            }
            while true {
                self.heartbeatNs.store(MonotonicTime.nanoseconds(), ordering: .relaxed)
                // A held button may be due before the tick: its very long press is not late by up to a tick.
                if let input = queue.take(until: min(nextTick, lane.buttonDeadlineNs ?? .max)), !carryOut(input) { return }
                var now = MonotonicTime.nanoseconds()
                if now >= nextTick {
                    // What already waits in the queue (samples that arrived during a long input,
                    // a cancel's store write) goes in before the tick judges silence: else those
                    // on-time notifications look missing (found by tools/bench-sos-path). Bounded,
                    // so a flood cannot hold the tick off.
                    var drained = 0
                    while drained < 256, let waiting = queue.take(until: 0) {
                        guard carryOut(waiting) else { return }
                        drained += 1
                    }
                    now = MonotonicTime.nanoseconds()
                    lane.tick(nowNs: now)
                    nextTick = now + Self.tickNs
                } else if let due = lane.buttonDeadlineNs, now >= due {
                    lane.advanceButtons(nowNs: now)
                }
            }
        }
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
