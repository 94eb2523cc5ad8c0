import CloudModel
import Hummingbird
import Synchronization

/// Requests held open at once per key (a device's long-polls, a session's event streams) on this
/// instance, so one token or one session cannot hold every connection the server has. The
/// newest request over the cap is refused; those already open keep going.
final class HoldCounter: Sendable {
    private let open = Mutex<[String: Int]>([:])

    /// One more hold of `key`, or nil (nothing counted) at `limit`.
    func take(_ key: String, limit: Int) -> HoldSlot? {
        let taken = open.withLock { counts in
            guard counts[key, default: 0] < limit else { return false }
            counts[key, default: 0] += 1
            return true
        }
        return taken ? HoldSlot(counter: self, key: key) : nil
    }

    func count(_ key: String) -> Int { open.withLock { $0[key, default: 0] } }

    fileprivate func give(_ key: String) {
        open.withLock { counts in
            let left = counts[key, default: 1] - 1
            counts[key] = left > 0 ? left : nil
        }
    }
}

/// One taken hold: given back by `release()` or, at the latest, when the last reference goes
/// (a response body that never runs still frees its slot).
final class HoldSlot: Sendable {
    private let counter: HoldCounter
    private let key: String
    private let held = Atomic(true)

    fileprivate init(counter: HoldCounter, key: String) {
        self.counter = counter
        self.key = key
    }

    func release() {
        if held.exchange(false, ordering: .acquiringAndReleasing) { counter.give(key) }
    }

    deinit { release() }
}

extension HoldCounter {
    /// A long-poll slot of the device (`ConnectionLimits.longPollsPerDevice`), else a 429.
    func longPollSlot(device: String, limit: Int) throws(APIError) -> HoldSlot {
        guard let slot = take("poll:" + device, limit: limit) else {
            var refusal = APIError(.tooManyRequests, "too_many_long_polls",
                                   "this device already has \(limit) long-polls open (wait=), the most one device may hold; let one end first")
            refusal.retryAfter = 5
            throw refusal
        }
        return slot
    }

    /// An event-stream slot of the web session (`ConnectionLimits.streamsPerSession`), else a 429.
    func streamSlot(session: StoredSession, limit: Int) throws(WebRefusal) -> HoldSlot {
        guard let slot = take("stream:" + session.idHash, limit: limit) else {
            throw WebRefusal.tooManyAttempts(retryAfter: 10, message: "too many open dashboards for this session: at most \(limit)")
        }
        return slot
    }
}
