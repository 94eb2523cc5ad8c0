/// When to try an upload again: exponential backoff with full jitter, capped (5 minutes by
/// default), so a fleet coming back online does not hit the server in step. The random number
/// is passed in: the core reads no clock and no entropy.
public struct RetrySchedule: Sendable, Equatable {
    public var firstSeconds: Double
    public var capSeconds: Double

    public init(firstSeconds: Double = 1, capSeconds: Double = 300) {
        self.firstSeconds = firstSeconds
        self.capSeconds = capSeconds
    }

    /// The wait before attempt `failures + 1`, given `failures` in a row so far (≥ 1) and a
    /// uniform random number in [0, 1): between half and all of min(cap, first × 2^(failures-1)).
    public func delay(afterFailures failures: Int, random: Double) -> Double {
        let exponent = Double(min(max(failures, 1) - 1, 30))
        let ceiling = min(capSeconds, firstSeconds * pow2(exponent))
        let r = min(max(random, 0), 1)
        return ceiling / 2 + ceiling / 2 * r
    }

    private func pow2(_ e: Double) -> Double {
        var v = 1.0
        for _ in 0..<Int(e) { v *= 2 }
        return v
    }
}
