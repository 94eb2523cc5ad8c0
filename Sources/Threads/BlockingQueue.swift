#if canImport(Glibc)
import Glibc
#endif

/// A FIFO one thread takes from while others put in: a mutex and a condition variable on
/// CLOCK_MONOTONIC, so waiting happens on the taker's own thread, never in the cooperative pool.
public final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var items: [Element] = []
    private var head = 0

    public init() {
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    public func put(_ item: Element) {
        pthread_mutex_lock(&mutex)
        items.append(item)
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// The next item, or nil once `deadlineNs` (CLOCK_MONOTONIC) has passed without one.
    public func take(until deadlineNs: UInt64) -> Element? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        var deadline = timespec(tv_sec: Int(deadlineNs / 1_000_000_000), tv_nsec: Int(deadlineNs % 1_000_000_000))
        while head == items.count {
            if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT, head == items.count { return nil }
        }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }
}
