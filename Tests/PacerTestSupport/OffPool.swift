import Foundation

/// Runs blocking test code (waiting for a child process, polling a socket, sleeping between
/// polls) on a thread of its own and awaits it. Blocking inside an async test would hold one of
/// the cooperative pool's two threads, and every other test in the process would stall with it.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
