import PacerCore

/// The lane's delivery rules as a pure function of what happened and when (`handle(event, now)`
/// returns what to do), so order, replacement, deadlines and backoff are tested with injected
/// time, without threads or sleeping. The lane performs the actions (starts the channel call,
/// writes sos.db, logs) and feeds the outcomes back.
///
/// - One queue per target (channel and recipient) and alert, in sequence order, with at most one
///   attempt in flight: a follow-up, all clear or cancel starts only once that target acknowledged
///   everything before it, so "FALSE ALARM" never overtakes the SOS. Different alerts have queues
///   of their own: a new alert never waits behind an older alert's follow-ups.
/// - A newer follow-up replaces the older follow-ups of its queue that are not in flight: they
///   are never sent (the receiver accepts gaps in the sequence). After an outage a target gets
///   the alert, the newest follow-up and the last word, not every follow-up it missed.
/// - Every attempt has a deadline; a call that has not answered by then is failed and retried.
///   Its answer, if it ever comes, still acknowledges the message; a late failure is ignored.
/// - A failed attempt is retried after 1, 2, 4 … s, at most `retryMaxSeconds`.
struct Outbox {
    struct Settings: Equatable {
        /// The channel's own bound on one attempt (`[sos] attempt_timeout_s`).
        var attemptTimeoutSeconds: Double
        var retryMaxSeconds: Double

        /// The lane's own deadline comes this much after the channel's: a channel that honours its
        /// timeout always answers first, and only a call that never returns is cut off.
        static let deadlineGraceSeconds = 5.0

        var deadlineNs: UInt64 { UInt64(max(0, attemptTimeoutSeconds + Self.deadlineGraceSeconds) * 1e9) }
    }

    enum Event {
        /// New messages' deliveries, or those owed from before a restart.
        case add([Delivery])
        /// The outcome of the attempt `attempt` (the number `start` gave it).
        case finished(Delivery.Key, attempt: Int, Result<String, ChannelFailure>)
        /// Time passed: deadlines and retries that are due.
        case tick
        /// The network is back: every delivery waiting out a backoff goes now.
        case retryNow
    }

    enum Action: Equatable {
        /// Start one attempt of `delivery`; report its outcome as `.finished(key, attempt:)`.
        case start(Delivery, attempt: Int)
        /// Acknowledged: never sent again. `delivery.attempts` counts this attempt.
        case acknowledged(Delivery, detail: String)
        /// The attempt failed (or missed its deadline: `timedOut`); retried in `retryInSeconds`.
        case failed(Delivery, ChannelFailure, timedOut: Bool, retryInSeconds: Double)
        /// Never sent: a newer follow-up (its sequence) for the same alert and target took its place.
        case replaced(Delivery, bySequence: Int)
    }

    private struct QueueKey: Hashable {
        var channel: AlertChannelName
        var target: String
        var alertUUID: String
    }

    private struct Entry {
        var delivery: Delivery
        var retryAtNs: UInt64 = 0
        var inFlight: (attempt: Int, deadlineNs: UInt64)?
        /// Acknowledged by an attempt that had been given up, while a newer one is in flight: it
        /// leaves the queue when that one ends, so the next message never runs beside it.
        var acknowledged = false
    }

    var settings: Settings
    private var queues: [QueueKey: [Entry]] = [:]
    /// Queue keys in the order they were made: actions come out in a stable order.
    private var order: [QueueKey] = []
    private var lastAttempt = 0

    init(settings: Settings) {
        self.settings = settings
    }

    /// Deliveries not yet acknowledged (nor replaced).
    var owedCount: Int { queues.values.reduce(0) { $0 + $1.count { !$0.acknowledged } } }

    /// Deliveries waiting out a backoff, not in flight.
    func waitingCount(now: UInt64) -> Int {
        queues.values.reduce(0) { $0 + ($1.first.map { $0.inFlight == nil && $0.retryAtNs > now ? 1 : 0 } ?? 0) }
    }

