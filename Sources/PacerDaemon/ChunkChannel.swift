import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Hands text from a producer thread (an export reading the store, which blocks) to an async
/// consumer (the socket), a few chunks at a time: the producer waits while `capacity` chunks are
/// unsent, so a slow client slows the export instead of filling memory. The consumer suspends
/// without holding a pool thread.
final class ChunkChannel: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var spaceAvailable = pthread_cond_t()
    private var chunks: [String] = []
    private var waiting: CheckedContinuation<String?, Never>?
    private var finished = false
    private var cancelled = false
    private let capacity: Int

    struct Cancelled: Error {}

    init(capacity: Int = 4) {
        self.capacity = capacity
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&spaceAvailable, nil)
    }

    deinit {
        pthread_cond_destroy(&spaceAvailable)
        pthread_mutex_destroy(&mutex)
    }

    /// Producer: blocks while the channel is full; throws once the consumer gave up.
    func put(_ chunk: String) throws {
        pthread_mutex_lock(&mutex)
        while chunks.count >= capacity && !cancelled { pthread_cond_wait(&spaceAvailable, &mutex) }
        if cancelled {
            pthread_mutex_unlock(&mutex)
            throw Cancelled()
        }
        if let consumer = waiting {
            waiting = nil
            pthread_mutex_unlock(&mutex)
            consumer.resume(returning: chunk)
            return
        }
        chunks.append(chunk)
        pthread_mutex_unlock(&mutex)
    }

    /// Producer: no more chunks.
    func finish() {
        pthread_mutex_lock(&mutex)
        finished = true
        let consumer = waiting
        waiting = nil
        pthread_mutex_unlock(&mutex)
        consumer?.resume(returning: nil)
    }

    /// Consumer: the producer is to stop (the client went away).
    func cancel() {
        pthread_mutex_lock(&mutex)
        cancelled = true
        pthread_cond_broadcast(&spaceAvailable)
        pthread_mutex_unlock(&mutex)
    }

    /// Consumer: the next chunk, or nil at the end.
    func next() async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            pthread_mutex_lock(&mutex)
            if !chunks.isEmpty {
                let chunk = chunks.removeFirst()
                pthread_cond_signal(&spaceAvailable)
                pthread_mutex_unlock(&mutex)
                continuation.resume(returning: chunk)
            } else if finished {
                pthread_mutex_unlock(&mutex)
                continuation.resume(returning: nil)
            } else {
                waiting = continuation
                pthread_mutex_unlock(&mutex)
            }
        }
    }
}
