/// Reconnect delays: doubling from `minimum` to `maximum`, for as long as the daemon runs (no
/// attempt limit: a strap that comes back must be picked up again, however late).
struct Backoff: Sendable {
    let minimum: Duration
    let maximum: Duration
    private var current: Duration?

    init(minimum: Duration, maximum: Duration) {
        self.minimum = minimum
        self.maximum = maximum
    }

    mutating func next() -> Duration {
        let delay = current.map { min($0 * 2, maximum) } ?? minimum
        current = delay
        return delay
    }

    mutating func reset() { current = nil }
}
