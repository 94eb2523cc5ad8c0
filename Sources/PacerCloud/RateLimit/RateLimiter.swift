import Synchronization
import Threads

/// `TokenBuckets` shared by concurrent requests, reading the time from an injected clock
/// (CLOCK_MONOTONIC in the server, a stepped one in tests). One lock per limiter; a request
/// holds it for one dictionary update.
public final class RateLimiter: Sendable {
    public let limit: RateLimit
    private let buckets: Mutex<TokenBuckets<String>>
    private let now: @Sendable () -> Duration

    /// `evictsInUse`: as `TokenBuckets` (false for keys that exist, such as accounts).
    public init(_ limit: RateLimit, maxKeys: Int = 10_000, evictsInUse: Bool = true,
                now: @escaping @Sendable () -> Duration = RateLimiter.monotonicNow) {
        self.limit = limit
        buckets = Mutex(TokenBuckets(limit: limit, maxKeys: maxKeys, evictsInUse: evictsInUse))
        self.now = now
    }

    /// Buckets held now (for the memory bound's tests).
    public var count: Int { buckets.withLock { $0.count } }

    public func take(_ key: String, cost: Double = 1) -> RateDecision {
        let time = now()
        return buckets.withLock { $0.take(key, cost: cost, now: time) }
    }

    /// CLOCK_MONOTONIC (Threads' `MonotonicTime`, the device's clock): any fixed origin does.
    public static let monotonicNow: @Sendable () -> Duration = { MonotonicTime.now() }
}
