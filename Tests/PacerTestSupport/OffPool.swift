import Foundation

/// Runs blocking test code (waiting for a child process, polling a socket, sleeping between
/// polls) on a thread of its own and awaits it. Blocking inside an async test would hold one of
/// the cooperative pool's two threads, and every other test in the process would stall with it.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// Polls `condition` off the cooperative pool (it may run busctl, pacerctl or curl) every
/// `interval` until it holds; throws after `timeout`.
public func waitOffPool(timeout: Duration, every interval: Duration, _ condition: @escaping @Sendable () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !offPool(condition) {
        if ContinuousClock.now > deadline { throw FixtureError("timed out waiting") }
        try await Task.sleep(for: interval)
    }
}
