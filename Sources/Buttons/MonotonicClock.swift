import Threads

/// CLOCK_MONOTONIC, the clock of every key event's `time`. Gesture timing must use the same clock
/// for its deadlines (`ButtonGestureClassifier.advance(to:)`), so the daemon reads it here.
public enum MonotonicClock {
    public static func now() -> Duration {
        .nanoseconds(Int64(MonotonicTime.nanoseconds()))
    }
}
