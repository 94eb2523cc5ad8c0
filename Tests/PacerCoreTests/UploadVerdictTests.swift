import Testing
@testable import PacerCore

/// What the uplink does after one attempt (issue 19): a permanent refusal sets the item aside,
/// everything else is retried; a 429's Retry-After is honoured, capped.
@Suite(.timeLimit(.minutes(10))) struct UploadVerdictTests {
    let schedule = RetrySchedule(firstSeconds: 1, capSeconds: 300)
    let now = Timestamp(iso8601: "2026-05-10T07:30:00Z")!

    func decide(_ status: Int?, retryAfter: String? = nil, failures: Int = 1, random: Double = 0.5) -> UploadVerdict {
        UploadVerdict.decide(status: status, retryAfter: retryAfter, failures: failures, schedule: schedule, random: random, now: now)
    }

    @Test func twoHundredsAreAccepted() {
        for status in [200, 201, 204] { #expect(decide(status) == .accepted) }
    }

    @Test func permanentRefusalsAreSetAsideWhateverTheHistory() {
        for status in [400, 404, 409, 413, 415, 422] {
            #expect(decide(status) == .setAside, "\(status)")
            #expect(decide(status, retryAfter: "5", failures: 9) == .setAside, "\(status)")
        }
    }

    /// The token (401), a timeout (408), too many requests (429), other 4xx, 5xx and no answer at
    /// all are retried with the jittered exponential backoff.
    @Test func everythingElseIsRetriedWithTheBackoff() {
        for status in [401, 403, 408, 429, 500, 502, 503, 504, nil] as [Int?] {
            #expect(decide(status, failures: 1, random: 0.5) == .retry(afterSeconds: 0.75), "\(String(describing: status))")
            #expect(decide(status, failures: 4, random: 0) == .retry(afterSeconds: 4), "\(String(describing: status))")
            #expect(decide(status, failures: 20, random: 0.999_999).isSettled == false)
        }
        #expect(decide(503, failures: 20, random: 0) == .retry(afterSeconds: 150))
    }

    @Test func aTooManyRequestsWaitsAsLongAsTheServerAsks() {
        #expect(decide(429, retryAfter: "7") == .retry(afterSeconds: 7))
        #expect(decide(429, retryAfter: " 7 ") == .retry(afterSeconds: 7))
        // Never shorter than the backoff already is, never past the cap.
        #expect(decide(429, retryAfter: "0", failures: 4, random: 0) == .retry(afterSeconds: 4))
        #expect(decide(429, retryAfter: "86400") == .retry(afterSeconds: 300))
        #expect(decide(429, retryAfter: "99999999999999999999") == .retry(afterSeconds: 0.75), "unreadable: the backoff")
        // An HTTP date, 2 minutes from now; one in the past is no extra wait.
        #expect(decide(429, retryAfter: "Sun, 10 May 2026 07:32:00 GMT") == .retry(afterSeconds: 120))
        #expect(decide(429, retryAfter: "Sun, 10 May 2026 07:00:00 GMT") == .retry(afterSeconds: 0.75))
        for garbage in ["", "soon", "-5", "1.5", "Sunday, 10-May-26 07:32:00 GMT", "Sun, 10 May 2026 07:32:00 CET"] {
            #expect(decide(429, retryAfter: garbage) == .retry(afterSeconds: 0.75), "\(garbage)")
        }
        // 5xx keep the plain backoff.
        #expect(decide(503, retryAfter: "60") == .retry(afterSeconds: 0.75))
    }

    @Test func readsIMFFixdates() {
        #expect(UploadVerdict.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == Timestamp(iso8601: "1994-11-06T08:49:37Z"))
        #expect(UploadVerdict.httpDate("Thu, 31 Dec 2099 23:59:59 GMT") == Timestamp(iso8601: "2099-12-31T23:59:59Z"))
        #expect(UploadVerdict.httpDate("Sun, 6 Nov 1994 08:49:37 GMT") == nil)
        #expect(UploadVerdict.httpDate("Sun, 06 Nov 1994 8:49:37 GMT") == nil)
        #expect(UploadVerdict.httpDate("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
    }
}
