internal import CSystemd
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The queue between callers and the bus thread. Everything sd-bus is touched by `BusThreadContext`
/// on the bus thread only; this class holds just the locked job queue and the eventfd that wakes it.
final class BusLoop: Sendable {
    typealias Job = @Sendable (BusThreadContext) -> Void

    private struct Queue {
        var jobs: [Job] = []
        var closed = false
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        var finished = false
    }

    private let queue = Mutex(Queue())
    let wakeDescriptor: Int32
    // Handed to the bus thread once; the thread owns it from then on.
    private nonisolated(unsafe) let context: BusThreadContext

    init(bus: OpaquePointer) throws(BusError) {
        let descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard descriptor >= 0 else {
            sd_bus_unref(bus)
            throw .local("eventfd", returned: -errno)
        }
        wakeDescriptor = descriptor
        do throws(BusError) {
            context = try BusThreadContext(bus: bus, wakeDescriptor: descriptor)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        context.loop = self
    }

    var isClosed: Bool { queue.withLock { $0.closed } }

    /// False once closed: the job will never run.
    @discardableResult
    func submit(_ job: @escaping Job) -> Bool {
        let accepted = queue.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { wake() }
        return accepted
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    /// Jobs waiting, taken in order; called on the bus thread when the eventfd fires.
    func takeJobs() -> [Job] {
        var drained: UInt64 = 0
        _ = read(wakeDescriptor, &drained, 8)
        return queue.withLock { state in
            defer { state.jobs.removeAll() }
            return state.jobs
        }
    }

    func close() {
        let first = queue.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            return true
        }
        if first {
            // Wake the thread; it sees `closed` and stops after running what was queued before.
            wake()
        }
    }

    /// Jobs handed in and not yet taken by the bus thread.
    var queuedJobs: Int { queue.withLock { $0.jobs.count } }

    var shouldStop: Bool { queue.withLock { $0.closed && $0.jobs.isEmpty } }

    func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = queue.withLock { state -> Bool in
                if state.finished { return true }
                state.closeWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Called by the bus thread as its last act.
    func didFinish() {
        let waiters = queue.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            state.finished = true
            defer { state.closeWaiters.removeAll() }
            return state.closeWaiters
        }
        Glibc.close(wakeDescriptor)
        for waiter in waiters { waiter.resume() }
    }

    /// The thread never started: free what the context holds here instead.
    func abandon() {
        close()
        context.tearDown()
        didFinish()
    }

    /// The bus thread's body.
    func run() {
        context.run()
        didFinish()
    }
}
