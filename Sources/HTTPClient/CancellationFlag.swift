import Synchronization

/// Set by the awaiting task's cancellation handler, read by libcurl's progress callback on the
/// transfer's thread.
final class CancellationFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func cancel() { value.store(true, ordering: .relaxed) }

    var isCancelled: Bool { value.load(ordering: .relaxed) }
}
