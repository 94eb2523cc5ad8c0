@testable import CloudModel
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import PacerCloud
import PacerContract
import PacerTestSupport
import Testing

/// The calendar of runs (#33): days in the account's time zone, other sports marked, the
/// month's totals per sport, another account's runs never shown, a bad month a 400 naming it.
@Suite("pacer-cloud: the calendar of runs", .timeLimit(.minutes(10)))
struct CalendarTests {
    /// Tuesday 12 May 2026, 10:00 UTC.
    static let now: Int64 = 1_778_580_000_000

    @Test("runs on their days in the account's zone, a ride marked and totalled apart, the month's totals; nobody else's; bad months 400",
          arguments: Backend.allCases)
    func calendar(backend: Backend) async throws {
        try await Cloud.with(backend, configuration: WebConfig.make(), wallClock: { Self.now }) { cloud in
            let browser = Browser(cloud)
            let (token, _) = try await RunnerPageTests.runner(cloud, browser, timezone: "Europe/Rome")
            let sunday = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 5_000))
            // 31 May 22:30 UTC is 1 June, 00:30 in Rome: June's, not May's.
            let lateStart = Track.start + 21 * 86_400_000 + 15 * 3_600_000
            let late = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 3_000, startMs: lateStart))
            let ride = try await RunnerPageTests.upload(cloud, token: token, RunnerPageTests.run(meters: 12_000, paceS: 120,
                                                                                                   startMs: Track.start + 86_400_000))
            #expect(try await browser.post("/runs/\(ride)/edit", ["title": "", "sport": "ride", "visibility": "private"]).status == .seeOther)

            let may = try await browser.get("/calendar?month=2026-05")
            #expect(may.status == .ok)
            #expect(may.text.contains(#"<b id="month-label">May 2026</b>"#))
            #expect(may.text.contains(#"href="/runs/\#(sunday)" aria-label="Run, Sun 10 May, 09:30, 5.0 km">5.0 km</a>"#), "\(may.text)")
            #expect(may.text.contains(#"<a class="r other" href="/runs/\#(ride)" aria-label="Ride, Mon 11 May, 09:30, 12.0 km">Ride 12.0 km</a>"#))
            #expect(!may.text.contains(late), "1 June in Rome is not May's")
            #expect(may.text.contains("<b>Run</b>: 1, 5.00 km") && may.text.contains("<b>Ride</b>: 1, 12.00 km"), "runs and rides totalled apart")
            #expect(may.text.contains(#"rel="prev">"#) && may.text.contains("month=2026-04") && may.text.contains("month=2026-06"))
            let june = try await browser.get("/calendar?month=2026-06")
            #expect(june.text.contains(#"aria-label="Run, Mon 1 Jun, 00:30, 3.0 km""#))
            // Today's month by default, in the account's zone.
            #expect(try await browser.get("/calendar").text.contains(#"<b id="month-label">May 2026</b>"#))
            #expect(try await browser.get("/runs").text.contains(#"href="/calendar""#), "the runs list leads to it")
            // An empty month says what to do next.
            let empty = try await browser.get("/calendar?month=2025-01")
            #expect(empty.status == .ok && empty.text.contains("Nothing this month") && empty.text.contains(#"href="/import""#))

            for bad in ["2026-13", "+026-05", "2026-5", "abcd-ef", "2026-00", "0000-01", "2026-05-01", "%00"] {
                let refused = try await browser.get("/calendar?month=\(bad)")
                #expect(refused.status == .badRequest && refused.text.contains("Month: "), "\(bad): \(refused.status)")
            }
            // Bob sees none of Ann's runs.
            let bob = Browser(cloud)
            _ = try await RunnerPageTests.runner(cloud, bob, email: "bob@example.org", device: "bob-pacer")
            let bobs = try await bob.get("/calendar?month=2026-05")
            #expect(bobs.status == .ok && !bobs.text.contains(sunday) && !bobs.text.contains(ride) && bobs.text.contains("Nothing this month"))
        }
    }
}
