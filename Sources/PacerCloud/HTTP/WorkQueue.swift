import Foundation
import Hummingbird
import Logging
#if canImport(Glibc)
import Glibc
#endif

#if canImport(Glibc)
/// glibc's gettid(3) (2.30 and later), which Swift's Glibc module does not import.
@_silgen_name("gettid")
private func threadID() -> Int32
#endif

/// CPU-heavy work of requests (reading an imported file, computing a run's view) on threads of
/// its own, at most `threads` jobs at once and at most `maxWaiting` more waiting: such work
/// held the cooperative pool's threads (two on a 2-core machine) for minutes, and `/health`
/// and every device request waited behind it. Its threads run at a lower priority (nice 10),
/// so that the event loops and the pool get a core first; they end when nothing is waiting,
/// so an idle server (or a test's) holds none.
final class WorkQueue: @unchecked Sendable {
    /// Too much is running and waiting: the caller answers 503 with `Retry-After`.
    struct Busy: Error, Sendable, CustomStringConvertible {
        var retryAfter: Int
        var description: String { "the server is busy with other runs' imports and maps; try again in \(retryAfter) s" }

        /// The web pages' answer: a message page, 503 with Retry-After.
        func page() -> Response {
            WebPage.message.response(.serviceUnavailable, values: ["title": "Busy"], csrf: nil, error: description,
                                     extraHeaders: [.retryAfter: String(retryAfter)])
        }
    }

    /// Jobs at once: every core but one (at least one), so that one core always has time for
    /// the requests that need little (a 2-core server runs one heavy job at a time).
    static let defaultThreads = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
    /// Jobs waiting at most: each waiting import holds its file (up to 32 MB), each run view its
    /// track, so the waiting list is short and the excess is told to come back.
    static let defaultMaxWaiting = 8
    /// Jobs waiting at most for work nobody waits for (a run's figures after its upload): they
    /// hold a stored track each (gzip'd, a few MB at most) and are made up by a page view when
    /// refused, but a burst of uploads should not make every later page do them.
    static let backgroundMaxWaiting = 32
    /// What a refusal's Retry-After says, in seconds: about one heavy job's time.
    static let retryAfterSeconds = 5
    static let logger = Logger(label: "pacer-cloud.heavy-work")

    let threads: Int
    let maxWaiting: Int
    private let condition = NSCondition()
    private var waiting: [@Sendable () -> Void] = []
    private var head = 0
    private var running = 0
    private var workers = 0

    init(threads: Int = defaultThreads, maxWaiting: Int = defaultMaxWaiting) {
        self.threads = max(1, threads)
        self.maxWaiting = max(0, maxWaiting)
    }

    /// Jobs running and waiting now.
    var load: (running: Int, waiting: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (running, waiting.count - head)
    }

    /// Runs `work` on one of the queue's threads and returns its result; throws `Busy` at once
    /// when `threads` jobs run and `maxWaiting` (or `waiting`, when given) wait already. A
    /// cancelled caller's job still runs to its end (it is bounded), its result dropped.
    func run<T: Sendable>(waiting limit: Int? = nil, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let maxWaiting = limit ?? self.maxWaiting
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job: @Sendable () -> Void = { continuation.resume(with: Result { try work() }) }
            condition.lock()
            let queued = waiting.count - head
            guard running + queued < threads + maxWaiting else {
                condition.unlock()
                continuation.resume(throwing: Busy(retryAfter: Self.retryAfterSeconds))
                return
            }
            waiting.append(job)
            // A new thread when fewer than `threads` are there to take it.
            let start = workers < threads
            if start { workers += 1 }
            condition.unlock()
            if start {
                let thread = Thread { [self] in serve() }
                thread.name = "pacer-cloud heavy work"
                thread.stackSize = 4 << 20
                thread.start()
            }
        }
    }

    /// A worker: takes jobs until none waits, then ends.
    private func serve() {
        #if canImport(Glibc)
        // On Linux a nice value is per thread: PRIO_PROCESS with this thread's id.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(threadID()), 10)
        #endif
        condition.lock()
        while head < waiting.count {
            let job = waiting[head]
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            }
            running += 1
            condition.unlock()
            job()
            condition.lock()
            running -= 1
        }
        workers -= 1
        condition.unlock()
    }
}
