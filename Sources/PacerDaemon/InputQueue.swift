#if canImport(Glibc)
import Glibc
#endif

/// The pipeline thread's inbox: any thread or task puts inputs in, the pipeline thread takes them
/// out in order, waiting at most until its next tick. A plain mutex and condition variable, so the
/// waiting happens on the pipeline's own thread and never in the cooperative pool.
final class InputQueue: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var items: [DaemonInput] = []
    private var head = 0

    init() {
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Timed waits on the monotonic clock, like everything else with a deadline here.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func put(_ input: DaemonInput) {
        pthread_mutex_lock(&mutex)
        items.append(input)
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    var count: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return items.count - head
    }

    /// The next input, or nil once `deadlineNs` (CLOCK_MONOTONIC) has passed without one.
    func take(until deadlineNs: UInt64) -> DaemonInput? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        var deadline = timespec(tv_sec: Int(deadlineNs / 1_000_000_000), tv_nsec: Int(deadlineNs % 1_000_000_000))
        while head == items.count {
            if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT, head == items.count { return nil }
        }
        let input = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return input
    }
}
