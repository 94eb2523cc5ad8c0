import Foundation
import Glibc
import PacerTestSupport
import Synchronization

/// Plays a receiver log through held gpsfakes (`GPSFake.Options.holdUntilReleased`) one epoch at
/// a time, at a pace the test sets and changes while it plays: fast between the moments that
/// matter, and in real time (one epoch a second, as the receiver sends them) while the test
/// waits for something that takes wall time, such as a cue being spoken or an SOS going out. In
/// real time the run's clock (GPS time) and the heart rate's (arrival on the monotonic clock)
/// advance together, as on the device, so nothing is judged on a distorted timeline.
final class GPSPlayer: Sendable {
    let log: NMEAEpochs

    private struct State {
        var fake: GPSFake?
        /// The next epoch to release, and one past the last the attached gpsfake plays.
        var next = 0
        var end = 0
        /// Play up to (not including) this epoch.
        var target = 0
        var interval: Duration = .seconds(1)
        var due: ContinuousClock.Instant?
        var closed = false
    }

    private enum Action {
        case exit
        case idle
        case release(GPSFake, sentences: Int)
    }

    private let state = Mutex(State())

    /// Starts the player's thread, which holds on to the player until `close()`.
    init(log: NMEAEpochs) {
        self.log = log
        Thread.detachNewThread { [self] in run() }
    }

    /// Plays `epochs` of the log through `fake` from now on (nothing until `play`).
    func attach(_ fake: GPSFake, epochs: Range<Int>) {
        state.withLock { state in
            state.fake = fake
            state.next = epochs.lowerBound
            state.end = epochs.upperBound
            state.target = epochs.lowerBound
            state.due = nil
        }
    }

    /// Releases epochs up to and including `epoch`, one every `interval`, starting now.
    func play(through epoch: Int, every interval: Duration) {
        state.withLock { state in
            state.target = epoch + 1
            state.interval = interval
            state.due = nil
        }
    }

    /// The next epoch to be released.
    var next: Int { state.withLock { $0.next } }

    /// Waits until `epoch` was handed to gpsfake.
    func waitUntilReleased(through epoch: Int, timeout: Duration = .seconds(60)) async throws {
        guard await eventually(timeout: timeout, every: .milliseconds(10), { next > epoch }) else {
            throw FixtureError("epoch \(epoch) not played within \(timeout) (next: \(next))")
        }
    }

    /// Ends the player's thread and lets go of its gpsfake; nothing more is released.
    func close() {
        state.withLock { state in
            state.closed = true
            state.fake = nil
        }
    }

    private func run() {
        while true {
            let action = state.withLock { state -> Action in
                if state.closed { return .exit }
                guard let fake = state.fake, state.next < min(state.target, state.end) else { return .idle }
                let now = ContinuousClock.now
                let due = state.due ?? now
                guard due <= now else { return .idle }
                let sentences = log.sentences[state.next].count
                state.next += 1
                // A late thread (a loaded machine) does not catch up in a burst.
                state.due = max(due + state.interval, now + state.interval / 2)
                return .release(fake, sentences: sentences)
            }
            switch action {
            case .exit: return
            case .idle: usleep(2_000)
            case .release(let fake, let sentences): fake.release(sentences: sentences)
            }
        }
    }
}