    mutating func handle(_ event: Event, now: UInt64) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .add(let deliveries):
            for delivery in deliveries { add(delivery) }
        case .finished(let key, let attempt, let result):
            finished(key, attempt: attempt, result, now: now, into: &actions)
        case .tick:
            for queueKey in order {
                guard let head = queues[queueKey]?.first, let flight = head.inFlight, flight.deadlineNs <= now else { continue }
                let seconds = Int(settings.attemptTimeoutSeconds.rounded())
                finished(head.delivery.key, attempt: flight.attempt,
                         .failure(ChannelFailure("no answer within \(seconds) s (+\(Int(Settings.deadlineGraceSeconds)) s); given up, retrying")),
                         timedOut: true, now: now, into: &actions)
            }
        case .retryNow:
            for queueKey in order where queues[queueKey]?.first?.inFlight == nil {
                if let due = queues[queueKey]?.first?.retryAtNs, due > now { queues[queueKey]?[0].retryAtNs = now }
            }
        }
        for queueKey in order { advance(queueKey, now: now, into: &actions) }
        order.removeAll { queues[$0] == nil }
        return actions
    }

    private mutating func add(_ delivery: Delivery) {
        let queueKey = QueueKey(channel: delivery.key.channel, target: delivery.key.target, alertUUID: delivery.alertUUID)
        var queue = queues[queueKey] ?? []
        // Owed deliveries read again at start, or a message handed in twice: one entry each.
        guard !queue.contains(where: { $0.delivery.key == delivery.key }) else { return }
        if queues[queueKey] == nil { order.append(queueKey) }
        // In sequence order; after any of the same sequence (there should be none).
        let index = queue.firstIndex { $0.delivery.sequence > delivery.sequence } ?? queue.endIndex
        queue.insert(Entry(delivery: delivery), at: index)
        queues[queueKey] = queue
    }

    private mutating func finished(_ key: Delivery.Key, attempt: Int, _ result: Result<String, ChannelFailure>, timedOut: Bool = false,
                                   now: UInt64, into actions: inout [Action]) {
        for queueKey in order {
            guard var queue = queues[queueKey], let index = queue.firstIndex(where: { $0.delivery.key == key }) else { continue }
            var entry = queue[index]
            let current = entry.inFlight?.attempt == attempt
            switch result {
            case .success(let detail):
                if !entry.acknowledged {
                    // A late answer of an attempt given up still counts: the message got there.
                    entry.delivery.attempts += current ? 1 : 0
                    entry.delivery.lastError = nil
                    actions.append(.acknowledged(entry.delivery, detail: detail))
                }
                entry.acknowledged = true
                if current || entry.inFlight == nil {
                    queue.remove(at: index)
                } else {
                    queue[index] = entry
                }
            case .failure(let failure):
                // The failure of an attempt already given up was counted when it was.
                guard current else { return }
                entry.inFlight = nil
                if entry.acknowledged {
                    queue.remove(at: index)
                } else {
                    entry.delivery.attempts += 1
                    entry.delivery.lastError = failure.message
                    let backoff = min(settings.retryMaxSeconds, Double(1 << min(entry.delivery.attempts - 1, 16)))
                    entry.retryAtNs = now + UInt64(max(0, backoff) * 1e9)
                    queue[index] = entry
                    actions.append(.failed(entry.delivery, failure, timedOut: timedOut, retryInSeconds: backoff))
                }
            }
            queues[queueKey] = queue.isEmpty ? nil : queue
            return
        }
    }

    /// Replaces superseded follow-ups, then starts the head of the queue if it is due.
    private mutating func advance(_ queueKey: QueueKey, now: UInt64, into actions: inout [Action]) {
        guard var queue = queues[queueKey] else { return }
        var index = queue.startIndex
        while index < queue.endIndex {
            let entry = queue[index]
            if entry.inFlight == nil, !entry.acknowledged, entry.delivery.type == AlertContent.Message.followUp.rawValue,
               let newer = queue[(index + 1)...].firstIndex(where: { $0.delivery.type == AlertContent.Message.followUp.rawValue }) {
                // The newer one keeps the older one's backoff: replacing must not hasten retries.
                queue[newer].retryAtNs = max(queue[newer].retryAtNs, entry.retryAtNs)
                actions.append(.replaced(entry.delivery, bySequence: queue[newer].delivery.sequence))
                queue.remove(at: index)
            } else {
                index += 1
            }
        }
        if var head = queue.first, head.inFlight == nil, !head.acknowledged, head.retryAtNs <= now {
            lastAttempt += 1
            head.inFlight = (lastAttempt, now + settings.deadlineNs)
            queue[0] = head
            actions.append(.start(head.delivery, attempt: lastAttempt))
        }
        queues[queueKey] = queue.isEmpty ? nil : queue
    }
}
