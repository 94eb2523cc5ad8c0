/// What the uplink does with an outbox item after one attempt, from the server's answer alone:
/// pure, so the rules are tested without a network or a clock.
///
/// A permanent refusal (the server understood the request and will never take these bytes) sets
/// the item aside, so one bad chunk or position does not stop every later upload; everything
/// else is retried, the item staying first in line.
public enum UploadVerdict: Sendable, Equatable {
    /// 2xx: the server has it.
    case accepted
    /// Refused for good: keep it (with the server's reason) but never send it again.
    case setAside
    /// Try the same item again after this many seconds.
    case retry(afterSeconds: Double)

    /// Done with: accepted or set aside (either way the server answered as it will again).
    public var isSettled: Bool {
        if case .retry = self { false } else { true }
    }

    /// The statuses that say "these bytes will never be accepted": malformed (400), no such
    /// resource (404), a different body already stored under this id (409), too large (413), a
    /// media type not taken (415), or values out of range (422). 401 is not among them: a token
    /// can be fixed in the config and the backlog then drains.
    public static let permanentRefusals: Set<Int> = [400, 404, 409, 413, 415, 422]

    /// `status`: nil when no answer came (network error, timeout). `retryAfter`: the answer's
    /// Retry-After header, honoured on 429 (capped at the schedule's cap, never shorter than the
    /// backoff would wait; 5xx keep the plain backoff). `failures`: attempts failed in a row including this one.
    /// `random` in [0, 1) jitters the backoff; `now` resolves a Retry-After given as a date.
    public static func decide(status: Int?, retryAfter: String?, failures: Int, schedule: RetrySchedule, random: Double,
                              now: Timestamp) -> UploadVerdict {
        if let status {
            if (200..<300).contains(status) { return .accepted }
            if permanentRefusals.contains(status) { return .setAside }
        }
        let backoff = schedule.delay(afterFailures: failures, random: random)
        guard status == 429, let retryAfter, let asked = retryAfterSeconds(retryAfter, now: now) else {
            return .retry(afterSeconds: backoff)
        }
        return .retry(afterSeconds: min(schedule.capSeconds, max(backoff, asked)))
    }

    /// RFC 9110 §10.2.3: delay-seconds or an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`);
    /// nil for anything else. A date in the past is 0.
    public static func retryAfterSeconds(_ value: String, now: Timestamp) -> Double? {
        let text = value.trimmingSpaces
        if !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let seconds = Int(text) {
            return Double(seconds)
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date.seconds(since: now))
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate only: the one form RFC 9110 says senders generate.
    static func httpDate(_ text: String) -> Timestamp? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
            parts[1].utf8.count == 2, let day = Int64(parts[1]), (1...31).contains(day),
            let monthIndex = months.firstIndex(of: String(parts[2])),
            parts[3].utf8.count == 4, let year = Int64(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.utf8.count == 2 }),
            let hour = Int64(clock[0]), let minute = Int64(clock[1]), let second = Int64(clock[2]),
            hour < 24, minute < 60, second < 61
        else { return nil }
        let days = Timestamp.daysSinceEpoch(year: year, month: Int64(monthIndex + 1), day: day)
        return Timestamp(milliseconds: ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000)
    }
}

private extension String {
    var trimmingSpaces: String {
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { $0 != 32 && $0 != 9 }), let last = bytes.lastIndex(where: { $0 != 32 && $0 != 9 }) else {
            return ""
        }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
