import Synchronization

/// At most `permits` holders at once; the others wait, first come first served, without holding
/// a thread (SQLite's one writer connection, its readers). A waiter whose task is cancelled
/// stops waiting and throws `CancellationError`.
final class AsyncGate: Sendable {
    private struct State {
        var free: Int
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    init(permits: Int) {
        state = Mutex(State(free: permits))
    }

    func enter() async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let admitted = state.withLock { state -> Bool? in
                    if state.free > 0 {
                        state.free -= 1
                        return true
                    }
                    // Cancelled before it queued: onCancel found nothing to take out.
                    if Task.isCancelled { return nil }
                    state.waiters.append((id, continuation))
                    return false
                }
                switch admitted {
                case true?: continuation.resume()
                case nil: continuation.resume(throwing: CancellationError())
                case false?: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Hands the permit to the longest waiter, or frees it.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiters.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
