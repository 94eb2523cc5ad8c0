import Testing
@testable import PacerCore

@Suite(.timeLimit(.minutes(10))) struct TimestampTests {
    @Test func formatsWithMilliseconds() {
        let t = Timestamp(iso8601: "2026-05-10T07:30:01Z")!
        #expect(t.iso8601 == "2026-05-10T07:30:01.000Z")
        #expect(Timestamp(milliseconds: 0).iso8601 == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(milliseconds: -1).iso8601 == "1969-12-31T23:59:59.999Z")
    }

    @Test func parsesFractionsAndRoundTrips() {
        #expect(Timestamp(iso8601: "2007-04-08T00:09:20.809Z")!.milliseconds % 1000 == 809)
        #expect(Timestamp(iso8601: "2026-11-22T04:02:54.1Z")!.milliseconds % 1000 == 100)
        for text in ["2000-02-29T12:00:00.000Z", "2026-12-31T23:59:59.999Z", "2044-01-01T00:00:00.000Z"] {
            #expect(Timestamp(iso8601: text)!.iso8601 == text)
        }
    }

    @Test func knownEpochValue() {
        // 2026-05-10T07:30:00Z is 1778398200 s after the Unix epoch.
        #expect(Timestamp(iso8601: "2026-05-10T07:30:00Z")!.milliseconds == 1_778_398_200_000)
    }

    @Test(arguments: ["", "2026-05-10", "2026-05-10T07:30:00", "2026-13-10T07:30:00Z", "2026-05-10T07:30:00+02:00",
                      "2026-05-10T07:30:00.Z", "garbage-that-is-long-enough", "2026-05-10T25:30:00Z"])
    func rejectsWhatItCannotReadExactly(_ text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }
}
