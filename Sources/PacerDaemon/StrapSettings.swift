import BlueZ
import PacerConfig
import Synchronization

/// The strap choice as it changes: at start, on `pacerctl strap pair`, and on a reload that
/// changes `[hr]`. HeartRateService follows `changes`; the control socket calls `pair`.
final class StrapSettings: Sendable {
    private struct State {
        var configuration: PacerConfiguration
        var paired: StrapAddress?
        var listeners: [AsyncStream<StrapChoice>.Continuation] = []
        var current: StrapChoice { StrapChoice.resolve(configuration, paired: paired) }
    }

    private let state: Mutex<State>
    let file: PairedStrapFile

    init(configuration: PacerConfiguration, file: PairedStrapFile, paired: StrapAddress?) {
        self.file = file
        state = Mutex(State(configuration: configuration, paired: paired))
    }

    var current: StrapChoice { state.withLock { $0.current } }

    /// The current choice at once, then every change.
    func changes() -> AsyncStream<StrapChoice> {
        let (stream, continuation) = AsyncStream.makeStream(of: StrapChoice.self, bufferingPolicy: .bufferingNewest(1))
        state.withLock { state in
            continuation.yield(state.current)
            state.listeners.append(continuation)
        }
        return stream
    }

    func reload(_ configuration: PacerConfiguration) {
        update { $0.configuration = configuration }
    }

    /// Remembers `address` (nil: forget the choice). Refused while `[hr] strap` fixes the strap
    /// in the config: the file would silently lose to it.
    func pair(_ address: StrapAddress?) throws(PairedStrapError) -> StrapChoice {
        if let fixed = state.withLock({ $0.configuration.heartRateStrap }) {
            throw PairedStrapError(message: "the config fixes the strap to \(fixed) ([hr] strap); change it there, or empty it to pair with pacerctl")
        }
        try file.write(address)
        update { $0.paired = address }
        return current
    }

    private func update(_ change: (inout State) -> Void) {
        let (choice, listeners, changed) = state.withLock { state -> (StrapChoice, [AsyncStream<StrapChoice>.Continuation], Bool) in
            let before = state.current
            change(&state)
            return (state.current, state.listeners, state.current != before)
        }
        guard changed else { return }
        for listener in listeners { listener.yield(choice) }
    }

    func finish() {
        for listener in state.withLock({ $0.listeners }) { listener.finish() }
    }
}
