import CloudStore
import Synchronization

/// Writes race positions in batches: a request's positions wait up to `delay` for others, then
/// every waiting request's go to the store in one transaction (`RaceRepository.addPositions`),
/// and each request gets its own count back. At thousands of runners a position each, one
/// transaction per position would be the store's limit; one per `delay` is not.
final class RacePositionWriter: Sendable {
    private struct Waiting {
        var batch: RaceRepository.PositionBatch
        var continuation: CheckedContinuation<Int, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var scheduled = false
    }

    private let races: RaceRepository
    private let delay: Duration
    /// A full batch goes at once, without waiting out `delay`.
    private let maxBatches: Int
    private let state = Mutex(State())

    init(races: RaceRepository, delay: Duration = .milliseconds(20), maxBatches: Int = 1_000) {
        self.races = races
        self.delay = delay
        self.maxBatches = maxBatches
    }

    /// Stores the batch with whatever else arrives meanwhile; the positions that were new.
    func write(_ batch: RaceRepository.PositionBatch) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let (startFlush, full) = state.withLock { state -> (Bool, Bool) in
                state.waiting.append(Waiting(batch: batch, continuation: continuation))
                let first = !state.scheduled
                state.scheduled = true
                return (first, state.waiting.count >= maxBatches)
            }
            if full {
                Task { await self.flush() }
            } else if startFlush {
                Task {
                    try? await Task.sleep(for: self.delay)
                    await self.flush()
                }
            }
        }
    }

    private func flush() async {
        let taken = state.withLock { state -> [Waiting] in
            let taken = state.waiting
            state.waiting = []
            state.scheduled = false
            return taken
        }
        guard !taken.isEmpty else { return }
        do {
            let counts = try await races.addPositions(taken.map(\.batch))
            for (waiting, count) in zip(taken, counts) { waiting.continuation.resume(returning: count) }
        } catch {
            for waiting in taken { waiting.continuation.resume(throwing: error) }
        }
    }
}
