import Foundation

/// Runs blocking test code (waiting for a child process, polling a socket, sleeping between
/// polls) on a thread of its own and awaits it. Blocking inside an async test would hold one of
/// the cooperative pool's two threads, and every other test in the process would stall with it.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// Polls `condition` every `interval` until it holds; false if it still does not once `timeout`
/// has passed. It waits for background work and never asserts on timing. The condition runs on
/// the caller's task, so it must not block: reading a lock or an actor is fine; a child process,
/// a socket or a D-Bus call goes through `waitOffPool`.
public func eventually(timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline, !Task.isCancelled {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Polls `condition` off the cooperative pool (it may run busctl, pacerctl or curl) every
/// `interval` until it holds; throws `failure` after `timeout`.
public func waitOffPool(
    timeout: Duration, every interval: Duration, orFail failure: @autoclosure () -> String = "timed out waiting",
    _ condition: @escaping @Sendable () throws -> Bool
) async throws {
    guard try await eventually(timeout: timeout, every: interval, { try await offPool(condition) }) else {
        throw FixtureError(failure())
    }
}
