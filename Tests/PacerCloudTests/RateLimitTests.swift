import PacerCloud
import Synchronization
import Testing

/// The limiter itself: pure, the time stepped by the test, never slept.
@Suite("pacer-cloud: rate limiter", .timeLimit(.minutes(10)))
struct RateLimitTests {
    let minute = RateLimit(burst: 60, period: .seconds(60))

    @Test("a burst passes, the next is refused with the wait until one token is back")
    func burstThenRefused() {
        var buckets = TokenBuckets<String>(limit: minute)
        for _ in 0..<60 { #expect(buckets.take("a", now: .seconds(100)) == .allowed) }
        #expect(buckets.take("a", now: .seconds(100)) == .limited(retryAfterSeconds: 1))
        // A cost of 5 needs 5 tokens: 5 s at one a second.
        #expect(buckets.take("a", cost: 5, now: .seconds(100)) == .limited(retryAfterSeconds: 5))
        // Refused requests take nothing: after 1 s exactly one more passes.
        #expect(buckets.take("a", now: .seconds(101)) == .allowed)
        #expect(buckets.take("a", now: .seconds(101)) == .limited(retryAfterSeconds: 1))
        // Another key has its own bucket.
        #expect(buckets.take("b", now: .seconds(101)) == .allowed)
    }

    @Test("refills at burst per period, never above the burst")
    func refill() {
        var buckets = TokenBuckets<String>(limit: RateLimit(burst: 10, period: .seconds(100)))  // one per 10 s
        for _ in 0..<10 { #expect(buckets.take("k", now: .zero) == .allowed) }
        #expect(buckets.take("k", now: .seconds(5)) == .limited(retryAfterSeconds: 5))
        #expect(buckets.take("k", now: .seconds(10)) == .allowed)
        // An hour idle: back to 10, not 360.
        var passed = 0
        while buckets.take("k", now: .seconds(3610)) == .allowed { passed += 1 }
        #expect(passed == 10)
    }

    @Test("a cost above the burst never passes and says so with a full period")
    func costAboveBurst() {
        var buckets = TokenBuckets<String>(limit: RateLimit(burst: 3, period: .seconds(30)))
        #expect(buckets.take("k", cost: 4, now: .zero) == .limited(retryAfterSeconds: 30))
        #expect(buckets.take("k", cost: 3, now: .zero) == .allowed)
    }

    @Test("an attacker cycling 100,000 addresses cannot grow it past maxKeys, and a busy key keeps its state")
    func boundedMemory() {
        var buckets = TokenBuckets<String>(limit: RateLimit(burst: 2, period: .seconds(3600)), maxKeys: 1000)
        #expect(buckets.take("victim", now: .zero) == .allowed)
        #expect(buckets.take("victim", now: .zero) == .allowed)
        var largest = 0
        for i in 0..<100_000 {
            _ = buckets.take("198.51.\(i / 256).\(i % 256)", now: .milliseconds(Int64(i)))
            largest = max(largest, buckets.count)
            if i % 400 == 0 { _ = buckets.take("victim", now: .milliseconds(Int64(i))) }  // keeps being used
        }
        #expect(largest <= 1000)
        // Still limited: its bucket, recently used, was not among those dropped.
        #expect(buckets.take("victim", now: .seconds(100)) == .limited(retryAfterSeconds: 1700))
    }

    @Test("full (idle) buckets are dropped first")
    func idleDroppedFirst() {
        var buckets = TokenBuckets<String>(limit: RateLimit(burst: 1, period: .seconds(1)), maxKeys: 10)
        for i in 0..<10 { _ = buckets.take("k\(i)", now: .zero) }
        #expect(buckets.count == 10)
        _ = buckets.take("new", now: .seconds(5))  // every old bucket has refilled: all go
        #expect(buckets.count == 1)
    }

    @Test("COUNT/SECONDS parses; zero, negative and junk do not")
    func parsing() {
        #expect(RateLimit(parsing: "60/60") == RateLimit(burst: 60, period: .seconds(60)))
        #expect(RateLimit(parsing: "5/1.5") == RateLimit(burst: 5, period: .milliseconds(1500)))
        #expect(RateLimit(parsing: "60/60")?.description == "60/60")
        for bad in ["", "60", "0/60", "60/0", "-1/60", "60/-1", "a/b", "60/60/60", "nan/60", "inf/1", "1/1e30"] {
            #expect(RateLimit(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test("the shared limiter reads the injected clock")
    func injectedClock() {
        let clock = SteppedClock()
        let limiter = RateLimiter(RateLimit(burst: 1, period: .seconds(10)), now: clock.now)
        #expect(limiter.take("k") == .allowed)
        #expect(limiter.take("k") == .limited(retryAfterSeconds: 10))
        clock.advance(.seconds(7))
        #expect(limiter.take("k") == .limited(retryAfterSeconds: 3))
        clock.advance(.seconds(3))
        #expect(limiter.take("k") == .allowed)
    }
}

@Suite("pacer-cloud: the client's address behind a proxy", .timeLimit(.minutes(10)))
struct ClientAddressTests {
    let proxy: Set<String> = ["10.0.0.5"]

    @Test("X-Forwarded-For from an untrusted peer is ignored: the peer is the client")
    func spoofedFromUntrustedPeer() {
        #expect(ClientAddress.resolve(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"], trustedProxies: proxy) == "203.0.113.9")
        #expect(ClientAddress.resolve(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"], trustedProxies: []) == "203.0.113.9")
    }

    @Test("from a trusted proxy the rightmost address not itself a trusted proxy is the client")
    func fromTrustedProxy() {
        #expect(ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["198.51.100.1"], trustedProxies: proxy) == "198.51.100.1")
        // The client put a fake first entry; the proxy appended the real one: the real one counts.
        #expect(ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["1.2.3.4, 198.51.100.1"], trustedProxies: proxy) == "198.51.100.1")
        #expect(ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["1.2.3.4", "198.51.100.1"], trustedProxies: proxy) == "198.51.100.1")
        // Two proxies in a row, both trusted.
        #expect(ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["198.51.100.1, 10.0.0.6"],
                                      trustedProxies: ["10.0.0.5", "10.0.0.6"]) == "198.51.100.1")
        // No header: the proxy itself.
        #expect(ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: [], trustedProxies: proxy) == "10.0.0.5")
        // Junk right of the client: nothing left of it is believed.
        #expect(ClientAddress.resolve(peer: "10.0.0.5", forwardedFor: ["198.51.100.1, evil"], trustedProxies: proxy) == "10.0.0.5")
    }

    @Test("addresses are compared in one spelling")
    func normalized() {
        #expect(ClientAddress.normalized("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(ClientAddress.normalized("2001:db8:0:0::1") == "2001:db8::1")
        #expect(ClientAddress.normalized("example.org") == nil)
        #expect(ClientAddress.normalized("192.0.2.1:80") == nil)
        #expect(ClientAddress.resolve(peer: "::ffff:10.0.0.5", forwardedFor: ["198.51.100.1"], trustedProxies: proxy) == "198.51.100.1")
    }
}

/// A clock the test moves.
final class SteppedClock: Sendable {
    private let elapsed = Mutex<Duration>(.zero)
    var now: @Sendable () -> Duration { { [self] in elapsed.withLock { $0 } } }
    func advance(_ by: Duration) { elapsed.withLock { $0 += by } }
}
