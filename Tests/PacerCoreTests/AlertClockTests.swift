import PacerCore
import Testing

/// The one format of every alert's times, "20:45 (3 min ago)", in the reader's zone.
@Suite(.timeLimit(.minutes(10))) struct AlertClockTests {
    static let now = Timestamp(iso8601: "2026-11-27T19:48:45Z")!
    static let rome = try! ZoneOffsetsTests.zone("Europe/Rome")
    static let losAngeles = try! ZoneOffsetsTests.zone("America/Los_Angeles")

    static func ago(_ seconds: Int64) -> Timestamp { Timestamp(milliseconds: now.milliseconds - seconds * 1000) }

    @Test func theClockIsTheReadersAndTheAgeSaysHowLongAgo() {
        // 19:45:45Z is 20:45 in Rome in November (UTC+1).
        #expect(AlertClock.text(Self.ago(180), now: Self.now, zone: Self.rome) == "20:45 (3 min ago)")
        #expect(AlertClock.text(Self.ago(180), now: Self.now, zone: Self.losAngeles) == "11:45 (3 min ago)")
        #expect(AlertClock.text(Self.ago(180), now: Self.now, utcOffset: { _ in 3600 }) == "20:45 (3 min ago)")
        // No zone known: UTC, and it says so.
        #expect(AlertClock.text(Self.ago(180), now: Self.now, zone: nil) == "19:45 UTC (3 min ago)")
    }

    @Test func agesFromJustNowToDays() {
        let cases: [(Int64, String)] = [
            (0, "just now"), (9, "just now"), (-9, "just now"), (10, "10 s ago"), (89, "89 s ago"), (90, "1 min ago"),
            (3 * 60 + 59, "3 min ago"), (89 * 60, "89 min ago"), (90 * 60, "1 h 30 min ago"), (2 * 3600, "2 h ago"),
            (5 * 3600 + 59 * 60, "5 h 59 min ago"), (6 * 3600 + 30 * 60, "6 h ago"), (47 * 3600, "47 h ago"), (48 * 3600, "2 days ago"),
            (-300, "in 5 min"), (-3 * 86_400, "in 3 days"),
        ]
        for (seconds, text) in cases {
            #expect(AlertClock.age(milliseconds: seconds * 1000) == text, "\(seconds) s")
        }
        #expect(AlertClock.age(milliseconds: Int64.min).hasPrefix("in "))
        #expect(AlertClock.age(milliseconds: Int64.max).hasSuffix(" days ago"))
    }

    @Test func anotherDayIsNamed() {
        // The day is the reader's: yesterday in UTC, today in Rome; and the other way round.
        let early = Timestamp(iso8601: "2026-11-28T05:00:00Z")!
        #expect(AlertClock.text(Timestamp(iso8601: "2026-11-27T23:30:00Z")!, now: early, zone: Self.rome) == "00:30 (5 h 30 min ago)")
        #expect(AlertClock.text(Timestamp(iso8601: "2026-11-27T23:30:00Z")!, now: early, zone: nil) == "23:30 UTC on 27 Nov (5 h 30 min ago)")
        #expect(AlertClock.text(Timestamp(iso8601: "2026-11-27T22:50:00Z")!, now: early, zone: Self.rome) == "23:50 on 27 Nov (6 h ago)")
        #expect(AlertClock.text(Timestamp(iso8601: "2026-11-27T22:59:00Z")!, now: Timestamp(iso8601: "2026-11-27T23:01:00Z")!, zone: Self.rome)
            == "23:59 on 27 Nov (2 min ago)")
        #expect(AlertClock.text(Timestamp(iso8601: "2025-12-31T10:00:00Z")!, now: Timestamp(iso8601: "2026-01-02T10:00:00Z")!, zone: Self.rome)
            == "11:00 on 31 Dec 2025 (2 days ago)")
        #expect(AlertClock.text(Timestamp(iso8601: "2026-11-26T10:00:00Z")!, now: Self.now, zone: nil) == "10:00 UTC on 26 Nov (33 h ago)")
        // Summer time: Rome is UTC+2 in July.
        #expect(AlertClock.text(Timestamp(iso8601: "2026-07-01T18:45:00Z")!, now: Timestamp(iso8601: "2026-07-01T18:45:05Z")!, zone: Self.rome)
            == "20:45 (just now)")
        // Before 1970 and far ahead: still a clock, never a crash.
        #expect(AlertClock.text(Timestamp(milliseconds: -1), now: Timestamp(milliseconds: 0), zone: nil) == "23:59 UTC on 31 Dec 1969 (just now)")
    }

    @Test func aNameIsPlainTextOnOneLine() {
        #expect(WearerName.cleaned("  Anna \n\t Rossi  ") == "Anna Rossi")
        // Bidirectional overrides and isolates, zero-width characters, controls: gone.
        #expect(WearerName.cleaned("Anna\u{202E}issoR\u{2066}\u{200B}\u{0007}\u{2028}x") == "AnnaissoR x")
        #expect(WearerName.cleaned("\u{202E}\u{200F} \n") == nil)
        let long = WearerName.cleaned(String(repeating: "ab ", count: 40))
        #expect(long?.unicodeScalars.count == WearerName.maxLength && long?.hasSuffix(" ") == false)
        #expect(WearerName.cleaned(String(repeating: "é", count: 100))?.unicodeScalars.count == WearerName.maxLength)
        #expect(WearerName.firstHidden("Anna Rossi") == nil)
        #expect(WearerName.firstHidden("Anna\u{00A0}Rossi") == nil)
        #expect(WearerName.firstHidden("Anna\u{202E}") == "\u{202E}")
        #expect(WearerName.gsm7("Zoë Ørsted-Łukasiewicz", limit: 20) == "Zoe Ørsted-Lukasiewi")
        #expect(WearerName.gsm7("Anna [the] {boss}", limit: 40) == "Anna ?the? ?boss?")
        #expect(WearerName.gsm7("Анна", limit: 20) == nil)
        #expect(WearerName.gsm7("ΔΣ", limit: 20) == "ΔΣ")
    }
}
