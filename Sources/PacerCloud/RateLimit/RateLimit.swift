/// One limit: at most `burst` requests at once, refilled evenly at `burst` per `period`. Written
/// `COUNT/SECONDS` in the configuration ("60/60": 60 at once, then one a second), or `off`.
public struct RateLimit: Sendable, Equatable, CustomStringConvertible {
    public var burst: Double
    public var period: Duration

    public init(burst: Double, period: Duration) {
        self.burst = burst
        self.period = period
    }

    /// Tokens added per second.
    var refillPerSecond: Double { burst / period.seconds }

    /// "60/60" or "5/1.5"; nil for anything else (zero, negative, not numbers).
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Double(parts[0]), let seconds = Double(parts[1]),
              count.isFinite, seconds.isFinite, count >= 1, seconds > 0, seconds <= 86_400 * 366 else { return nil }
        self.init(burst: count, period: .milliseconds(Int64((seconds * 1000).rounded(.up))))
    }

    public var description: String { "\(Self.figure(burst))/\(Self.figure(period.seconds))" }

    /// "60 in 60 s", for messages.
    public var phrase: String { "\(Self.figure(burst)) in \(Self.figure(period.seconds)) s" }

    private static func figure(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// What a limiter answers: go ahead, or wait `retryAfterSeconds` (whole seconds, at least 1, as
/// the Retry-After header takes them).
public enum RateDecision: Sendable, Equatable {
    case allowed
    case limited(retryAfterSeconds: Int)
}

/// Token buckets by key (a client address, a device, an account): pure, the time comes in with
/// every call, so tests step a clock instead of sleeping. A full bucket is the same as none and
/// is dropped when room is needed. With `evictsInUse` (keys anyone can make up: addresses), at
/// most `maxKeys` are kept and when every bucket is in use the least recently used half goes:
/// an attacker cycling addresses then resets buckets (which it could as well by using fresh
/// addresses) but cannot grow memory. Without it (keys that exist: accounts) a bucket in use is
/// never dropped, so no traffic for other keys can reset one; memory is bounded by the keys
/// that exist, and `maxKeys` only says when to look for full buckets to drop.
public struct TokenBuckets<Key: Hashable & Sendable>: Sendable {
    public let limit: RateLimit
    public let maxKeys: Int
    public let evictsInUse: Bool
    private var buckets: [Key: Bucket] = [:]
    /// The count at which full buckets are looked for next (a sweep is O(n): after one that
    /// freed little, the next waits until the table has doubled).
    private var sweepAt: Int

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: Duration
    }

    public init(limit: RateLimit, maxKeys: Int = 10_000, evictsInUse: Bool = true) {
        self.limit = limit
        self.maxKeys = max(2, maxKeys)
        self.evictsInUse = evictsInUse
        sweepAt = self.maxKeys
    }

    /// Buckets held now (for the memory bound's tests).
    public var count: Int { buckets.count }

    /// Takes `cost` tokens from `key`'s bucket at `now` (time since any fixed origin, the same for
    /// every call) when it holds that many; otherwise takes nothing and says how long until it
    /// will. A cost above the burst can never pass: it is answered with the time a full refill takes.
    public mutating func take(_ key: Key, cost: Double = 1, now: Duration) -> RateDecision {
        var bucket = buckets[key].map { refilled($0, now: now) } ?? Bucket(tokens: limit.burst, updated: now)
        guard bucket.tokens >= cost else {
            let missing = min(cost, limit.burst) - bucket.tokens
            let wait = cost > limit.burst ? limit.period.seconds : missing / limit.refillPerSecond
            if buckets[key] != nil { buckets[key] = bucket }
            // Rounded up, less a nanosecond of floating-point noise (1700.0000001 s is 1700 s).
            return .limited(retryAfterSeconds: max(1, Int((wait - 1e-9).rounded(.up))))
        }
        bucket.tokens -= cost
        if buckets[key] == nil, buckets.count >= sweepAt { makeRoom(now: now) }
        buckets[key] = bucket
        return .allowed
    }

    private func refilled(_ bucket: Bucket, now: Duration) -> Bucket {
        let elapsed = max(0, (now - bucket.updated).seconds)  // a clock never runs back here, but if it did: no refill
        return Bucket(tokens: min(limit.burst, bucket.tokens + elapsed * limit.refillPerSecond), updated: max(now, bucket.updated))
    }

    private mutating func makeRoom(now: Duration) {
        buckets = buckets.filter { refilled($0.value, now: now).tokens < limit.burst }
        guard evictsInUse else {
            sweepAt = max(maxKeys, buckets.count * 2)
            return
        }
        guard buckets.count >= maxKeys * 3 / 4 else { return }
        let newest = buckets.sorted { $0.value.updated > $1.value.updated }.prefix(maxKeys / 2)
        buckets = Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) })
    }
}

extension Duration {
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
