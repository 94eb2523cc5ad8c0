import Systemd

/// One ordered stream of the bus signals a session cares about, plus wake-ups at deadlines, so the
/// client can be written as straight-line steps ("connect, then wait for ServicesResolved, at most
/// 10 s") while no signal is lost between the steps: they queue here until looked at.
final class SignalInbox {
    enum Item: Sendable {
        case signal(BusSignal)
        case deadline(Int)
        case closed
    }

    private let items: AsyncStream<Item>
    private let continuation: AsyncStream<Item>.Continuation
    private var iterator: AsyncStream<Item>.Iterator
    private let forwarder: Task<Void, Never>
    private var timers: [Task<Void, Never>] = []
    private var nextDeadline = 0

    init(_ signals: AsyncStream<BusSignal>) {
        (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .unbounded)
        iterator = items.makeAsyncIterator()
        forwarder = Task { [continuation] in
            for await signal in signals { continuation.yield(.signal(signal)) }
            continuation.yield(.closed)
        }
    }

    deinit {
        forwarder.cancel()
        for timer in timers { timer.cancel() }
        continuation.finish()
    }

    enum Outcome<T> {
        case done(T)
        case timedOut
        /// The bus connection ended (or the task was cancelled).
        case closed
    }

    /// Hands each signal to `examine` until it returns a value, or `timeout` passes.
    func wait<T>(timeout: Duration, _ examine: (BusSignal) -> T?) async -> Outcome<T> {
        nextDeadline += 1
        let id = nextDeadline
        let timer = Task { [continuation] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { continuation.yield(.deadline(id)) }
        }
        timers.append(timer)
        defer {
            timer.cancel()
            timers.removeAll { $0 == timer }
        }
        while let item = await iterator.next() {
            if Task.isCancelled { return .closed }
            switch item {
            case .signal(let signal):
                if let result = examine(signal) { return .done(result) }
            case .deadline(let fired) where fired == id:
                return .timedOut
            case .deadline:
                continue
            case .closed:
                return .closed
            }
        }
        return .closed
    }
}
