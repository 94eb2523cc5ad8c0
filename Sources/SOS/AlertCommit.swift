import Synchronization
import Threads

/// One alert's commit to sos.db on a thread of its own. An SD card's fsync can stall for seconds;
/// the lane waits for it only up to a cap (`LaneCore.commitWaitNs`), then dispatches from memory
/// and learns the outcome later through its queue (`LaneInput.committed`).
final class AlertCommit: Sendable {
    private enum State {
        case running
        case finished(Result<[Delivery], AlertStoreError>)
        /// The lane stopped waiting: the outcome goes to `late` instead.
        case abandoned
    }

    private let state = Mutex<State>(.running)
    private let finished = BlockingQueue<Bool>()
    private let late: @Sendable (Result<[Delivery], AlertStoreError>) -> Void

    private init(late: @escaping @Sendable (Result<[Delivery], AlertStoreError>) -> Void) {
        self.late = late
    }

    /// Starts `write` on a new thread. Without a thread it runs here: the alert is still recorded,
    /// only not bounded.
    static func start(late: @escaping @Sendable (Result<[Delivery], AlertStoreError>) -> Void,
                      _ write: @escaping @Sendable () throws(AlertStoreError) -> [Delivery]) -> AlertCommit {
        let commit = AlertCommit(late: late)
        let run: @Sendable () -> Void = {
            let result: Result<[Delivery], AlertStoreError>
            do throws(AlertStoreError) { result = .success(try write()) } catch { result = .failure(error) }
            commit.finish(result)
        }
        do { try DetachedThread.start(run) } catch { run() }
        return commit
    }

    private func finish(_ result: Result<[Delivery], AlertStoreError>) {
        let abandoned = state.withLock { state in
            if case .abandoned = state { return true }
            state = .finished(result)
            return false
        }
        if abandoned { late(result) } else { finished.put(true) }
    }

    /// The outcome if it comes by `deadlineNs` (CLOCK_MONOTONIC); nil: still running, and its
    /// outcome goes to `late` when it comes.
    func wait(until deadlineNs: UInt64) -> Result<[Delivery], AlertStoreError>? {
        _ = finished.take(until: deadlineNs)
        return state.withLock { state in
            if case .finished(let result) = state { return result }
            state = .abandoned
            return nil
        }
    }
}
