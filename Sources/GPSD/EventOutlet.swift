import Threads
/// Hands events to the AsyncStream with a bounded buffer, on the client's thread only.
///
/// The stream keeps the oldest events (`.bufferingOldest`), so when it is full the event being
/// yielded is the one refused. A refused line is counted, and the count is reported as
/// `.linesDropped` at the place of the gap once there is room again. A refused connection event is
/// kept (in order) until then: the consumer must learn that gpsd went away even if it was slow.
final class EventOutlet {
    private let continuation: AsyncStream<GPSDEvent>.Continuation
    private let counters: StatisticsCounters
    /// Events that must reach the consumer before anything newer: connection events and
    /// `.linesDropped` markers, never lines.
    private var pending: [GPSDEvent] = []
    /// Beyond this many pending events (gpsd flapping while the consumer is stuck), they are
    /// collapsed into one drop marker and the latest connection event.
    private static let pendingLimit = 64
    private(set) var isTerminated = false

    init(continuation: AsyncStream<GPSDEvent>.Continuation, counters: StatisticsCounters) {
        self.continuation = continuation
        self.counters = counters
    }

    func send(_ event: GPSDEvent) {
        if case .line = event { counters.linesReceived.add(1, ordering: .relaxed) }
        flushPending()
        if pending.isEmpty {
            switch continuation.yield(event) {
            case .enqueued: return
            case .terminated:
                isTerminated = true
                return
            case .dropped: break
            @unknown default: break
            }
        }
        if case .line = event {
            noteDroppedLine()
        } else {
            pending.append(event)
            if pending.count > Self.pendingLimit { collapsePending() }
        }
    }

    func finish() {
        continuation.finish()
    }

    /// Delivers what waited for room. The client's thread calls this on every wake-up too, so a
    /// refused `.disconnected` arrives once the consumer catches up, even if nothing follows it.
    func flushPending() {
        while let first = pending.first {
            switch continuation.yield(first) {
            case .enqueued:
                pending.removeFirst()
            case .terminated:
                isTerminated = true
                pending.removeAll()
                return
            case .dropped:
                return
            @unknown default:
                return
            }
        }
    }

    private func noteDroppedLine() {
        counters.linesDropped.add(1, ordering: .relaxed)
        if case .linesDropped(let count, let at) = pending.last {
            pending[pending.count - 1] = .linesDropped(count: count + 1, atNs: at)
        } else {
            pending.append(.linesDropped(count: 1, atNs: MonotonicTime.nanoseconds()))
        }
    }

    private func collapsePending() {
        var dropped = 0
        var firstDropAt: UInt64?
        var lastConnectionEvent: GPSDEvent?
        for event in pending {
            if case .linesDropped(let count, let at) = event {
                dropped += count
                firstDropAt = firstDropAt ?? at
            } else {
                lastConnectionEvent = event
            }
        }
        pending.removeAll()
        if let firstDropAt { pending.append(.linesDropped(count: dropped, atNs: firstDropAt)) }
        if let lastConnectionEvent { pending.append(lastConnectionEvent) }
    }
}
